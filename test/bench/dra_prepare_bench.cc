// NodePrepare latency of DRA mode, as the library call the daemon's handler
// makes (Preparer::Prepare), on the simulated K100_AI node, with the claim
// GET going over loopback HTTP to a minimal API stand-in (one keep-alive
// connection, a canned claim per path). Figures go to BENCHMARKS.md.
//
//   whole card   result without consumedCapacity: the checkpoint entry
//                written once ("prepared", durably) and a whole-card mark
//                (not forced to disk: the entry names it), no vHCU;
//   dynamic vHCU consumedCapacity 30 CU / 8 GiB: the vHCU lifecycle's five
//                fsyncs, the claim's CDI spec and the checkpoint.
// Each claim is unprepared (not timed) before the next one.
// The floors, in the same run: the GET alone through the same client, one
// node discovery (Backend::Discover, which every Prepare does once), and one
// durable small-file write (temp file, fsync, rename, directory fsync) in the
// same file system: a Prepare makes one (card) or about five (vHCU) of them.
//
// Usage: bench_dra_prepare <sim-node.yaml> [iterations=200] [max_p50_ms_card=2]
//        [max_p50_ms_vhcu=10]   (exits 1 when a p50 is above its bound)
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.h"
#include "hcudp/backend.h"
#include "hcudp/dra/preparer.h"
#include "hcudp/options.h"
#include "hcudp/vhcu_manager.h"

namespace {

using hcudp::bench::BoundArgAt;
using hcudp::bench::CountArgAt;
using hcudp::bench::Percentile;

using SteadyClock = std::chrono::steady_clock;

// Serves GET <path> → the JSON stored for it (404 otherwise), HTTP/1.1
// keep-alive, one connection at a time.
class LoopbackApi {
 public:
  LoopbackApi() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd_, 8);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~LoopbackApi() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  int port() const { return port_; }
  void Put(const std::string& path, const std::string& json) {
    std::lock_guard<std::mutex> l(mu_);
    objects_[path] = json;
  }

 private:
  void Serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) continue;
      std::string buf;
      char chunk[4096];
      while (!stop_) {
        pollfd q{c, POLLIN, 0};
        if (::poll(&q, 1, 100) <= 0) continue;
        ssize_t n = ::read(c, chunk, sizeof chunk);
        if (n <= 0) break;
        buf.append(chunk, static_cast<size_t>(n));
        size_t end;
        while ((end = buf.find("\r\n\r\n")) != std::string::npos) {
          std::string head = buf.substr(0, end);
          buf.erase(0, end + 4);
          size_t sp = head.find(' ');
          std::string path = head.substr(sp + 1, head.find(' ', sp + 1) - sp - 1);
          path = path.substr(0, path.find('?'));
          std::string body;
          int code = 200;
          {
            std::lock_guard<std::mutex> l(mu_);
            auto it = objects_.find(path);
            if (it != objects_.end()) {
              body = it->second;
            } else {
              code = 404;
              body =
                  R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"message":"not found"})";
            }
          }
          std::string resp = "HTTP/1.1 " + std::to_string(code) +
                             (code == 200 ? " OK" : " Not Found") +
                             "\r\nContent-Type: application/json\r\nContent-Length: " +
                             std::to_string(body.size()) + "\r\n\r\n" + body;
          if (::write(c, resp.data(), resp.size()) < 0) break;
        }
      }
      ::close(c);
    }
  }

  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mu_;
  std::map<std::string, std::string> objects_;
};

std::string Claim(const std::string& uid, const std::string& device, const std::string& capacity) {
  std::string cap = capacity.empty() ? "" : ",\"consumedCapacity\":" + capacity;
  return "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{"
         "\"namespace\":\"bench\",\"name\":\"" +
         uid + "\",\"uid\":\"" + uid +
         "\"},\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"hcu\","
         "\"driver\":\"dra.hygon.com\",\"pool\":\"node-a\",\"device\":\"" +
         device + "\",\"shareID\":\"s-" + uid + "\"" + cap +
         "}]}},\"reservedFor\":[{\"resource\":\"pods\",\"name\":\"p\",\"uid\":\"pod-" + uid +
         "\"}]}}";
}

