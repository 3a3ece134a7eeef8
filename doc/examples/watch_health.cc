// doc/library.md's node-watcher example: print every card health change of a
// simulated node until SIGINT or SIGTERM. Run by test/watch (watch_example)
// and built against the installed package by test/consumer/run.sh.
#include <hcudp/node_watcher.h>
#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  // Block the signals that end the watch before any thread starts (every
  // thread inherits the mask); sigwait below takes them.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  hcudp::Options options;
  options.backend = hcudp::BackendKind::kSim;
  options.sim_node_path = argv[1];  // edit a card's `health:` in it to inject a fault
  options.host_root = argv[2];
  options.pulse_seconds = 10;  // node-file changes are seen at once anyway
  auto backend = hcudp::OpenBackend(options);
  if (!backend.ok()) return std::fprintf(stderr, "%s\n", backend.status().ToString().c_str()), 1;

  hcudp::NodeState state;
  hcudp::NodeWatcher watcher(options, backend->get(), &state);
  // On the watcher's thread, after the hysteresis (two readings in a row).
  watcher.set_health_listener(
      [](const hcudp::Card& card, hcudp::Health health, const std::string& reason) {
        std::printf("card %d %s is now %s%s%s\n", card.index, card.bdf.c_str(),
                    std::string(hcudp::HealthName(health)).c_str(), reason.empty() ? "" : ": ",
                    reason.c_str());
        std::fflush(stdout);
      });
  if (hcudp::Status st = watcher.Start(); !st.ok()) {
    return std::fprintf(stderr, "%s\n", st.ToString().c_str()), 1;
  }
  std::printf("watching %zu cards\n", state.Current()->inventory.cards.size());
  std::fflush(stdout);

  int signal = 0;
  sigwait(&stop, &signal);
  return watcher.Stop() ? 0 : 1;
}
