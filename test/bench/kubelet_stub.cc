#include "kubelet_stub.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace hcudp::testing {

class KubeletStub::Service final : public v1beta1::Registration::Service {
 public:
  explicit Service(KubeletStub* owner) : owner_(owner) {}
  grpc::Status Register(grpc::ServerContext*, const v1beta1::RegisterRequest* request,
                        v1beta1::Empty*) override {
    if (request->version() != "v1beta1") {
      return grpc::Status(grpc::StatusCode::UNKNOWN, "unsupported version");
    }
    // Like kubelet: dial back, ask for options, then answer.
    auto channel = owner_->Dial(request->endpoint());
    auto stub = v1beta1::DevicePlugin::NewStub(channel);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    ctx.set_wait_for_ready(true);
    v1beta1::Empty empty;
    v1beta1::DevicePluginOptions options;
    grpc::Status st = stub->GetDevicePluginOptions(&ctx, empty, &options);
    if (!st.ok()) {
      return grpc::Status(grpc::StatusCode::UNKNOWN,
                          "failed to get device plugin options: " + st.error_message());
    }
    Registration r{request->resource_name(), request->endpoint(),
                   options.get_preferred_allocation_available(), std::chrono::steady_clock::now()};
    {
      std::lock_guard<std::mutex> lock(owner_->mu_);
      owner_->registrations_.push_back(r);
    }
    owner_->cv_.notify_all();
    return grpc::Status::OK;
  }

 private:
  KubeletStub* owner_;
};

KubeletStub::KubeletStub(std::string dir) : dir_(std::move(dir)) {}
KubeletStub::~KubeletStub() { Stop(); }

bool KubeletStub::Start(bool wipe_sockets) {
  if (wipe_sockets) {
    if (DIR* d = ::opendir(dir_.c_str())) {
      while (dirent* e = ::readdir(d)) {
        std::string path = dir_ + "/" + e->d_name;
        struct stat st {};
        if (::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) ::unlink(path.c_str());
      }
      ::closedir(d);
    }
  }
  service_ = std::make_unique<Service>(this);
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + dir_ + "/kubelet.sock", grpc::InsecureServerCredentials());
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  return server_ != nullptr;
}

void KubeletStub::Stop() {
  if (!server_) return;
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
  server_->Wait();
  server_.reset();
  ::unlink((dir_ + "/kubelet.sock").c_str());
}

bool KubeletStub::WaitRegistrations(size_t n, std::chrono::steady_clock::time_point since,
                                    std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [&] {
    size_t count = 0;
    for (const auto& r : registrations_) count += r.at >= since ? 1 : 0;
    return count >= n;
  });
}

std::vector<Registration> KubeletStub::registrations() {
  std::lock_guard<std::mutex> lock(mu_);
  return registrations_;
}

std::shared_ptr<grpc::Channel> KubeletStub::Dial(const std::string& endpoint) const {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetMaxReceiveMessageSize(16 * 1024 * 1024);
  return grpc::CreateCustomChannel("unix:" + dir_ + "/" + endpoint,
                                   grpc::InsecureChannelCredentials(), args);
}

uint64_t ProcStatusKib(int pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) {
      std::istringstream s(line.substr(field.size() + 1));
      uint64_t kib = 0;
      s >> kib;
      return kib;
    }
  }
  return 0;
}

}  // namespace hcudp::testing
