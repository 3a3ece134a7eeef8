// The fake kubelet behaves as kubelet does (kubelet-contract.md §1-7), checked
// against a tiny in-process device plugin.
#include "fake_kubelet/fake_kubelet.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <boost/test/unit_test.hpp>
#include <condition_variable>

#include "testing/testutil.h"

namespace hcudp::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

v1beta1::Device MakeDevice(const std::string& id, const std::string& health = "Healthy") {
  v1beta1::Device d;
  d.set_id(id);
  d.set_health(health);
  return d;
}

// A minimal device plugin: serves DevicePlugin on <dir>/<endpoint>, sends
// the configured list on ListAndWatch and again on every SetDevices.
class TinyPlugin final : public v1beta1::DevicePlugin::Service {
 public:
  TinyPlugin(const std::string& dir, const std::string& endpoint) : dir_(dir), endpoint_(endpoint) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix:" + dir + "/" + endpoint, grpc::InsecureServerCredentials());
    builder.RegisterService(this);
    server_ = builder.BuildAndStart();
    BOOST_REQUIRE(server_ != nullptr);
  }
  ~TinyPlugin() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    server_->Shutdown(std::chrono::system_clock::now() + seconds(1));
  }

  grpc::Status Register(const std::string& resource, const std::string& version = "v1beta1") {
    auto channel =
        grpc::CreateChannel("unix:" + dir_ + "/kubelet.sock", grpc::InsecureChannelCredentials());
    auto stub = v1beta1::Registration::NewStub(channel);
    v1beta1::RegisterRequest request;
    request.set_version(version);
    request.set_endpoint(endpoint_);
    request.set_resource_name(resource);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(15));
    v1beta1::Empty empty;
    return stub->Register(&context, request, &empty);
  }

  void SetDevices(std::vector<v1beta1::Device> devices) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      devices_ = std::move(devices);
      ++generation_;
    }
    cv_.notify_all();
  }

  grpc::Status GetDevicePluginOptions(grpc::ServerContext*, const v1beta1::Empty*,
                                      v1beta1::DevicePluginOptions* options) override {
    options_calls_++;
    options->set_get_preferred_allocation_available(true);
    return grpc::Status::OK;
  }

  grpc::Status ListAndWatch(grpc::ServerContext* context, const v1beta1::Empty*,
                            grpc::ServerWriter<v1beta1::ListAndWatchResponse>* writer) override {
    int sent = -1;
    std::unique_lock<std::mutex> lock(mu_);
    while (!stopping_ && !context->IsCancelled()) {
      if (sent != generation_) {
        v1beta1::ListAndWatchResponse response;
        for (const auto& d : devices_) *response.add_devices() = d;
        sent = generation_;
        lock.unlock();
        bool ok = writer->Write(response);
        lock.lock();
        if (!ok) break;
      }
      cv_.wait_for(lock, milliseconds(10));
    }
    if (context->IsCancelled()) streams_cancelled_++;
    return grpc::Status::OK;
  }

  grpc::Status Allocate(grpc::ServerContext*, const v1beta1::AllocateRequest* request,
                        v1beta1::AllocateResponse* response) override {
    for (const auto& container : request->container_requests()) {
      v1beta1::ContainerAllocateResponse* r = response->add_container_responses();
      for (const auto& id : container.devices_ids()) (*r->mutable_envs())["DEV_" + id] = id;
    }
    return grpc::Status::OK;
  }

  std::atomic<int> options_calls_{0};
  std::atomic<int> streams_cancelled_{0};

 private:
  const std::string dir_;
  const std::string endpoint_;
  std::unique_ptr<grpc::Server> server_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  int generation_ = 0;
  std::vector<v1beta1::Device> devices_;
};

struct KubeletFixture {
  KubeletFixture() : kubelet(FakeKubelet::Config{dir.Join("plugins"), milliseconds(300)}) {
    BOOST_REQUIRE_EQUAL(kubelet.Start(), "");
  }
  TempDir dir;
  FakeKubelet kubelet;
};

BOOST_AUTO_TEST_SUITE(fake_kubelet)

