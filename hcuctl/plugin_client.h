// Talking to running device-plugin sockets the way kubelet does, for the
// plugins and allocate commands.
#ifndef HCUCTL_PLUGIN_CLIENT_H_
#define HCUCTL_PLUGIN_CLIENT_H_

#include <memory>
#include <string>
#include <vector>

#include "deviceplugin_v1beta1.grpc.pb.h"
#include "hcudp/status.h"

namespace hcuctl {

// The gRPC target for a unix socket path, absolute or relative to the current
// directory: "unix:<path>" ("unix://dp/x" would read "dp" as an authority).
std::string UnixTarget(const std::string& socket_path);

// A hygon.com_* socket found in the device-plugin directory.
struct PluginSocket {
  std::string path;       // absolute socket path
  std::string resource;   // "hygon.com/hcu-share-15c-8g"
};

// Sockets named hygon.com_<last-name>[@<instance>][.sock] in `dir`, sorted.
hcudp::StatusOr<std::vector<PluginSocket>> FindPluginSockets(const std::string& dir);
// The socket serving `resource` ("hygon.com/hcu" or "hcu"); NotFound lists
// the resources that are there.
hcudp::StatusOr<PluginSocket> FindPluginSocket(const std::string& dir, const std::string& resource);

class PluginClient {
 public:
  explicit PluginClient(const std::string& socket_path);

  hcudp::StatusOr<v1beta1::DevicePluginOptions> Options(int timeout_ms);
  // The first ListAndWatch message (the full list), then the stream is closed.
  hcudp::StatusOr<std::vector<v1beta1::Device>> Devices(int timeout_ms);
  hcudp::StatusOr<v1beta1::PreferredAllocationResponse> Preferred(
      const v1beta1::PreferredAllocationRequest& request, int timeout_ms);
  hcudp::StatusOr<v1beta1::AllocateResponse> Allocate(const v1beta1::AllocateRequest& request,
                                                      int timeout_ms);

 private:
  std::unique_ptr<v1beta1::DevicePlugin::Stub> stub_;
};

}  // namespace hcuctl

#endif  // HCUCTL_PLUGIN_CLIENT_H_
