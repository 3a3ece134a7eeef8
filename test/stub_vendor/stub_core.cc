#include "stub_core.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>

#include "hcudp/sim_node.h"
#include "stub_control.h"
#include "vendor/kfd_topology.h"

namespace hcudp::stub {
namespace {

std::mutex& Mu() {
  static std::mutex mu;
  return mu;
}

struct State {
  std::unique_ptr<VendorLib> sim;
  bool tried = false;
  std::map<std::string, long> faults_used;
  int rsmi_inits = 0;
  int dmi_calls = 0;
  bool dmi_never_initialised = false;
  bool stale_vdev_reused = false;
};

State& TheState() {
  static State* state = new State();  // never destroyed: no exit-time order issues
  return *state;
}

}  // namespace

VendorLib* Sim() {
  std::unique_ptr<VendorLib>& sim = TheState().sim;
  bool& tried = TheState().tried;
  std::lock_guard lock(Mu());
  if (!tried) {
    tried = true;
    std::optional<std::string> node = Knob("sim_node");
    std::optional<std::string> root = Knob("host_root");
    if (!node || !root) {
      std::fprintf(stderr,
                   "stub vendor library: set HCUDP_STUB_SIM_NODE and HCUDP_STUB_HOST_ROOT\n");
      return nullptr;
    }
    StatusOr<std::unique_ptr<VendorLib>> lib = NewSimVendorLib(*node, *root);
    if (!lib.ok()) {
      std::fprintf(stderr, "stub vendor library: %s\n", lib.status().ToString().c_str());
      return nullptr;
    }
    sim = std::move(lib).value();
  }
  return sim.get();
}

std::vector<int> VisibleCards() {
  std::vector<int> cards;
  VendorLib* sim = Sim();
  if (sim == nullptr) return cards;
  StatusOr<int> n = sim->CardCount();
  const long vanished = KnobInt("vanish_card", -1);
  for (int i = 0; n.ok() && i < *n; ++i) {
    if (i != vanished) cards.push_back(i);
  }
  return cards;
}

std::vector<int> VisibleCardsInDmiOrder() {
  std::vector<int> cards = VisibleCards();
  std::optional<std::string> root = Knob("host_root");
  if (!root) return cards;
  StatusOr<std::vector<std::string>> kfd = vendor::ReadKfdGpuBdfs(internal::HostFs(*root));
  if (!kfd.ok()) return cards;
  std::vector<int> ordered;
  for (const std::string& bdf : *kfd) {
    for (int c : cards) {
      StatusOr<std::string> b = Sim()->PciBdf(c);
      if (b.ok() && *b == bdf) ordered.push_back(c);
    }
  }
  return ordered;
}

int SimIndexForRsmi(int rsmi_index) {
  std::vector<int> cards = VisibleCards();
  return rsmi_index >= 0 && rsmi_index < static_cast<int>(cards.size()) ? cards[rsmi_index] : -1;
}

int SimIndexForDmi(int dmi_index) {
  std::vector<int> cards = VisibleCardsInDmiOrder();
  return dmi_index >= 0 && dmi_index < static_cast<int>(cards.size()) ? cards[dmi_index] : -1;
}

int DmiIndexForSim(int sim_index) {
  std::vector<int> cards = VisibleCardsInDmiOrder();
  auto it = std::find(cards.begin(), cards.end(), sim_index);
  return it == cards.end() ? -1 : static_cast<int>(it - cards.begin());
}

int& RsmiRefcount() {
  static int refcount = 0;
  return refcount;
}

int& RsmiInitCalls() {
  static int calls = 0;
  return calls;
}

int& RsmiInitsSinceReset() { return TheState().rsmi_inits; }

int& RsmiUnbalancedShutdowns() {
  static int count = 0;
  return count;
}

int& DmiCalls() { return TheState().dmi_calls; }
bool& DmiNeverInitialised() { return TheState().dmi_never_initialised; }
bool& StaleVdevReused() { return TheState().stale_vdev_reused; }

bool ConsumeFault(const std::string& key) {
  std::lock_guard lock(Mu());
  std::map<std::string, long>& used = TheState().faults_used;
  const long budget = KnobInt(key, 0);
  if (budget < 0) return true;
  if (used[key] >= budget) return false;
  ++used[key];
  return true;
}

}  // namespace hcudp::stub

// Lets tests check that Init/Shutdown are balanced.
HCUDP_STUB_API int hcudp_stub_rsmi_refcount() { return hcudp::stub::RsmiRefcount(); }
HCUDP_STUB_API int hcudp_stub_rsmi_init_calls() { return hcudp::stub::RsmiInitCalls(); }
HCUDP_STUB_API int hcudp_stub_rsmi_unbalanced_shutdowns() {
  return hcudp::stub::RsmiUnbalancedShutdowns();
}

// Forgets the SimVendorLib and the fault countdowns, so the next call starts
// from the current knobs (tests call it between cases). The RSMI refcount
// is kept: it is what balance tests observe.
HCUDP_STUB_API void hcudp_stub_reset() {
  hcudp::stub::State& state = hcudp::stub::TheState();
  std::lock_guard lock(hcudp::stub::Mu());
  state.sim.reset();
  state.tried = false;
  state.faults_used.clear();
  state.rsmi_inits = 0;
  state.dmi_calls = 0;
  state.dmi_never_initialised = false;
  state.stale_vdev_reused = false;
}

// On a real node the driver's files exist before anyone loads the vendor
// libraries; the stand-in renders its node when it is loaded, so that a
// DlopenVendorLib pointed at an empty host-root finds the driver live.
__attribute__((constructor)) static void RenderOnLoad() {
  if (hcudp::stub::Knob("sim_node") && hcudp::stub::Knob("host_root")) (void)hcudp::stub::Sim();
}