BOOST_AUTO_TEST_CASE(resource_names_are_validated_as_kubelet_does) {
  struct Case {
    std::string name;
    bool valid;
  };
  const Case cases[] = {
      {"hygon.com/hcu", true},
      {"hygon.com/hcu-share-15c-8g", true},
      {"hygon.com/hcu-mig-4g-31gb", true},
      {"hygon.com/K100_AI_64G_120CU", true},
      {"hygon.com/K100-AI_64G_120CU", true},
      {"hcu", false},                        // unprefixed = native
      {"hygon.com/", false},                 // empty name
      {"kubernetes.io/hcu", false},          // native prefix
      {"example.kubernetes.io/hcu", false},  // contains kubernetes.io/
      {"requests.hygon.com/hcu", false},
      {"Hygon.com/hcu", false},  // prefix must be a DNS-1123 subdomain
      {"hygon.com/-hcu", false},
      {"hygon.com/hcu-", false},
      {"hygon.com/a/b", false},
      {"hygon.com/" + std::string(64, 'a'), false},
      {"hygon.com/" + std::string(63, 'a'), true},
  };
  for (const Case& c : cases) {
    BOOST_TEST(IsExtendedResourceName(c.name) == c.valid, c.name);
  }
}

BOOST_FIXTURE_TEST_CASE(register_rejects_an_unsupported_version_with_kubelets_text,
                        KubeletFixture) {
  TinyPlugin plugin(kubelet.plugin_dir(), "p.sock");
  grpc::Status s = plugin.Register("hygon.com/hcu", "v1alpha");
  BOOST_TEST(s.error_code() == grpc::StatusCode::UNKNOWN);
  BOOST_TEST(s.error_message() ==
             "requested API version \"v1alpha\" is not supported by kubelet. "
             "Supported version is [\"v1beta1\"]");
  BOOST_TEST(plugin.options_calls_ == 0);
}

BOOST_FIXTURE_TEST_CASE(register_rejects_an_invalid_resource_name_with_kubelets_text,
                        KubeletFixture) {
  TinyPlugin plugin(kubelet.plugin_dir(), "p.sock");
  grpc::Status s = plugin.Register("hcu");
  BOOST_TEST(s.error_code() == grpc::StatusCode::UNKNOWN);
  BOOST_TEST(s.error_message() == "the ResourceName \"hcu\" is invalid");
  BOOST_REQUIRE_EQUAL(kubelet.RegisterLog().size(), 1u);
  BOOST_TEST(kubelet.RegisterLog()[0].error == s.error_message());
}

BOOST_FIXTURE_TEST_CASE(register_fails_when_the_endpoint_cannot_be_dialed, KubeletFixture) {
  TinyPlugin plugin(kubelet.plugin_dir(), "p.sock");
  auto channel =
      grpc::CreateChannel("unix:" + kubelet.kubelet_socket(), grpc::InsecureChannelCredentials());
  auto stub = v1beta1::Registration::NewStub(channel);
  v1beta1::RegisterRequest request;
  request.set_version("v1beta1");
  request.set_endpoint("nobody-serves-this.sock");
  request.set_resource_name("hygon.com/hcu");
  grpc::ClientContext context;
  v1beta1::Empty empty;
  grpc::Status s = stub->Register(&context, request, &empty);
  BOOST_TEST(s.error_code() == grpc::StatusCode::UNKNOWN);
  BOOST_TEST(s.error_message() == "failed to dial device plugin: context deadline exceeded");
  BOOST_TEST(!kubelet.Snapshot("hygon.com/hcu").has_value());
}

BOOST_FIXTURE_TEST_CASE(register_fetches_options_before_it_returns, KubeletFixture) {
  TinyPlugin plugin(kubelet.plugin_dir(), "p.sock");
  BOOST_REQUIRE(plugin.Register("hygon.com/hcu").ok());
  BOOST_TEST(plugin.options_calls_ == 1);
  auto snap = kubelet.Snapshot("hygon.com/hcu");
  BOOST_REQUIRE(snap.has_value());
  BOOST_TEST(snap->endpoint == "p.sock");
  BOOST_TEST(snap->options.get_preferred_allocation_available());
  BOOST_TEST(snap->registrations == 1);
}

BOOST_FIXTURE_TEST_CASE(every_list_and_watch_message_replaces_the_device_list, KubeletFixture) {
  TinyPlugin plugin(kubelet.plugin_dir(), "p.sock");
  plugin.SetDevices({MakeDevice("a"), MakeDevice("b")});
  BOOST_REQUIRE(plugin.Register("hygon.com/hcu").ok());
  auto first = kubelet.WaitForRegistration("hygon.com/hcu", seconds(5));
  BOOST_REQUIRE(first.has_value());
  BOOST_TEST(first->devices.size() == 2u);

  plugin.SetDevices({MakeDevice("b", "Unhealthy")});
  auto second = kubelet.WaitForDevices(
      "hygon.com/hcu", [](const auto& d) { return d.size() == 1; }, seconds(5));
  BOOST_REQUIRE(second.has_value());
  BOOST_TEST(second->devices[0].id() == "b");
  BOOST_TEST(second->devices[0].health() == "Unhealthy");
  BOOST_TEST(second->messages == 2);
}

