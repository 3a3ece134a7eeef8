// The kubelet side of the image smoke test (scripts/image-smoke.sh): the
// project's fake kubelet, run on the host, serving kubelet.sock in a directory
// that is bind-mounted into the container where hcu-dp-daemon runs.
//
//   hcudp_smoke_kubelet <plugin-dir> <resource> <done-fifo> [timeout-seconds]
//
// Waits for the daemon to register <resource> and send its device list, asks
// for one Allocate of the first device as kubelet would, checks the answer
// (one container response carrying /dev/kfd and the card's /dev/dri nodes),
// then writes one line to <done-fifo> (the container's cue to SIGTERM the
// daemon) and waits until the daemon closes its ListAndWatch stream. Every
// step has the deadline; exit 0 only when all of them passed.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <set>
#include <string>
#include <thread>

#include "fake_kubelet/fake_kubelet.h"

namespace {

// Writes one line to the FIFO once its reader (the container) has it open.
// A non-blocking open fails with ENXIO while there is no reader; it is
// retried until the deadline, so a container that died never hangs us.
std::string Cue(const std::string& fifo, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) {
      const char line[] = "allocated\n";
      ssize_t n = ::write(fd, line, sizeof(line) - 1);
      ::close(fd);
      if (n != static_cast<ssize_t>(sizeof(line) - 1)) return "cannot write " + fifo;
      return "";
    }
    if (errno != ENXIO) return "cannot open " + fifo + ": " + std::strerror(errno);
    if (std::chrono::steady_clock::now() >= deadline)
      return "nobody read " + fifo + " within the deadline";
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

int Fail(const std::string& what) {
  std::cerr << "smoke_kubelet: FAIL: " << what << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || argc > 5) {
    std::cerr
        << "usage: hcudp_smoke_kubelet <plugin-dir> <resource> <done-fifo> [timeout-seconds]\n";
    return 2;
  }
  const std::string dir = argv[1];
  const std::string resource = argv[2];
  const std::string fifo = argv[3];
  const std::chrono::seconds timeout(argc == 5 ? std::atoi(argv[4]) : 60);
  if (timeout.count() <= 0) return Fail(std::string("bad timeout '") + argv[4] + "'");

  hcudp::testing::FakeKubelet::Config config;
  config.plugin_dir = dir;
  hcudp::testing::FakeKubelet kubelet(config);
  if (std::string err = kubelet.Start(); !err.empty()) return Fail("kubelet start: " + err);
  std::cout << "smoke_kubelet: serving " << kubelet.kubelet_socket() << std::endl;

  auto snap = kubelet.WaitForRegistration(resource, timeout);
  if (!snap)
    return Fail("no registration of " + resource + " with a device list within the deadline");
  if (snap->devices.empty()) return Fail(resource + " registered with no devices");
  std::cout << "smoke_kubelet: " << resource << " registered by " << snap->endpoint << " with "
            << snap->devices.size() << " devices" << std::endl;

  const std::string id = snap->devices.front().id();
  v1beta1::AllocateResponse response;
  grpc::Status s = kubelet.Allocate(resource, {{id}}, &response);
  if (!s.ok()) return Fail("Allocate(" + id + "): " + s.error_message());
  if (response.container_responses_size() != 1) return Fail("Allocate: not one container response");
  std::set<std::string> paths;
  for (const auto& d : response.container_responses(0).devices()) paths.insert(d.container_path());
  bool dri = false;
  for (const auto& p : paths) dri = dri || p.rfind("/dev/dri/", 0) == 0;
  if (!paths.count("/dev/kfd") || !dri)
    return Fail("Allocate(" + id + "): no /dev/kfd or /dev/dri node");
  std::cout << "smoke_kubelet: Allocate(" << id << ") answered with " << paths.size()
            << " device nodes" << std::endl;

  if (std::string err = Cue(fifo, timeout); !err.empty()) return Fail(err);
  auto ended = kubelet.WaitFor(
      resource, [](const hcudp::testing::ResourceSnapshot& r) { return !r.current_stream_open; },
      timeout);
  if (!ended) return Fail("the daemon did not close its ListAndWatch stream after SIGTERM");
  std::cout << "smoke_kubelet: stream closed (" << ended->last_stream_status << ")" << std::endl;
  return 0;
}
