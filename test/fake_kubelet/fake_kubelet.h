// A fake kubelet device manager for integration tests: the v1beta1
// Registration server on <dir>/kubelet.sock and a DevicePlugin client per
// registered resource, over real unix-socket gRPC.
//
// It behaves as kubelet does (shared/reference/kubelet-contract.md §1-7):
//  - Register checks the version ("v1beta1") and the resource name
//    (IsExtendedResourceName) and fails with kubelet's exact message texts
//    (gRPC code UNKNOWN, as grpc-go sends a plain Go error);
//  - it dials <dir>/<endpoint> with a 10 s deadline and calls
//    GetDevicePluginOptions before Register returns;
//  - it then runs ListAndWatch on a background thread, recording every
//    message; each message replaces the resource's device list wholesale;
//  - a later Register for the same resource takes over (last writer wins);
//    the older stream is left to end when the plugin closes it;
//  - Restart() is a kubelet restart: every connection drops; after the down
//    time the new kubelet deletes every socket file in the directory except
//    kubelet_internal_checkpoint (CleanupPluginDirectory: names are read
//    first, then removed) and creates kubelet.sock anew.
//
// Thread-safety: every public method may be called from any thread. The
// stream threads are owned by the FakeKubelet and joined by Stop() and the
// destructor; there are no detached threads.
#ifndef HCUDP_TEST_FAKE_KUBELET_FAKE_KUBELET_H_
#define HCUDP_TEST_FAKE_KUBELET_FAKE_KUBELET_H_

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "deviceplugin_v1beta1.grpc.pb.h"

namespace hcudp::testing {

// kubelet's validation of a RegisterRequest (server.go Register, steps 2-3):
// the error text kubelet returns, or "" when the request is acceptable.
std::string KubeletRegisterError(const v1beta1::RegisterRequest& request);

// kubelet's v1helper.IsExtendedResourceName.
bool IsExtendedResourceName(const std::string& name);

// kubelet's CleanupPluginDirectory: removes every socket file in `dir` except
// kubelet_internal_checkpoint; regular files and subdirectories stay. Like
// kubelet it lists the directory first and then removes, so a socket created
// during the cleanup is not removed. Returns the names removed.
std::vector<std::string> CleanupPluginDirectory(const std::string& dir);

// What the fake kubelet knows about one resource.
struct ResourceSnapshot {
  std::string resource;
  std::string endpoint;  // socket base name from the latest RegisterRequest
  v1beta1::DevicePluginOptions options;  // as fetched during the latest Register
  std::vector<v1beta1::Device> devices;  // latest ListAndWatch list (any stream)
  int registrations = 0;                 // successful Register calls
  int messages = 0;                      // ListAndWatch messages, all streams
  int current_stream_messages = 0;       // messages on the latest registration's stream
  bool current_stream_open = false;      // latest registration's stream still running
  // The first message of the latest registration's stream, and how long
  // after the registration it arrived (-1 before it has).
  std::vector<v1beta1::Device> current_stream_first_devices;
  long current_stream_first_message_ms = -1;
  int stream_ends = 0;                   // streams that ended, all registrations
  std::string last_stream_status;        // how the latest ended stream ended
};

// One Register call as received, accepted or not.
struct RegisterAttempt {
  v1beta1::RegisterRequest request;
  std::string error;  // "" when accepted
};

class FakeKubelet {
 public:
  struct Config {
    std::string plugin_dir;                                // kubelet's device-plugin directory
    std::chrono::milliseconds dial_timeout{10000};         // kubelet: 10 s
    std::chrono::milliseconds rpc_timeout{10000};          // our test calls to the plugin
  };

  explicit FakeKubelet(Config config);
  ~FakeKubelet();
  FakeKubelet(const FakeKubelet&) = delete;
  FakeKubelet& operator=(const FakeKubelet&) = delete;

