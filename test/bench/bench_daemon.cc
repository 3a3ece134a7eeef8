// Benchmarks of the real hcu-dp-daemon binary on a simulated node, each
// figure next to a floor measured in the same run:
//   1. process start -> all resources registered (kubelet already up);
//   2. Allocate (1 card) vs the empty GetDevicePluginOptions RPC on the same
//      connection, interleaved, p50/p99 and the p50 ratio;
//   3. kubelet restart (sockets wiped, kubelet.sock re-created) ->
//      re-registered, median over N restarts;
//   4. VmRSS / RssAnon after start and after 10,000 Allocates, next to a
//      minimal grpc++ server with one service (bench_floor_server).
// Usage: bench_daemon DAEMON FLOOR SIM_NODE [iterations] [restarts] [allocs]
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "bench_util.h"
#include "kubelet_stub.h"

extern char** environ;

namespace {

using hcudp::bench::CountArgAt;
using hcudp::bench::Percentile;
using hcudp::bench::Spawn;
using hcudp::bench::Terminate;

using SteadyClock = std::chrono::steady_clock;
using hcudp::testing::KubeletStub;
using hcudp::testing::ProcStatusKib;

double Ms(SteadyClock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }
double Us(SteadyClock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

std::string FirstDeviceId(KubeletStub& kubelet, const std::string& endpoint) {
  auto stub = v1beta1::DevicePlugin::NewStub(kubelet.Dial(endpoint));
  grpc::ClientContext ctx;
  v1beta1::Empty empty;
  auto reader = stub->ListAndWatch(&ctx, empty);
  v1beta1::ListAndWatchResponse first;
  std::string id;
  if (reader->Read(&first) && first.devices_size() > 0) id = first.devices(0).id();
  ctx.TryCancel();
  reader->Finish();
  return id;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s DAEMON FLOOR SIM_NODE [iterations] [restarts] [allocs]\n",
                 argv[0]);
    return 2;
  }
  const std::string daemon = argv[1], floor = argv[2], sim = argv[3];
  const int iterations = static_cast<int>(CountArgAt(argc, argv, 4, "iterations", 5000));
  const int restarts = static_cast<int>(CountArgAt(argc, argv, 5, "restarts", 20));
  const int allocs = static_cast<int>(CountArgAt(argc, argv, 6, "allocs", 10000));
  char tmpl[] = "/tmp/hcudp-bench-XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  KubeletStub kubelet(dir);
  if (!kubelet.Start(false)) return 1;
  const std::vector<std::string> daemon_args = {daemon,
                                                "--backend=sim",
                                                "--sim-node=" + sim,
                                                "--device-plugin-path=" + dir,
                                                "--strategy=mixed",
                                                "--log-severity=WARNING"};

