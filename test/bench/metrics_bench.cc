// The cost of --metrics-address (issue 15), each figure next to its floor in
// the same run:
//   1. private memory (smaps_rollup Private_Clean + Private_Dirty, and
//      RssAnon) of a daemon with metrics on vs the same daemon with them off,
//      both after the same Allocates (and the "on" one after 100 scrapes),
//      median over R rounds of fresh process pairs;
//   2. Allocate p50 / GetDevicePluginOptions p50 for each of the two, the
//      four calls interleaved on one connection each;
//   3. /metrics scrape latency on a 64-card node (test/fixtures/k100ai-64.yaml,
//      --strategy=mixed: 56 cards + 16 vHCUs), over a fresh TCP connection
//      per scrape as Prometheus without keep-alive, p50/p99;
//   4. a soak of S scrapes: private memory before and after.
// Labels and Events (issue 15 items 1, 3) are another component's; this
// measures metrics only.
// Usage: bench_metrics DAEMON NODE8 NODE64 [pairs] [allocs] [rounds] [scrapes] [soak]
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "bench_util.h"
#include "kubelet_stub.h"
#include "ops_metrics/exposition.h"

extern char** environ;

namespace {

using hcudp::bench::CountArgAt;
using hcudp::bench::EnvBound;
using hcudp::bench::EnvCount;
using hcudp::bench::Percentile;
using hcudp::bench::Spawn;
using hcudp::bench::Terminate;

using SteadyClock = std::chrono::steady_clock;
using hcudp::testing::KubeletStub;
using hcudp::testing::ProcStatusKib;

double Us(SteadyClock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

// Private_Clean + Private_Dirty of the whole process, KiB.
uint64_t PrivateKib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/smaps_rollup");
  std::string line;
  uint64_t sum = 0;
  while (std::getline(in, line)) {
    if (line.rfind("Private_Clean:", 0) == 0 || line.rfind("Private_Dirty:", 0) == 0) {
      std::istringstream words(line);
      std::string key;
      uint64_t kib = 0;
      words >> key >> kib;
      sum += kib;
    }
  }
  return sum;
}

// A port free right now on 127.0.0.1.
int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// One daemon behind its own kubelet stub.
struct Daemon {
  std::string dir;
  std::unique_ptr<KubeletStub> kubelet;
  pid_t pid = -1;
  int port = 0;  // 0: metrics off
  std::unique_ptr<v1beta1::DevicePlugin::Stub> stub;
  std::string card;

  bool Start(const std::string& binary, const std::string& node, bool metrics) {
    char tmpl[] = "/tmp/hcudp-mbench-XXXXXX";
    dir = ::mkdtemp(tmpl);
    kubelet = std::make_unique<KubeletStub>(dir);
    if (!kubelet->Start(false)) return false;
    std::vector<std::string> args = {binary,
                                     "--backend=sim",
                                     "--sim-node=" + node,
                                     "--host-root=" + dir + "/root",
                                     "--device-plugin-path=" + dir,
                                     "--strategy=mixed",
                                     "--pulse=30",
                                     "--log-severity=WARNING"};
    if (metrics) {
      port = FreePort();
      args.push_back("--metrics-address=127.0.0.1:" + std::to_string(port));
    }
    const auto t0 = SteadyClock::now();
    pid = Spawn(args);
    if (pid < 0) return false;
    // Resources register independently: wait for hygon.com/hcu itself.
    std::string endpoint;
    for (size_t n = 1; endpoint.empty(); ++n) {
      if (!kubelet->WaitRegistrations(n, t0, std::chrono::seconds(60))) return false;
      for (const auto& r : kubelet->registrations()) {
        if (r.resource_name == "hygon.com/hcu" && r.at >= t0) endpoint = r.endpoint;
      }
    }
    stub = v1beta1::DevicePlugin::NewStub(kubelet->Dial(endpoint));
    grpc::ClientContext ctx;
    v1beta1::Empty empty;
    auto reader = stub->ListAndWatch(&ctx, empty);
    v1beta1::ListAndWatchResponse first;
    if (reader->Read(&first) && first.devices_size() > 0) card = first.devices(0).id();
    ctx.TryCancel();
    reader->Finish();
    return !card.empty();
  }

