// A DraPlugin in a process of its own, for the crash tests: serves a
// trivial handler until SIGTERM (clean stop) or SIGKILL (the crash whose
// leftovers the next instance must clear).
//
//   dra_wire_plugin <plugins-dir> <registry-dir> <instance-tag>
#include <signal.h>

#include <iostream>
#include <map>

#include "dra/dra_plugin.h"

namespace {

class EchoHandler final : public hcudp::daemon::dra::DraHandler {
 public:
  hcudp::StatusOr<std::map<std::string, hcudp::daemon::dra::PrepareResult>> Prepare(
      const std::vector<hcudp::daemon::dra::Claim>& claims,
      const hcudp::daemon::dra::CallContext&) override {
    std::map<std::string, hcudp::daemon::dra::PrepareResult> out;
    for (const auto& c : claims) out[c.uid].error = "served by the old instance";
    return out;
  }
  hcudp::StatusOr<std::map<std::string, std::string>> Unprepare(
      const std::vector<hcudp::daemon::dra::Claim>& claims,
      const hcudp::daemon::dra::CallContext&) override {
    std::map<std::string, std::string> out;
    for (const auto& c : claims) out[c.uid] = "";
    return out;
  }
  std::vector<hcudp::daemon::dra::DeviceHealth> HealthSnapshot() override { return {}; }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: dra_wire_plugin <plugins-dir> <registry-dir> <instance-tag>\n";
    return 2;
  }
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // before any thread starts

  EchoHandler handler;
  hcudp::daemon::dra::DraPluginOptions options;
  options.plugins_dir = argv[1];
  options.registry_dir = argv[2];
  options.instance_id = argv[3];
  hcudp::daemon::dra::DraPlugin plugin(options, handler);
  hcudp::Status st = plugin.Start();
  if (!st.ok()) {
    std::cerr << st.ToString() << "\n";
    return 1;
  }
  std::cerr << "serving " << plugin.service_socket_path() << std::endl;
  int sig = 0;
  sigwait(&signals, &sig);
  return plugin.Stop() ? 0 : 1;
}