BOOST_FIXTURE_TEST_CASE(cancel_stream_ends_the_plugins_stream, KubeletFixture) {
  TinyPlugin plugin(kubelet.plugin_dir(), "p.sock");
  BOOST_REQUIRE(plugin.Register("hygon.com/hcu").ok());
  BOOST_REQUIRE(kubelet.WaitForRegistration("hygon.com/hcu", seconds(5)).has_value());
  BOOST_REQUIRE(kubelet.CancelStream("hygon.com/hcu"));
  auto ended = kubelet.WaitFor(
      "hygon.com/hcu", [](const ResourceSnapshot& s) { return !s.current_stream_open; },
      seconds(5));
  BOOST_REQUIRE(ended.has_value());
  BOOST_TEST(ended->stream_ends == 1);
  for (int i = 0; i < 200 && plugin.streams_cancelled_ == 0; ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  BOOST_TEST(plugin.streams_cancelled_ == 1);
  BOOST_TEST(!kubelet.CancelStream("hygon.com/hcu"));
}

BOOST_FIXTURE_TEST_CASE(a_second_register_takes_over_the_resource, KubeletFixture) {
  TinyPlugin old_plugin(kubelet.plugin_dir(), "old.sock");
  TinyPlugin new_plugin(kubelet.plugin_dir(), "new.sock");
  BOOST_REQUIRE(old_plugin.Register("hygon.com/hcu").ok());
  BOOST_REQUIRE(new_plugin.Register("hygon.com/hcu").ok());
  auto snap = kubelet.WaitForRegistration("hygon.com/hcu", seconds(5), 2);
  BOOST_REQUIRE(snap.has_value());
  BOOST_TEST(snap->endpoint == "new.sock");
  v1beta1::AllocateResponse response;
  BOOST_REQUIRE(kubelet.Allocate("hygon.com/hcu", {{"x"}}, &response).ok());
}

BOOST_FIXTURE_TEST_CASE(allocate_sends_one_container_request_per_container, KubeletFixture) {
  TinyPlugin plugin(kubelet.plugin_dir(), "p.sock");
  BOOST_REQUIRE(plugin.Register("hygon.com/hcu").ok());
  v1beta1::AllocateResponse response;
  BOOST_REQUIRE(kubelet.Allocate("hygon.com/hcu", {{"a"}, {"b", "c"}}, &response).ok());
  BOOST_REQUIRE_EQUAL(response.container_responses_size(), 2);
  BOOST_TEST(response.container_responses(0).envs().size() == 1u);
  BOOST_TEST(response.container_responses(1).envs().size() == 2u);
  BOOST_TEST(kubelet.Allocate("hygon.com/other", {{"a"}}, &response).error_code() ==
             grpc::StatusCode::FAILED_PRECONDITION);
}

int BindSocket(const std::string& path) {
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  BOOST_REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  return fd;
}

BOOST_FIXTURE_TEST_CASE(restart_deletes_every_socket_but_keeps_other_files, KubeletFixture) {
  const std::string dir = kubelet.plugin_dir();
  int plugin_socket = BindSocket(dir + "/hygon.com_hcu@1.sock");
  int checkpoint_socket = BindSocket(dir + "/kubelet_internal_checkpoint");
  WriteFile(dir + "/DEPRECATION", "");
  BOOST_REQUIRE_EQUAL(kubelet.Restart(), "");
  BOOST_TEST(!PathExists(dir + "/hygon.com_hcu@1.sock"));
  BOOST_TEST(PathExists(dir + "/kubelet_internal_checkpoint"));
  BOOST_TEST(PathExists(dir + "/DEPRECATION"));
  BOOST_TEST(PathExists(dir + "/kubelet.sock"));
  close(plugin_socket);
  close(checkpoint_socket);

  TinyPlugin plugin(dir, "p.sock");
  BOOST_TEST(plugin.Register("hygon.com/hcu").ok());
}

BOOST_FIXTURE_TEST_CASE(restart_drops_every_stream, KubeletFixture) {
  TinyPlugin plugin(kubelet.plugin_dir(), "p.sock");
  BOOST_REQUIRE(plugin.Register("hygon.com/hcu").ok());
  BOOST_REQUIRE(kubelet.WaitForRegistration("hygon.com/hcu", seconds(5)).has_value());
  BOOST_REQUIRE_EQUAL(kubelet.Restart(), "");
  auto snap = kubelet.Snapshot("hygon.com/hcu");
  BOOST_REQUIRE(snap.has_value());
  BOOST_TEST(!snap->current_stream_open);
  BOOST_TEST(snap->stream_ends == 1);
  v1beta1::AllocateResponse response;
  BOOST_TEST(!kubelet.Allocate("hygon.com/hcu", {{"a"}}, &response).ok());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