  double Options() {
    grpc::ClientContext ctx;
    v1beta1::Empty e;
    v1beta1::DevicePluginOptions o;
    auto t = SteadyClock::now();
    if (!stub->GetDevicePluginOptions(&ctx, e, &o).ok()) return -1;
    return Us(SteadyClock::now() - t);
  }
  double Allocate() {
    grpc::ClientContext ctx;
    v1beta1::AllocateRequest req;
    req.add_container_requests()->add_devices_ids(card);
    v1beta1::AllocateResponse r;
    auto t = SteadyClock::now();
    if (!stub->Allocate(&ctx, req, &r).ok()) return -1;
    return Us(SteadyClock::now() - t);
  }
  // One scrape; -1 unless 200.
  double Scrape(std::string* body = nullptr) {
    auto t = SteadyClock::now();
    auto got = hcudp::testing::HttpGet(port, "/metrics");
    double us = Us(SteadyClock::now() - t);
    if (!got.ok() || got->status != 200) return -1;
    if (body != nullptr) *body = got->body;
    return us;
  }
  ~Daemon() { Stop(); }
  void Stop() {
    if (dir.empty()) return;
    if (pid > 0) Terminate(pid);
    pid = -1;
    stub.reset();
    if (kubelet) kubelet->Stop();
    std::system(("rm -rf " + dir).c_str());
    dir.clear();
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr,
                 "usage: %s DAEMON NODE8 NODE64 [pairs] [allocs] [rounds] [scrapes] [soak]\n",
                 argv[0]);
    return 2;
  }
  const std::string daemon = argv[1], node8 = argv[2], node64 = argv[3];
  const int pairs = static_cast<int>(CountArgAt(argc, argv, 4, "pairs", 3000));
  const int allocs = static_cast<int>(CountArgAt(argc, argv, 5, "allocs", 5000));
  const int rounds = static_cast<int>(CountArgAt(argc, argv, 6, "rounds", 3));
  const int scrapes = static_cast<int>(CountArgAt(argc, argv, 7, "scrapes", 2000));
  const int soak = static_cast<int>(CountArgAt(argc, argv, 8, "soak", 10000));
  int errors = 0;

