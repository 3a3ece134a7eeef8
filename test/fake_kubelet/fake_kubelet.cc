#include "fake_kubelet/fake_kubelet.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <string_view>

#include "testing/testutil.h"

namespace hcudp::testing {
namespace {

namespace fs = std::filesystem;
using SteadyClock = std::chrono::steady_clock;

// gRPC deadlines are system_clock time points.
constexpr char kSupportedVersion[] = "v1beta1";
constexpr char kCheckpointFile[] = "kubelet_internal_checkpoint";

// Go's strconv.Quote for the ASCII subset our tests send.
std::string GoQuote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// One DNS-1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool IsDns1123Label(std::string_view s) {
  if (s.empty() || !IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

// k8s.io/apimachinery validation.IsDNS1123Subdomain: labels joined by '.'.
bool IsDns1123Subdomain(const std::string& s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  for (;;) {
    size_t dot = s.find('.', start);
    std::string_view label(s.data() + start, (dot == std::string::npos ? s.size() : dot) - start);
    if (!IsDns1123Label(label)) return false;
    if (dot == std::string::npos) return true;
    start = dot + 1;
  }
}

// k8s.io/apimachinery validation.IsQualifiedName: [prefix/]name, where name
// is ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] of at most 63 characters.
bool IsQualifiedName(const std::string& value) {
  std::string name = value;
  size_t slash = value.find('/');
  if (slash != std::string::npos) {
    if (value.find('/', slash + 1) != std::string::npos) return false;
    if (!IsDns1123Subdomain(value.substr(0, slash))) return false;
    name = value.substr(slash + 1);
  }
  if (name.empty() || name.size() > 63 || !IsAlnum(name.front()) || !IsAlnum(name.back())) {
    return false;
  }
  for (char c : name) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

}  // namespace

bool IsExtendedResourceName(const std::string& name) {
  // IsNativeResource: unprefixed, or prefixed with kubernetes.io/.
  if (name.find('/') == std::string::npos) return false;
  if (name.find("kubernetes.io/") != std::string::npos) return false;
  if (name.rfind("requests.", 0) == 0) return false;
  return IsQualifiedName("requests." + name);
}

std::string KubeletRegisterError(const v1beta1::RegisterRequest& request) {
  if (request.version() != kSupportedVersion) {
    return "requested API version " + GoQuote(request.version()) +
           " is not supported by kubelet. Supported version is [\"v1beta1\"]";
  }
  if (!IsExtendedResourceName(request.resource_name())) {
    return "the ResourceName " + GoQuote(request.resource_name()) + " is invalid";
  }
  return "";
}

std::vector<std::string> CleanupPluginDirectory(const std::string& dir) {
  // As kubelet: read every name first, then stat and remove one by one, so a
  // socket created while the cleanup runs survives it.
  std::vector<std::string> names;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    names.push_back(entry.path().filename().string());
  }
  std::vector<std::string> removed;
  for (const std::string& name : names) {
    if (name == kCheckpointFile) continue;
    const std::string path = dir + "/" + name;
    struct stat st;
    if (stat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    std::error_code rm_ec;
    if (fs::remove(path, rm_ec)) removed.push_back(name);
  }
  std::sort(removed.begin(), removed.end());
  return removed;
}

struct FakeKubelet::PluginClient {
  std::string resource;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1beta1::DevicePlugin::Stub> stub;
  grpc::ClientContext stream_context;  // TryCancel ends the stream
  std::thread thread;                  // runs RunStream; joined by DropAllClients
  std::chrono::steady_clock::time_point registered_at;
};

class FakeKubelet::RegistrationService final : public v1beta1::Registration::Service {
 public:
  explicit RegistrationService(FakeKubelet* kubelet) : kubelet_(kubelet) {}

  grpc::Status Register(grpc::ServerContext* /*context*/, const v1beta1::RegisterRequest* request,
                        v1beta1::Empty* /*response*/) override {
    return kubelet_->HandleRegister(*request);
  }

 private:
  FakeKubelet* const kubelet_;
};

FakeKubelet::FakeKubelet(Config config)
    : config_(std::move(config)), service_(std::make_unique<RegistrationService>(this)) {}

FakeKubelet::~FakeKubelet() { Stop(); }

std::string FakeKubelet::Start() {
  std::error_code ec;
  fs::create_directories(config_.plugin_dir, ec);
  if (ec) return "cannot create " + config_.plugin_dir + ": " + ec.message();
  CleanupPluginDirectory(config_.plugin_dir);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = false;
  }
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + kubelet_socket(), grpc::InsecureServerCredentials());
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  if (server_ == nullptr) return "cannot serve on " + kubelet_socket();
  return "";
}

void FakeKubelet::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  if (server_ != nullptr) {
    // Register handlers still dialing see stopping_ and return.
    server_->Shutdown(GrpcDeadline(std::chrono::seconds(2)));
    server_.reset();
  }
  DropAllClients();
}

