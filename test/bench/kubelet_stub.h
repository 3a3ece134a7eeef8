// A minimal kubelet for benchmarks and the daemon smoke test: a Registration
// server on <dir>/kubelet.sock that, like kubelet, dials the plugin back and
// calls GetDevicePluginOptions before Register returns, and records each
// registration with its arrival time. (The full fake kubelet lives in
// test/fake_kubelet/; this is deliberately small.)
#ifndef HCUDP_TEST_BENCH_KUBELET_STUB_H_
#define HCUDP_TEST_BENCH_KUBELET_STUB_H_

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "deviceplugin_v1beta1.grpc.pb.h"

namespace hcudp::testing {

struct Registration {
  std::string resource_name;
  std::string endpoint;
  bool preferred_allocation = false;
  std::chrono::steady_clock::time_point at;
};

class KubeletStub {
 public:
  explicit KubeletStub(std::string dir);
  ~KubeletStub();

  // Serves kubelet.sock (removing every socket in the directory first when
  // `wipe_sockets`, as a restarting kubelet does).
  bool Start(bool wipe_sockets);
  void Stop();

  // Waits until at least `n` registrations arrived since `since`.
  bool WaitRegistrations(size_t n, std::chrono::steady_clock::time_point since,
                         std::chrono::milliseconds timeout);
  std::vector<Registration> registrations();

  // A channel to a plugin endpoint (base name) in the directory.
  std::shared_ptr<grpc::Channel> Dial(const std::string& endpoint) const;
  const std::string& dir() const { return dir_; }

 private:
  class Service;
  std::string dir_;
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Registration> registrations_;
  friend class Service;
};

// Allocate latency and memory readings of a process.
uint64_t ProcStatusKib(int pid, const std::string& field);  // "VmRSS", "RssAnon"

}  // namespace hcudp::testing

#endif  // HCUDP_TEST_BENCH_KUBELET_STUB_H_
