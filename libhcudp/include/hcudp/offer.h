// The one offer rule (issue 28): which devices of a node may be offered as
// free, and why not, for every mode — device-plugin resources, HAMi's
// registration, DRA slices. Pure: a function of the inventory (with its
// unknown cards and gaps) and the ledger's holdings (hcudp/ledger.h).
//
//   hcudp::OfferPlan plan = hcudp::DecideOffers(inventory, holdings,
//                                               hcudp::OfferMode::kDra);
//   for (const hcudp::DeviceOffer& d : plan.devices) if (d.free) ...
//
// The rule:
//   - a device is offered as free only when it, and the hardware it shares
//     (a vHCU's or MIG instance's card), is known and held by no one the
//     ledger knows of;
//   - a card that carries pre-split vHCUs or MIG instances — held or not,
//     known or not — is never offered whole; neither is any card of a node
//     in MIG mode, or whose MIG mode is unknown;
//   - a vHCU or MIG instance that a claim or pod holds is never offered as
//     free, mark file or not;
//   - unknown is never offered: an unknown card, a card whose vHCU or MIG
//     state may hide something, a device whose holders cannot be read;
//   - the exception: in kDra, a card that carries only claims' dynamic
//     vHCUs stays offered, as a shared device (shared = true): the
//     scheduler accounts the capacity those claims consumed (DESIGN §9).
//     In kHami every known card is shared by HAMi's scheduler; its verdict
//     carries what its vHCUs take (used_*), whoever made them.
#ifndef HCUDP_OFFER_H_
#define HCUDP_OFFER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hcudp/device.h"
#include "hcudp/export.h"
#include "hcudp/ledger.h"

namespace hcudp {

enum class OfferMode {
  kDevicePlugin,  // ListAndWatch: kubelet accounts its own allocations
  kHami,          // hygon.com/node-hcu-register: cards shared by capacity
  kDra,           // ResourceSlices: a card with claims' dynamic vHCUs is shared
};

// Why a device is not offered as free.
enum class NotFree {
  kNone,            // it is offered
  kUnknown,         // the device itself is unknown (unknown card, gap)
  kHoldersUnknown,  // a ledger record could not be read
  kHeld,            // a holder holds it
  kCarriesVhcus,    // a card with pre-split (or others') vHCUs
  kCarriesMig,      // a card with MIG instances
  kMigNode,         // a card of a node in MIG mode (vHCUs too)
  kMigModeUnknown,  // the MIG mode could not be read
  kParentUnknown,   // a vHCU's or MIG instance's card is unknown or gone
  kParentHeld,      // a vHCU's card is held whole
};
// "offered", "unknown", "holders unknown", "held", "carries vHCUs",
// "carries MIG instances", "MIG node", "MIG mode unknown",
// "parent card unknown", "parent card held".
HCUDP_EXPORT std::string_view NotFreeName(NotFree reason);

struct DeviceOffer {
  DeviceRef device;
  bool free = false;    // may be offered as free
  bool shared = false;  // free as a shared card (kDra, kHami)
  NotFree reason = NotFree::kNone;
  std::string why;  // for logs and hcuctl; "" when free
  // Cards: what the card's vHCUs take, held or not (those kept from the last
  // good look included)...
  int used_vhcus = 0;
  int used_compute_units = 0;
  uint64_t used_memory_mib = 0;
  // ...and of that, what vHCUs no HAMi pod holds take (pre-split ones, DRA
  // claims'): HAMi's scheduler, which counts only pods, cannot see it.
  int foreign_vhcus = 0;
  int foreign_compute_units = 0;
  uint64_t foreign_memory_mib = 0;
};

struct HCUDP_EXPORT OfferPlan {
  // Every card (known and unknown, by BDF), then every vHCU (by id), then
  // every MIG instance, as the inventory lists them.
  std::vector<DeviceOffer> devices;

  // The verdict on `device` (matched by kind and BDF, id or UUID); null when
  // the inventory does not have it.
  const DeviceOffer* Find(const DeviceRef& device) const;
  // Find(device) is offered as free.
  bool Free(const DeviceRef& device) const;
};

HCUDP_EXPORT OfferPlan DecideOffers(const NodeInventory& inventory, const Holdings& holdings,
                                    OfferMode mode);

}  // namespace hcudp

#endif  // HCUDP_OFFER_H_