  // 1 and 2: pairs of fresh daemons, off and on.
  std::vector<double> priv_off, priv_on, anon_off, anon_on, ratio_off, ratio_on;
  for (int round = 0; round < rounds; ++round) {
    Daemon off, on;
    if (!off.Start(daemon, node8, false) || !on.Start(daemon, node8, true)) {
      std::fprintf(stderr, "a daemon did not start\n");
      return 1;
    }
    std::vector<double> fo, ao, fn, an;
    for (int i = 0; i < pairs + 200; ++i) {
      double a = off.Options(), b = off.Allocate(), c = on.Options(), d = on.Allocate();
      if (a < 0 || b < 0 || c < 0 || d < 0) ++errors;
      if (i < 200) continue;
      fo.push_back(a);
      ao.push_back(b);
      fn.push_back(c);
      an.push_back(d);
    }
    for (int i = 0; i < allocs - pairs - 200; ++i) {
      if (off.Allocate() < 0 || on.Allocate() < 0) ++errors;
    }
    for (int i = 0; i < 100; ++i) {
      if (on.Scrape() < 0) ++errors;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    priv_off.push_back(static_cast<double>(PrivateKib(off.pid)));
    priv_on.push_back(static_cast<double>(PrivateKib(on.pid)));
    anon_off.push_back(static_cast<double>(ProcStatusKib(off.pid, "RssAnon")));
    anon_on.push_back(static_cast<double>(ProcStatusKib(on.pid, "RssAnon")));
    ratio_off.push_back(Percentile(ao, 0.5) / Percentile(fo, 0.5));
    ratio_on.push_back(Percentile(an, 0.5) / Percentile(fn, 0.5));
    std::printf(
        "round %d: Allocate/floor p50 off %.2f on %.2f; private off %.2f on %.2f MiB; "
        "RssAnon off %.2f on %.2f MiB\n",
        round, ratio_off.back(), ratio_on.back(), priv_off.back() / 1024, priv_on.back() / 1024,
        anon_off.back() / 1024, anon_on.back() / 1024);
    off.Stop();
    on.Stop();
  }

  // 3 and 4: the 64-card node.
  Daemon big;
  if (!big.Start(daemon, node64, true)) {
    std::fprintf(stderr, "the 64-card daemon did not start\n");
    return 1;
  }
  std::string body;
  if (big.Scrape(&body) < 0) ++errors;
  auto parsed = hcudp::testing::ParseExposition(body);
  if (!parsed.ok()) {
    std::fprintf(stderr, "bad exposition: %s\n", parsed.status().ToString().c_str());
    ++errors;
  }
  for (int i = 0; i < 200; ++i) big.Scrape();
  std::vector<double> scrape_us;
  for (int i = 0; i < scrapes; ++i) {
    double us = big.Scrape();
    if (us < 0) ++errors;
    scrape_us.push_back(us);
  }
  // The soak in equal legs (HCUDP_BENCH_SOAK_LEGS, 3): growth that stops
  // after the first is the allocator's high-water mark settling; a leak grows
  // in every leg. HCUDP_BENCH_SOAK_REST_S rests before each reading (0.3 s by
  // default), long enough for the exposer's time-windowed request-latency
  // summary (60 s) to drop the observations of the scrapes before it.
  const int legs = static_cast<int>(EnvCount("HCUDP_BENCH_SOAK_LEGS", 3));
  const auto rest =
      std::chrono::milliseconds(static_cast<int>(EnvBound("HCUDP_BENCH_SOAK_REST_S", 0.3) * 1000));
  std::vector<uint64_t> soak_priv, soak_anon;
  for (int leg = 0; leg <= legs; ++leg) {
    if (leg > 0) {
      for (int i = 0; i < soak / legs; ++i) {
        if (big.Scrape() < 0) ++errors;
      }
    }
    std::this_thread::sleep_for(rest);
    soak_priv.push_back(PrivateKib(big.pid));
    soak_anon.push_back(ProcStatusKib(big.pid, "RssAnon"));
  }
  big.Stop();

  const double d_priv = (Percentile(priv_on, 0.5) - Percentile(priv_off, 0.5)) / 1024;
  const double d_anon = (Percentile(anon_on, 0.5) - Percentile(anon_off, 0.5)) / 1024;
  std::printf("errors: %d\n", errors);
  std::printf("private memory, metrics off: median %.2f MiB (RssAnon %.2f), %d rounds\n",
              Percentile(priv_off, 0.5) / 1024, Percentile(anon_off, 0.5) / 1024, rounds);
  std::printf("private memory, metrics on:  median %.2f MiB (RssAnon %.2f)\n",
              Percentile(priv_on, 0.5) / 1024, Percentile(anon_on, 0.5) / 1024);
  std::printf("metrics on - off: private %+.2f MiB, RssAnon %+.2f MiB (target <= 0.5 MiB)\n",
              d_priv, d_anon);
  std::printf("Allocate / floor p50: off median %.2f, on median %.2f (%d pairs each)\n",
              Percentile(ratio_off, 0.5), Percentile(ratio_on, 0.5), pairs);
  std::printf(
      "scrape, 64 cards (%zu series): p50 %.0f us  p99 %.0f us  (n=%d; target p50 <= 2 ms)\n",
      parsed.ok() ? parsed->samples.size() : 0, Percentile(scrape_us, 0.5),
      Percentile(scrape_us, 0.99), scrapes);
  std::printf("soak of %d x %d scrapes (%.1f s rest before each reading), private MiB:", legs,
              soak / legs, rest.count() / 1000.0);
  for (uint64_t k : soak_priv) std::printf(" %.2f", k / 1024.0);
  std::printf("; RssAnon MiB:");
  for (uint64_t k : soak_anon) std::printf(" %.2f", k / 1024.0);
  std::printf("\n");
  return errors == 0 ? 0 : 1;
}
