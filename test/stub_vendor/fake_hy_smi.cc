// A fake `hy-smi` for tests, placed as <test hyhal>/bin/hy-smi. It answers
// from the same SimNode and knobs as the stand-in libraries (stub_control.h):
//   --healthcheck        one "HCU[i] : Bus Id : <bdf> : <word>" line per card
//   --showdriverversion  "Driver Version: <SimNode driverVersion>"
//   --version            "hy-smi version <knob hysmi_version, default 1.6.2>"
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "hcudp/sim_node.h"
#include "stub_control.h"

namespace {

using hcudp::stub::Knob;

std::unique_ptr<hcudp::VendorLib> OpenSim() {
  std::optional<std::string> node = Knob("sim_node");
  std::optional<std::string> root = Knob("host_root");
  if (!node || !root) {
    std::fprintf(stderr, "hy-smi (fake): HCUDP_STUB_SIM_NODE / HCUDP_STUB_HOST_ROOT not set\n");
    return nullptr;
  }
  hcudp::StatusOr<std::unique_ptr<hcudp::VendorLib>> lib = hcudp::NewSimVendorLib(*node, *root);
  if (!lib.ok()) {
    std::fprintf(stderr, "hy-smi (fake): %s\n", lib.status().ToString().c_str());
    return nullptr;
  }
  return std::move(lib).value();
}

// Knob hysmi_signals=<file>: records how this process started, "blocked N"
// (signals in the inherited mask) and "sigterm default|ignored|handled".
void RecordSignalState() {
  std::optional<std::string> path = Knob("hysmi_signals");
  if (!path) return;
  sigset_t mask;
  sigemptyset(&mask);
  sigprocmask(SIG_BLOCK, nullptr, &mask);
  int blocked = 0;
  for (int sig = 1; sig < NSIG; ++sig) blocked += sigismember(&mask, sig) == 1;
  struct sigaction term {};
  sigaction(SIGTERM, nullptr, &term);
  const char* disposition = term.sa_handler == SIG_DFL   ? "default"
                            : term.sa_handler == SIG_IGN ? "ignored"
                                                         : "handled";
  std::ofstream(*path) << "blocked " << blocked << "\nsigterm " << disposition << "\n";
}

int HealthCheck(hcudp::VendorLib& sim) {
  // Knob hysmi_count=<file>: one line per run, so tests can count the runs.
  if (std::optional<std::string> count = Knob("hysmi_count")) {
    std::ofstream(*count, std::ios::app) << getpid() << "\n";
  }
  RecordSignalState();
  const std::string mode = Knob("hysmi").value_or("");
  if (mode == "fail") {
    std::fprintf(stderr, "hy-smi: unable to communicate with the driver\n");
    return 1;
  }
  if (mode == "hang") {
    // A hung tool that does not even die on SIGTERM (only SIGKILL ends it).
    signal(SIGTERM, SIG_IGN);
    sleep(60);
    return 1;
  }
  std::printf(
      "============================ System Management Interface "
      "=============================\n");
  if (mode != "empty") {
    hcudp::StatusOr<std::vector<hcudp::CardHealthReport>> health = sim.QueryHealth();
    std::map<std::string, hcudp::Health> by_bdf;
    if (health.ok()) {
      for (const hcudp::CardHealthReport& r : *health) by_bdf[r.bdf] = r.health;
    }
    const std::string form = Knob("hysmi_form").value_or("HCU");
    const long vanished = hcudp::stub::KnobInt("vanish_card", -1);
    hcudp::StatusOr<int> n = sim.CardCount();
    int printed = 0;
    for (int card = 0; n.ok() && card < *n; ++card) {
      if (card == vanished) continue;
      hcudp::StatusOr<std::string> bdf = sim.PciBdf(card);
      if (!bdf.ok()) continue;
      std::string word =
          by_bdf.count(*bdf) && by_bdf[*bdf] == hcudp::Health::kUnhealthy ? "Unhealthy" : "Healthy";
      if (std::optional<std::string> w = hcudp::stub::CardKnob("hysmi_word", card)) word = *w;
      if (word == "-") continue;  // the card is omitted
      if (mode == "odd") {
        // Lines the parser must skip, between and around good ones.
        std::printf("HCU[%d] : Bus Id : garbled\n", printed);
        std::printf("Warning: HCU[%d] temperature sensor not ready\n", printed);
      }
      std::printf("%s[%d]          : Bus Id : %s         : %s\n", form.c_str(), printed++,
                  bdf->c_str(), word.c_str());
    }
  }
  std::printf(
      "======================================================================================\n");
  std::printf(
      "=================================== End of SMI Log ===================================\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string arg = argc > 1 ? argv[1] : "";
  if (arg == "--version") {
    std::printf("hy-smi version %s\n", Knob("hysmi_version").value_or("1.6.2").c_str());
    return 0;
  }
  std::unique_ptr<hcudp::VendorLib> sim = OpenSim();
  if (sim == nullptr) return 1;
  if (arg == "--healthcheck") return HealthCheck(*sim);
  if (arg == "--showdriverversion") {
    hcudp::StatusOr<std::string> v = sim->DriverVersion();
    if (!v.ok()) return 1;
    std::printf("Driver Version: %s\n", v->c_str());
    return 0;
  }
  std::fprintf(stderr, "hy-smi (fake): unsupported arguments\n");
  return 2;
}