  // 1. Start -> registered (median of 5 starts; the last one stays up).
  std::vector<double> start_ms;
  pid_t pid = -1;
  size_t resources = 0;
  for (int i = 0; i < 5; ++i) {
    if (pid > 0) Terminate(pid);
    auto t0 = SteadyClock::now();
    pid = Spawn(daemon_args);
    if (!kubelet.WaitRegistrations(1, t0, std::chrono::seconds(10))) {
      std::fprintf(stderr, "daemon did not register\n");
      Terminate(pid);
      return 1;
    }
    // All resources: wait briefly for any further registrations.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    size_t n = 0;
    SteadyClock::time_point last = t0;
    for (const auto& r : kubelet.registrations()) {
      if (r.at >= t0) {
        ++n;
        last = std::max(last, r.at);
      }
    }
    resources = n;
    start_ms.push_back(Ms(last - t0));
  }
  std::string endpoint;
  for (const auto& r : kubelet.registrations()) {
    if (r.resource_name == "hygon.com/hcu") endpoint = r.endpoint;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const uint64_t rss_start = ProcStatusKib(pid, "VmRSS");
  const uint64_t anon_start = ProcStatusKib(pid, "RssAnon");

  // 2. Allocate vs GetDevicePluginOptions on one connection.
  auto channel = kubelet.Dial(endpoint);
  auto stub = v1beta1::DevicePlugin::NewStub(channel);
  const std::string card = FirstDeviceId(kubelet, endpoint);
  v1beta1::AllocateRequest alloc_req;
  alloc_req.add_container_requests()->add_devices_ids(card);
  std::vector<double> alloc_us, floor_us;
  int errors = 0;
  for (int i = 0; i < iterations + 200; ++i) {
    {
      grpc::ClientContext ctx;
      v1beta1::Empty e;
      v1beta1::DevicePluginOptions o;
      auto t = SteadyClock::now();
      if (!stub->GetDevicePluginOptions(&ctx, e, &o).ok()) ++errors;
      if (i >= 200) floor_us.push_back(Us(SteadyClock::now() - t));
    }
    {
      grpc::ClientContext ctx;
      v1beta1::AllocateResponse r;
      auto t = SteadyClock::now();
      if (!stub->Allocate(&ctx, alloc_req, &r).ok()) ++errors;
      if (i >= 200) alloc_us.push_back(Us(SteadyClock::now() - t));
    }
  }
  for (int i = 0; i < allocs - iterations - 200; ++i) {
    grpc::ClientContext ctx;
    v1beta1::AllocateResponse r;
    if (!stub->Allocate(&ctx, alloc_req, &r).ok()) ++errors;
  }
  const uint64_t rss_after = ProcStatusKib(pid, "VmRSS");
  const uint64_t anon_after = ProcStatusKib(pid, "RssAnon");

  // 3. kubelet restarts.
  std::vector<double> restart_ms;
  for (int i = 0; i < restarts; ++i) {
    kubelet.Stop();
    auto t0 = SteadyClock::now();
    kubelet.Start(/*wipe_sockets=*/true);
    if (!kubelet.WaitRegistrations(resources, t0, std::chrono::seconds(10))) {
      std::fprintf(stderr, "no re-registration after restart %d\n", i);
      ++errors;
      continue;
    }
    SteadyClock::time_point last = t0;
    for (const auto& r : kubelet.registrations()) {
      if (r.at >= t0) last = std::max(last, r.at);
    }
    restart_ms.push_back(Ms(last - t0));
  }
  Terminate(pid);

  // 4. Floor process memory: median of 3 fresh processes (shared-library
  // pages make a single reading jitter by ~1 MiB).
  std::vector<double> floor_rss_v, floor_anon_v;
  for (int run = 0; run < 3; ++run) {
    const std::string floor_sock = dir + "/floor" + std::to_string(run) + ".sock";
    pid_t fpid = Spawn({floor, floor_sock});
    for (int i = 0; i < 200 && ::access(floor_sock.c_str(), F_OK) != 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    auto fstub = v1beta1::DevicePlugin::NewStub(
        grpc::CreateChannel("unix:" + floor_sock, grpc::InsecureChannelCredentials()));
    for (int i = 0; i < 100; ++i) {
      grpc::ClientContext ctx;
      v1beta1::Empty e;
      v1beta1::DevicePluginOptions o;
      (void)fstub->GetDevicePluginOptions(&ctx, e, &o);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    floor_rss_v.push_back(static_cast<double>(ProcStatusKib(fpid, "VmRSS")));
    floor_anon_v.push_back(static_cast<double>(ProcStatusKib(fpid, "RssAnon")));
    Terminate(fpid);
  }
  const uint64_t floor_rss = static_cast<uint64_t>(Percentile(floor_rss_v, 0.5));
  const uint64_t floor_anon = static_cast<uint64_t>(Percentile(floor_anon_v, 0.5));
  kubelet.Stop();
  std::system(("rm -rf " + dir).c_str());

  std::printf("sim node: %s, resources registered: %zu, errors: %d\n", sim.c_str(), resources,
              errors);
  std::printf("start -> all registered: median %.1f ms (5 starts; target <= 100 ms)\n",
              Percentile(start_ms, 0.5));
  std::printf("GetDevicePluginOptions (floor): p50 %.1f us  p99 %.1f us  (n=%d)\n",
              Percentile(floor_us, 0.5), Percentile(floor_us, 0.99), iterations);
  std::printf("Allocate (1 card):              p50 %.1f us  p99 %.1f us  (n=%d)\n",
              Percentile(alloc_us, 0.5), Percentile(alloc_us, 0.99), iterations);
  std::printf("Allocate / floor p50 ratio: %.2f (target <= 1.5)\n",
              Percentile(alloc_us, 0.5) / Percentile(floor_us, 0.5));
  if (!restart_ms.empty()) {
    std::printf(
        "kubelet restart -> re-registered: median %.1f ms, max %.1f ms (%zu restarts; "
        "target median <= 200 ms)\n",
        Percentile(restart_ms, 0.5), Percentile(restart_ms, 1.0), restart_ms.size());
  }
  std::printf("daemon after start:        VmRSS %.1f MiB  RssAnon %.1f MiB\n", rss_start / 1024.0,
              anon_start / 1024.0);
  std::printf("daemon after %d Allocates: VmRSS %.1f MiB  RssAnon %.1f MiB\n", allocs,
              rss_after / 1024.0, anon_after / 1024.0);
  std::printf("floor grpc++ server (median of 3): VmRSS %.1f MiB  RssAnon %.1f MiB\n",
              floor_rss / 1024.0, floor_anon / 1024.0);
  std::printf("daemon RSS - floor: %+.1f MiB (target <= 4 MiB); RssAnon growth %+.1f MiB\n",
              (static_cast<double>(rss_after) - static_cast<double>(floor_rss)) / 1024.0,
              (static_cast<double>(anon_after) - static_cast<double>(anon_start)) / 1024.0);
  return errors == 0 ? 0 : 1;
}
