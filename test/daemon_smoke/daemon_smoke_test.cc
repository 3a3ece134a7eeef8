#define BOOST_TEST_MODULE daemon_smoke
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "hcudp/backend.h"
#include "kubelet_stub.h"

extern char** environ;

namespace {

using SteadyClock = std::chrono::steady_clock;

// Every stream and call of these tests ends by then: a daemon that stops
// answering fails the test instead of hanging it.
constexpr std::chrono::seconds kStreamDeadline{60};

void BoundStream(grpc::ClientContext& ctx) {
  ctx.set_deadline(std::chrono::system_clock::now() + kStreamDeadline);
}
using hcudp::testing::KubeletStub;

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A daemon on a private copy of a SimNode file, with a kubelet stub.
struct Daemon {
  std::string dir;
  std::string node;
  KubeletStub* kubelet = nullptr;
  pid_t pid = -1;

  explicit Daemon(const std::string& fixture, std::vector<std::string> extra = {}) {
    char tmpl[] = "/tmp/hcudp-smoke-XXXXXX";
    dir = ::mkdtemp(tmpl);
    node = dir + "/node.yaml";
    std::ofstream(node) << Slurp(std::string(HCUDP_SOURCE_DIR) + "/" + fixture);
    kubelet = new KubeletStub(dir + "/dp");
    ::mkdir((dir + "/dp").c_str(), 0755);
    BOOST_REQUIRE(kubelet->Start(false));
    std::vector<std::string> args = {HCU_DP_DAEMON,
                                     "--backend=sim",
                                     "--sim-node=" + node,
                                     "--host-root=" + dir + "/root",
                                     "--device-plugin-path=" + dir + "/dp",
                                     "--pulse=1",
                                     "--log-severity=WARNING"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    BOOST_REQUIRE(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) == 0);
  }
  ~Daemon() {
    if (pid > 0) Stop();
    delete kubelet;
    std::system(("rm -rf " + dir).c_str());
  }
  // SIGTERM, then SIGKILL if the daemon has not exited within 20 s.
  int Stop() {
    ::kill(pid, SIGTERM);
    int status = 0;
    const auto deadline = SteadyClock::now() + std::chrono::seconds(20);
    pid_t done = 0;
    while ((done = ::waitpid(pid, &status, WNOHANG)) == 0 && SteadyClock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (done == 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);  // SIGKILL cannot be ignored: returns at once
      status = -1;
    }
    pid = -1;
    return status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::string Endpoint(const std::string& resource) {
    for (const auto& r : kubelet->registrations()) {
      if (r.resource_name == resource) return r.endpoint;
    }
    return "";
  }
  std::unique_ptr<v1beta1::DevicePlugin::Stub> Plugin(const std::string& resource) {
    return v1beta1::DevicePlugin::NewStub(kubelet->Dial(Endpoint(resource)));
  }
};

std::vector<std::string> Sorted(const google::protobuf::RepeatedPtrField<std::string>& ids) {
  std::vector<std::string> v(ids.begin(), ids.end());
  std::sort(v.begin(), v.end());
  return v;
}

BOOST_AUTO_TEST_CASE(registers_serves_allocates_and_follows_health_on_two_islands) {
  Daemon d("test/fixtures/two-islands.yaml");
  BOOST_REQUIRE(
      d.kubelet->WaitRegistrations(1, SteadyClock::time_point{}, std::chrono::seconds(10)));
  auto regs = d.kubelet->registrations();
  BOOST_TEST(regs[0].resource_name == "hygon.com/hcu");
  BOOST_TEST(regs[0].endpoint.rfind("hygon.com_hcu@", 0) == 0u);
  BOOST_TEST(regs[0].preferred_allocation);

  auto plugin = d.Plugin("hygon.com/hcu");
  grpc::ClientContext watch_ctx;
  BoundStream(watch_ctx);
  v1beta1::Empty empty;
  auto stream = plugin->ListAndWatch(&watch_ctx, empty);
  v1beta1::ListAndWatchResponse list;
  BOOST_REQUIRE(stream->Read(&list));
  BOOST_REQUIRE(list.devices_size() == 8);
  std::vector<std::string> ids;
  for (const auto& dev : list.devices()) {
    BOOST_TEST(dev.health() == "Healthy");
    BOOST_TEST(dev.topology().nodes_size() == 1);
    ids.push_back(dev.id());
  }

  // Preferred: 4 of {card 3, cards 4-7} -> the whole second island.
  {
    grpc::ClientContext ctx;
    BoundStream(ctx);
    v1beta1::PreferredAllocationRequest req;
    auto* c = req.add_container_requests();
    for (size_t i = 3; i < 8; ++i) c->add_available_deviceids(ids[i]);
    c->set_allocation_size(4);
    v1beta1::PreferredAllocationResponse resp;
    BOOST_REQUIRE(plugin->GetPreferredAllocation(&ctx, req, &resp).ok());
    BOOST_TEST(Sorted(resp.container_responses(0).deviceids()) ==
               (std::vector<std::string>{ids[4], ids[5], ids[6], ids[7]}));
  }
  // Allocate one card; unknown IDs are INVALID_ARGUMENT.
  {
    grpc::ClientContext ctx;
    BoundStream(ctx);
    v1beta1::AllocateRequest req;
    req.add_container_requests()->add_devices_ids(ids[0]);
    v1beta1::AllocateResponse resp;
    BOOST_REQUIRE(plugin->Allocate(&ctx, req, &resp).ok());
    BOOST_REQUIRE(resp.container_responses_size() == 1);
    const auto& c = resp.container_responses(0);
    BOOST_TEST(c.devices(0).host_path() == "/dev/kfd");
    BOOST_TEST(c.mounts(0).container_path() == "/opt/hyhal");
    BOOST_TEST(c.mounts(0).read_only());
  }
  {
    grpc::ClientContext ctx;
    BoundStream(ctx);
    v1beta1::AllocateRequest req;
    req.add_container_requests()->add_devices_ids("0000:ff:00.0");
    v1beta1::AllocateResponse resp;
    BOOST_TEST(plugin->Allocate(&ctx, req, &resp).error_code() ==
               grpc::StatusCode::INVALID_ARGUMENT);
  }

  // Fault injection: card 0 Unhealthy in the node file shows within seconds.
  std::string yaml = Slurp(d.node);
  size_t at = yaml.find("health: Healthy");
  BOOST_REQUIRE(at != std::string::npos);
  std::string faulty = yaml;
  faulty.replace(at, 15, "health: Unhealthy");
  auto t0 = SteadyClock::now();
  std::ofstream(d.node) << faulty;
  bool seen = false;
  while (!seen && stream->Read(&list)) {
    for (const auto& dev : list.devices()) seen |= dev.health() == "Unhealthy";
  }
  BOOST_TEST(seen);
  BOOST_TEST((SteadyClock::now() - t0 < std::chrono::seconds(4)));
  std::ofstream(d.node) << yaml;
  bool recovered = false;
  while (!recovered && stream->Read(&list)) {
    recovered = true;
    for (const auto& dev : list.devices()) recovered &= dev.health() == "Healthy";
  }
  BOOST_TEST(recovered);
  watch_ctx.TryCancel();
  stream->Finish();

  // SIGTERM: exit 0 and our sockets are gone.
  auto stop0 = SteadyClock::now();
  BOOST_TEST(d.Stop() == 0);
  BOOST_TEST((SteadyClock::now() - stop0 < std::chrono::seconds(5)));
  struct stat st {};
  BOOST_TEST(::stat((d.dir + "/dp/" + regs[0].endpoint).c_str(), &st) != 0);
}

BOOST_AUTO_TEST_CASE(kubelet_restart_is_followed_by_re_registration) {
  Daemon d("demo/nodes/z100l-mixed.yaml");
  BOOST_REQUIRE(
      d.kubelet->WaitRegistrations(3, SteadyClock::time_point{}, std::chrono::seconds(10)));
  for (int i = 0; i < 3; ++i) {
    d.kubelet->Stop();
    auto t0 = SteadyClock::now();
    BOOST_REQUIRE(d.kubelet->Start(/*wipe_sockets=*/true));
    BOOST_TEST(d.kubelet->WaitRegistrations(3, t0, std::chrono::seconds(5)));
  }
}

BOOST_AUTO_TEST_CASE(a_stream_cancelled_by_kubelet_leads_to_re_registration) {
  Daemon d("demo/nodes/k100ai-8.yaml");
  BOOST_REQUIRE(
      d.kubelet->WaitRegistrations(1, SteadyClock::time_point{}, std::chrono::seconds(10)));
  auto plugin = d.Plugin("hygon.com/hcu");
  {
    grpc::ClientContext ctx;
    BoundStream(ctx);
    v1beta1::Empty empty;
    auto stream = plugin->ListAndWatch(&ctx, empty);
    v1beta1::ListAndWatchResponse list;
    BOOST_REQUIRE(stream->Read(&list));
    ctx.TryCancel();
    stream->Finish();
  }
  auto t0 = SteadyClock::now();
  BOOST_TEST(d.kubelet->WaitRegistrations(1, t0, std::chrono::seconds(5)));
}

BOOST_AUTO_TEST_CASE(thirty_two_concurrent_allocate_callers_all_succeed) {
  Daemon d("demo/nodes/k100ai-8.yaml");
  BOOST_REQUIRE(
      d.kubelet->WaitRegistrations(1, SteadyClock::time_point{}, std::chrono::seconds(10)));
  const std::string endpoint = d.Endpoint("hygon.com/hcu");
  std::atomic<int> ok{0};
  std::vector<std::thread> callers;
  for (int i = 0; i < 32; ++i) {
    callers.emplace_back([&] {
      auto plugin = v1beta1::DevicePlugin::NewStub(d.kubelet->Dial(endpoint));
      for (int j = 0; j < 20; ++j) {
        grpc::ClientContext ctx;
        ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
        v1beta1::AllocateRequest req;
        req.add_container_requests()->add_devices_ids("0000:09:00.0");
        v1beta1::AllocateResponse resp;
        if (plugin->Allocate(&ctx, req, &resp).ok() && resp.container_responses_size() == 1) ++ok;
      }
    });
  }
  for (auto& t : callers) t.join();
  BOOST_TEST(ok.load() == 32 * 20);
}

BOOST_AUTO_TEST_CASE(a_new_vhcu_brings_a_new_resource_without_restart) {
  Daemon d("demo/nodes/k100ai-8.yaml");
  BOOST_REQUIRE(
      d.kubelet->WaitRegistrations(1, SteadyClock::time_point{}, std::chrono::seconds(10)));
  auto plugin = d.Plugin("hygon.com/hcu");
  grpc::ClientContext watch_ctx;
  BoundStream(watch_ctx);
  v1beta1::Empty empty;
  auto stream = plugin->ListAndWatch(&watch_ctx, empty);
  v1beta1::ListAndWatchResponse list;
  BOOST_REQUIRE(stream->Read(&list));
  BOOST_TEST(list.devices_size() == 8);

  // An admin creates a vHCU on card 0 (through the same simulated driver).
  hcudp::Options o;
  o.backend = hcudp::BackendKind::kSim;
  o.sim_node_path = d.node;
  o.host_root = d.dir + "/root";
  auto backend = hcudp::OpenBackend(o);
  BOOST_REQUIRE_MESSAGE(backend.ok(), backend.status().ToString());
  auto t0 = SteadyClock::now();
  auto vhcu = (*backend)->CreateVhcu(0, 15, 8188);
  BOOST_REQUIRE_MESSAGE(vhcu.ok(), vhcu.status().ToString());

  // mixed: card 0 leaves hygon.com/hcu, and the new profile registers.
  BOOST_REQUIRE(stream->Read(&list));
  BOOST_TEST(list.devices_size() == 7);
  BOOST_TEST(d.kubelet->WaitRegistrations(1, t0, std::chrono::seconds(5)));
  BOOST_TEST(!d.Endpoint("hygon.com/hcu-share-15c-8g").empty());
  watch_ctx.TryCancel();
  stream->Finish();
}

// --cdi-spec-dir is a host path: written under --host-root (DESIGN §4.4).
BOOST_AUTO_TEST_CASE(cdi_strategy_returns_only_cdi_devices_and_writes_the_spec) {
  {
    Daemon d("demo/nodes/k100ai-8.yaml",
             {"--device-list-strategy=cdi", "--cdi-spec-dir=/var/run/cdi"});
    BOOST_REQUIRE(
        d.kubelet->WaitRegistrations(1, SteadyClock::time_point{}, std::chrono::seconds(10)));
    struct stat st {};
    BOOST_TEST(::stat((d.dir + "/root/var/run/cdi/hygon.com-hcu.json").c_str(), &st) == 0);
    auto plugin = d.Plugin("hygon.com/hcu");
    grpc::ClientContext ctx;
    BoundStream(ctx);
    v1beta1::AllocateRequest req;
    req.add_container_requests()->add_devices_ids("0000:09:00.0");
    v1beta1::AllocateResponse resp;
    BOOST_REQUIRE(plugin->Allocate(&ctx, req, &resp).ok());
    const auto& c = resp.container_responses(0);
    BOOST_TEST(c.devices_size() == 0);
    BOOST_TEST(c.mounts_size() == 0);
    BOOST_REQUIRE(c.cdi_devices_size() == 1);
    BOOST_TEST(c.cdi_devices(0).name() == "hygon.com/hcu=0000:09:00.0");
  }
}

}  // namespace