// One durable atomic write of a small file in `dir`.
void DurableWrite(const std::string& dir) {
  const std::string tmp = dir + "/.floor.tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::string data(600, 'x');
  if (fd < 0 || ::write(fd, data.data(), data.size()) < 0 || ::fsync(fd) != 0) std::abort();
  ::close(fd);
  if (::rename(tmp.c_str(), (dir + "/floor").c_str()) != 0) std::abort();
  int d = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (d < 0 || ::fsync(d) != 0) std::abort();
  ::close(d);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <sim-node.yaml> [iterations] [max_p50_card] [max_p50_vhcu]\n",
                 argv[0]);
    return 2;
  }
  const int iterations = static_cast<int>(CountArgAt(argc, argv, 2, "iterations", 200));
  const double max_card = BoundArgAt(argc, argv, 3, "max_p50_card", 2);
  const double max_vhcu = BoundArgAt(argc, argv, 4, "max_p50_vhcu", 10);
  char tmpl[] = "/tmp/hcudp-bench-dra-XXXXXX";
  const std::string root = ::mkdtemp(tmpl);

  hcudp::Options o;
  o.backend = hcudp::BackendKind::kSim;
  o.sim_node_path = argv[1];
  o.host_root = root;
  auto backend = hcudp::OpenBackend(o);
  if (!backend.ok()) {
    std::fprintf(stderr, "%s\n", backend.status().ToString().c_str());
    return 1;
  }
  auto inventory = (*backend)->Discover();
  hcudp::VhcuManagerOptions mo;
  mo.host_root = root;
  hcudp::VhcuManager manager(backend->get(), mo);
  LoopbackApi api;
  hcudp::KubeConfig config;
  config.source = "bench";
  config.server = "http://127.0.0.1:" + std::to_string(api.port());
  auto client = hcudp::KubeClient::New(config);
  if (!client.ok()) return 1;
  hcudp::dra::PreparerOptions po;
  po.host_root = root;
  po.pool_name = "node-a";
  hcudp::dra::Preparer preparer(
      backend->get(), &manager,
      hcudp::dra::KubeClaimFetcher(client->get(), std::chrono::seconds(5)), po);
  if (!preparer.Recover().ok()) return 1;
  const std::string card = hcudp::dra::CardDeviceName(inventory->cards[0]);

  struct Run {
    const char* name;
    std::string capacity;
    std::vector<double> ms;
  };
  std::vector<Run> runs = {{"whole card", "", {}},
                           {"dynamic vHCU", R"({"cores":"30","memory":"8Gi","slices":"1"})", {}}};
  std::vector<double> floor_ms;
  std::vector<double> fsync_ms;
  std::vector<double> discover_ms;
  for (int i = 0; i < iterations; ++i) {
    for (Run& run : runs) {
      const std::string uid = "b" + std::to_string(i) + (run.capacity.empty() ? "c" : "v");
      const hcudp::dra::ClaimRef ref{"bench", uid, uid};
      api.Put(hcudp::dra::ResourceClaimPath("bench", uid).ToString(),
              Claim(uid, card, run.capacity));
      auto t0 = SteadyClock::now();
      auto answer = preparer.Prepare(ref);
      auto t1 = SteadyClock::now();
      if (!answer.ok() || !answer->error.empty()) {
        std::fprintf(stderr, "prepare %s: %s\n", uid.c_str(),
                     answer.ok() ? answer->error.c_str() : answer.status().ToString().c_str());
        return 1;
      }
      run.ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      auto g0 = SteadyClock::now();
      auto got = (*client)->Get(hcudp::dra::ResourceClaimPath("bench", uid));
      auto g1 = SteadyClock::now();
      if (!got.ok()) return 1;
      floor_ms.push_back(std::chrono::duration<double, std::milli>(g1 - g0).count());
      if (!preparer.Unprepare(ref).ok()) return 1;
      auto d0 = SteadyClock::now();
      if (!(*backend)->Discover().ok()) return 1;
      discover_ms.push_back(
          std::chrono::duration<double, std::milli>(SteadyClock::now() - d0).count());
      auto w0 = SteadyClock::now();
      DurableWrite(root);
      fsync_ms.push_back(
          std::chrono::duration<double, std::milli>(SteadyClock::now() - w0).count());
    }
  }
  int rc = 0;
  std::printf("NodePrepare (Preparer::Prepare), %d claims each, sim k100ai node, loopback API\n",
              iterations);
  std::printf("  %-14s p50 %7.3f ms  p90 %7.3f ms\n", "GET floor", Percentile(floor_ms, 0.5),
              Percentile(floor_ms, 0.9));
  std::printf("  %-14s p50 %7.3f ms  p90 %7.3f ms\n", "durable write", Percentile(fsync_ms, 0.5),
              Percentile(fsync_ms, 0.9));
  std::printf("  %-14s p50 %7.3f ms  p90 %7.3f ms\n", "node discovery",
              Percentile(discover_ms, 0.5), Percentile(discover_ms, 0.9));
  for (const Run& run : runs) {
    const double p50 = Percentile(run.ms, 0.5);
    std::printf("  %-14s p50 %7.3f ms  p90 %7.3f ms\n", run.name, p50, Percentile(run.ms, 0.9));
    if (p50 > (run.capacity.empty() ? max_card : max_vhcu)) rc = 1;
  }
  std::string rm = "rm -rf " + root;
  if (std::system(rm.c_str()) != 0) rc = 1;
  return rc;
}