std::string FakeKubelet::Restart(std::chrono::milliseconds down_time) {
  Stop();
  std::this_thread::sleep_for(down_time);
  return Start();  // cleans the directory up first, as kubelet's start does
}

void FakeKubelet::DropAllClients() {
  std::vector<std::shared_ptr<PluginClient>> clients;
  {
    std::lock_guard<std::mutex> lock(mu_);
    clients.swap(clients_);
    for (auto& [name, resource] : resources_) {
      resource.current = nullptr;
      resource.snapshot.current_stream_open = false;
      resource.snapshot.current_stream_messages = 0;
      resource.snapshot.current_stream_first_devices.clear();
      resource.snapshot.current_stream_first_message_ms = -1;
    }
  }
  for (auto& client : clients) client->stream_context.TryCancel();
  for (auto& client : clients) {
    if (client->thread.joinable()) client->thread.join();
  }
  changed_.notify_all();
}

grpc::Status FakeKubelet::HandleRegister(const v1beta1::RegisterRequest& request) {
  std::string error = KubeletRegisterError(request);
  grpc::Status status =
      error.empty() ? Connect(request) : grpc::Status(grpc::StatusCode::UNKNOWN, error);
  std::lock_guard<std::mutex> lock(mu_);
  register_log_.push_back({request, status.ok() ? "" : status.error_message()});
  changed_.notify_all();
  return status;
}

grpc::Status FakeKubelet::Connect(const v1beta1::RegisterRequest& request) {
  auto client = std::make_shared<PluginClient>();
  client->resource = request.resource_name();
  grpc::ChannelArguments args;
  // One connection per registration, as kubelet's grpc-go client has.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  client->channel =
      grpc::CreateCustomChannel("unix:" + config_.plugin_dir + "/" + request.endpoint(),
                                grpc::InsecureChannelCredentials(), args);
  client->stub = v1beta1::DevicePlugin::NewStub(client->channel);

  const SteadyClock::time_point deadline = SteadyClock::now() + config_.dial_timeout;
  for (;;) {
    if (client->channel->WaitForConnected(GrpcDeadline(std::chrono::milliseconds(100)))) break;
    bool stopping;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping = stopping_;
    }
    if (stopping) return grpc::Status(grpc::StatusCode::UNKNOWN, "kubelet is shutting down");
    if (SteadyClock::now() >= deadline) {
      return grpc::Status(grpc::StatusCode::UNKNOWN,
                          "failed to dial device plugin: context deadline exceeded");
    }
  }

  v1beta1::DevicePluginOptions options;
  {
    grpc::ClientContext context;
    context.set_deadline(GrpcDeadline(config_.rpc_timeout));
    grpc::Status s = client->stub->GetDevicePluginOptions(&context, v1beta1::Empty(), &options);
    if (!s.ok()) {
      return grpc::Status(grpc::StatusCode::UNKNOWN,
                          "failed to get device plugin options: " + s.error_message());
    }
  }

  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return grpc::Status(grpc::StatusCode::UNKNOWN, "kubelet is shutting down");
  Resource& resource = resources_[request.resource_name()];
  ResourceSnapshot& snap = resource.snapshot;
  snap.resource = request.resource_name();
  snap.endpoint = request.endpoint();
  snap.options = options;
  snap.registrations++;
  snap.current_stream_messages = 0;
  snap.current_stream_open = true;
  snap.current_stream_first_devices.clear();
  snap.current_stream_first_message_ms = -1;
  client->registered_at = SteadyClock::now();
  resource.current = client;
  clients_.push_back(client);
  client->thread = std::thread([this, client] { RunStream(client); });
  changed_.notify_all();
  return grpc::Status::OK;
}

void FakeKubelet::RunStream(std::shared_ptr<PluginClient> client) {
  std::unique_ptr<grpc::ClientReader<v1beta1::ListAndWatchResponse>> reader =
      client->stub->ListAndWatch(&client->stream_context, v1beta1::Empty());
  v1beta1::ListAndWatchResponse message;
  while (reader->Read(&message)) {
    std::lock_guard<std::mutex> lock(mu_);
    Resource& resource = resources_[client->resource];
    resource.snapshot.devices.assign(message.devices().begin(), message.devices().end());
    resource.snapshot.messages++;
    if (resource.current == client && resource.snapshot.current_stream_messages++ == 0) {
      resource.snapshot.current_stream_first_devices = resource.snapshot.devices;
      resource.snapshot.current_stream_first_message_ms =
          static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                SteadyClock::now() - client->registered_at)
                                .count());
    }
    changed_.notify_all();
  }
  grpc::Status status = reader->Finish();
  std::lock_guard<std::mutex> lock(mu_);
  Resource& resource = resources_[client->resource];
  resource.snapshot.stream_ends++;
  resource.snapshot.last_stream_status =
      std::to_string(static_cast<int>(status.error_code())) + " " + status.error_message();
  if (resource.current == client) resource.snapshot.current_stream_open = false;
  changed_.notify_all();
}

