#include "plugin_client.h"

#include <grpcpp/grpcpp.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

namespace hcuctl {
namespace {

constexpr std::string_view kSocketPrefix = "hygon.com_";

std::chrono::system_clock::time_point Deadline(int timeout_ms) {
  return std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms);
}

hcudp::Status FromGrpc(const grpc::Status& s, std::string_view what) {
  return hcudp::Status(static_cast<hcudp::StatusCode>(s.error_code()),
                       std::string(what) + ": " + s.error_message());
}

}  // namespace

hcudp::StatusOr<std::vector<PluginSocket>> FindPluginSockets(const std::string& dir) {
  std::error_code ec;
  std::vector<PluginSocket> found;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) {
    return hcudp::NotFoundError("cannot read device-plugin directory " + dir + ": " +
                                ec.message() + " (set --device-plugin-path)");
  }
  for (const auto& entry : it) {
    std::string name = entry.path().filename().string();
    if (name.rfind(kSocketPrefix, 0) != 0) continue;
    struct stat st {};
    if (stat(entry.path().c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    std::string last = name.substr(kSocketPrefix.size());
    if (auto at = last.find('@'); at != std::string::npos) {
      last = last.substr(0, at);
    } else if (last.size() > 5 && last.compare(last.size() - 5, 5, ".sock") == 0) {
      last = last.substr(0, last.size() - 5);
    }
    found.push_back({entry.path().string(), "hygon.com/" + last});
  }
  std::sort(found.begin(), found.end(),
            [](const PluginSocket& a, const PluginSocket& b) { return a.path < b.path; });
  return found;
}

hcudp::StatusOr<PluginSocket> FindPluginSocket(const std::string& dir,
                                               const std::string& resource) {
  std::string want = resource.find('/') == std::string::npos ? "hygon.com/" + resource : resource;
  auto sockets = FindPluginSockets(dir);
  if (!sockets.ok()) return sockets.status();
  std::string there;
  for (const PluginSocket& s : *sockets) {
    if (s.resource == want) return s;
    there += (there.empty() ? "" : ", ") + s.resource;
  }
  return hcudp::NotFoundError("no plugin serves " + want + " in " + dir +
                              (there.empty() ? " (no hygon.com_* sockets)" : "; serving: " + there));
}

std::string UnixTarget(const std::string& socket_path) { return "unix:" + socket_path; }

PluginClient::PluginClient(const std::string& socket_path) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(16 * 1024 * 1024);
  stub_ = v1beta1::DevicePlugin::NewStub(grpc::CreateCustomChannel(
      UnixTarget(socket_path), grpc::InsecureChannelCredentials(), args));
}

hcudp::StatusOr<v1beta1::DevicePluginOptions> PluginClient::Options(int timeout_ms) {
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline(timeout_ms));
  ctx.set_wait_for_ready(false);
  v1beta1::DevicePluginOptions out;
  grpc::Status s = stub_->GetDevicePluginOptions(&ctx, v1beta1::Empty(), &out);
  if (!s.ok()) return FromGrpc(s, "GetDevicePluginOptions");
  return out;
}

hcudp::StatusOr<std::vector<v1beta1::Device>> PluginClient::Devices(int timeout_ms) {
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline(timeout_ms));
  auto reader = stub_->ListAndWatch(&ctx, v1beta1::Empty());
  v1beta1::ListAndWatchResponse first;
  if (!reader->Read(&first)) {
    ctx.TryCancel();
    return FromGrpc(reader->Finish(), "ListAndWatch");
  }
  ctx.TryCancel();
  reader->Finish();
  return std::vector<v1beta1::Device>(first.devices().begin(), first.devices().end());
}

hcudp::StatusOr<v1beta1::PreferredAllocationResponse> PluginClient::Preferred(
    const v1beta1::PreferredAllocationRequest& request, int timeout_ms) {
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline(timeout_ms));
  v1beta1::PreferredAllocationResponse out;
  grpc::Status s = stub_->GetPreferredAllocation(&ctx, request, &out);
  if (!s.ok()) return FromGrpc(s, "GetPreferredAllocation");
  return out;
}

hcudp::StatusOr<v1beta1::AllocateResponse> PluginClient::Allocate(
    const v1beta1::AllocateRequest& request, int timeout_ms) {
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline(timeout_ms));
  v1beta1::AllocateResponse out;
  grpc::Status s = stub_->Allocate(&ctx, request, &out);
  if (!s.ok()) return FromGrpc(s, "Allocate");
  return out;
}

}  // namespace hcuctl
