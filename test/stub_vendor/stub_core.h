// The shared core of the stand-in vendor libraries: one SimVendorLib for the
// process (so RSMI, DMI and MIG answers agree), the card view after fault
// injection, and the RSMI init refcount. Lives in libhcudp_stub_core.so, which
// the three soname libraries depend on.
#ifndef HCUDP_TEST_STUB_VENDOR_STUB_CORE_H_
#define HCUDP_TEST_STUB_VENDOR_STUB_CORE_H_

#include <string>
#include <vector>

#include "hcudp/vendor_lib.h"

#define HCUDP_STUB_API extern "C" __attribute__((visibility("default")))

namespace hcudp::stub {

// The SimVendorLib over knobs sim_node/host_root, created on first use;
// null when they are missing or invalid (the error is printed once).
VendorLib* Sim();

// The cards visible through the libraries (vanish_card removed), as
// SimNode/SimVendorLib indices, in RSMI order (SimNode order).
std::vector<int> VisibleCards();
// The same cards in DMI order: as libhydmi, the GPU nodes of the KFD
// topology under host_root in numeric node order (reference/hcu-hardware.md
// §1.9), matched to SimNode cards by BDF; RSMI order when there is no
// topology.
std::vector<int> VisibleCardsInDmiOrder();
// The SimNode index behind an RSMI / DMI index, or -1.
int SimIndexForRsmi(int rsmi_index);
int SimIndexForDmi(int dmi_index);
int DmiIndexForSim(int sim_index);

// RSMI init refcount; rsmi calls need it > 0.
int& RsmiRefcount();
// Successful rsmi_init calls so far (tests count re-initialisations).
int& RsmiInitCalls();
// Successful rsmi_init calls since the last hcudp_stub_reset().
int& RsmiInitsSinceReset();
// rsmi_shut_down calls that found nothing initialised (must stay 0).
int& RsmiUnbalancedShutdowns();
// DMI calls since the last reset, and whether the first one found hymgr
// down (libhydmi then answers NOT_INITIALIZED for the life of the process).
int& DmiCalls();
bool& DmiNeverInitialised();
// Whether a create gave the id of knob stale_vdev out again (since the last
// reset); from then on that vdev is a real one.
bool& StaleVdevReused();

// Consumes one failure from a countdown knob ("rsmi_init_failures",
// "destroy_busy"); true when this call must fail. -1 means always.
bool ConsumeFault(const std::string& key);

}  // namespace hcudp::stub

#endif  // HCUDP_TEST_STUB_VENDOR_STUB_CORE_H_