std::optional<ResourceSnapshot> FakeKubelet::WaitFor(
    const std::string& resource, const std::function<bool(const ResourceSnapshot&)>& predicate,
    std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  std::optional<ResourceSnapshot> found;
  changed_.wait_for(lock, timeout, [&] {
    auto it = resources_.find(resource);
    if (it == resources_.end() || !predicate(it->second.snapshot)) return false;
    found = it->second.snapshot;
    return true;
  });
  return found;
}

std::optional<ResourceSnapshot> FakeKubelet::WaitForRegistration(const std::string& resource,
                                                                 std::chrono::milliseconds timeout,
                                                                 int count) {
  return WaitFor(
      resource,
      [count](const ResourceSnapshot& s) {
        return s.registrations >= count && s.current_stream_messages > 0;
      },
      timeout);
}

std::optional<ResourceSnapshot> FakeKubelet::WaitForDevices(
    const std::string& resource,
    const std::function<bool(const std::vector<v1beta1::Device>&)>& predicate,
    std::chrono::milliseconds timeout) {
  return WaitFor(
      resource,
      [&predicate](const ResourceSnapshot& s) { return s.messages > 0 && predicate(s.devices); },
      timeout);
}

std::optional<ResourceSnapshot> FakeKubelet::Snapshot(const std::string& resource) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = resources_.find(resource);
  if (it == resources_.end()) return std::nullopt;
  return it->second.snapshot;
}

std::vector<std::string> FakeKubelet::Resources() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> names;
  for (const auto& [name, resource] : resources_) names.push_back(name);
  return names;
}

std::vector<RegisterAttempt> FakeKubelet::RegisterLog() const {
  std::lock_guard<std::mutex> lock(mu_);
  return register_log_;
}

std::shared_ptr<FakeKubelet::PluginClient> FakeKubelet::CurrentClient(
    const std::string& resource) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = resources_.find(resource);
  return it == resources_.end() ? nullptr : it->second.current;
}

namespace {
grpc::Status NotRegistered(const std::string& resource) {
  return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                      "fake kubelet: no plugin registered for " + resource);
}
}  // namespace

grpc::Status FakeKubelet::Allocate(const std::string& resource,
                                   const std::vector<std::vector<std::string>>& ids_per_container,
                                   v1beta1::AllocateResponse* response) {
  std::shared_ptr<PluginClient> client = CurrentClient(resource);
  if (client == nullptr) return NotRegistered(resource);
  v1beta1::AllocateRequest request;
  for (const auto& ids : ids_per_container) {
    v1beta1::ContainerAllocateRequest* container = request.add_container_requests();
    for (const std::string& id : ids) container->add_devices_ids(id);
  }
  grpc::ClientContext context;
  context.set_deadline(GrpcDeadline(config_.rpc_timeout));
  return client->stub->Allocate(&context, request, response);
}

grpc::Status FakeKubelet::GetPreferredAllocation(const std::string& resource,
                                                 const std::vector<std::string>& available,
                                                 const std::vector<std::string>& must_include,
                                                 int allocation_size,
                                                 v1beta1::PreferredAllocationResponse* response) {
  std::shared_ptr<PluginClient> client = CurrentClient(resource);
  if (client == nullptr) return NotRegistered(resource);
  v1beta1::PreferredAllocationRequest request;
  v1beta1::ContainerPreferredAllocationRequest* container = request.add_container_requests();
  for (const std::string& id : available) container->add_available_deviceids(id);
  for (const std::string& id : must_include) container->add_must_include_deviceids(id);
  container->set_allocation_size(allocation_size);
  grpc::ClientContext context;
  context.set_deadline(GrpcDeadline(config_.rpc_timeout));
  return client->stub->GetPreferredAllocation(&context, request, response);
}

grpc::Status FakeKubelet::GetOptions(const std::string& resource,
                                     v1beta1::DevicePluginOptions* options) {
  std::shared_ptr<PluginClient> client = CurrentClient(resource);
  if (client == nullptr) return NotRegistered(resource);
  grpc::ClientContext context;
  context.set_deadline(GrpcDeadline(config_.rpc_timeout));
  return client->stub->GetDevicePluginOptions(&context, v1beta1::Empty(), options);
}

bool FakeKubelet::CancelStream(const std::string& resource) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = resources_.find(resource);
  if (it == resources_.end() || it->second.current == nullptr ||
      !it->second.snapshot.current_stream_open) {
    return false;
  }
  it->second.current->stream_context.TryCancel();
  return true;
}

}  // namespace hcudp::testing