  // Creates the directory, cleans it up as kubelet does at start and serves
  // Registration on kubelet.sock. Returns "" or an error text.
  std::string Start();
  // Stops serving and drops every plugin connection (streams are cancelled),
  // as a kubelet process exit would. kubelet.sock is left as a stale file.
  void Stop();
  // A kubelet restart: Stop(), wait `down_time`, Start() (which cleans up).
  std::string Restart(std::chrono::milliseconds down_time = std::chrono::milliseconds(20));

  const std::string& plugin_dir() const { return config_.plugin_dir; }
  std::string kubelet_socket() const { return config_.plugin_dir + "/kubelet.sock"; }

  // Waits until `predicate(snapshot)` holds for `resource`; returns the
  // snapshot that satisfied it, or nullopt on timeout.
  std::optional<ResourceSnapshot> WaitFor(
      const std::string& resource,
      const std::function<bool(const ResourceSnapshot&)>& predicate,
      std::chrono::milliseconds timeout);
  // At least `count` registrations and a first ListAndWatch message on the
  // latest one.
  std::optional<ResourceSnapshot> WaitForRegistration(const std::string& resource,
                                                      std::chrono::milliseconds timeout,
                                                      int count = 1);
  // The latest device list satisfies `predicate` (after at least one message).
  std::optional<ResourceSnapshot> WaitForDevices(
      const std::string& resource,
      const std::function<bool(const std::vector<v1beta1::Device>&)>& predicate,
      std::chrono::milliseconds timeout);

  std::optional<ResourceSnapshot> Snapshot(const std::string& resource) const;
  std::vector<std::string> Resources() const;  // registered resource names, sorted
  std::vector<RegisterAttempt> RegisterLog() const;

  // RPCs on the latest registration's connection, as kubelet makes them.
  // `ids_per_container` has one entry per ContainerAllocateRequest.
  grpc::Status Allocate(const std::string& resource,
                        const std::vector<std::vector<std::string>>& ids_per_container,
                        v1beta1::AllocateResponse* response);
  grpc::Status GetPreferredAllocation(const std::string& resource,
                                      const std::vector<std::string>& available,
                                      const std::vector<std::string>& must_include,
                                      int allocation_size,
                                      v1beta1::PreferredAllocationResponse* response);
  // Calls GetDevicePluginOptions now (not the cached value).
  grpc::Status GetOptions(const std::string& resource, v1beta1::DevicePluginOptions* options);
  // Ends the latest registration's ListAndWatch stream from kubelet's side.
  // Returns false when there is no open stream.
  bool CancelStream(const std::string& resource);

 private:
  class RegistrationService;
  struct PluginClient;  // one Register's connection and its stream thread
  struct Resource {
    ResourceSnapshot snapshot;
    std::shared_ptr<PluginClient> current;
  };

  // kubelet's Register: validate, dial, GetDevicePluginOptions, start the
  // stream. Runs on a gRPC server thread.
  grpc::Status HandleRegister(const v1beta1::RegisterRequest& request);
  grpc::Status Connect(const v1beta1::RegisterRequest& request);
  void RunStream(std::shared_ptr<PluginClient> client);
  std::shared_ptr<PluginClient> CurrentClient(const std::string& resource) const;
  // Cancels and joins every client; used by Stop and the destructor.
  void DropAllClients();

  const Config config_;
  std::unique_ptr<RegistrationService> service_;
  std::unique_ptr<grpc::Server> server_;  // owned by the caller's thread (Start/Stop)

  mutable std::mutex mu_;
  std::condition_variable changed_;
  bool stopping_ = false;                                 // guarded by mu_
  std::map<std::string, Resource> resources_;             // guarded by mu_
  std::vector<std::shared_ptr<PluginClient>> clients_;    // guarded by mu_; all, for joining
  std::vector<RegisterAttempt> register_log_;             // guarded by mu_
};

}  // namespace hcudp::testing

#endif  // HCUDP_TEST_FAKE_KUBELET_FAKE_KUBELET_H_
