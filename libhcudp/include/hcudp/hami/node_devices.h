// The node device list: hami.io/node-hcu-register and
// hygon.com/node-hcu-register (§5.2), and how both are built from an inventory.
// Part of the HAMi codec (hcudp/hami/*.h; the rules for all of it are in
// hcudp/hami/keys.h).
#ifndef HCUDP_HAMI_NODE_DEVICES_H_
#define HCUDP_HAMI_NODE_DEVICES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hcudp/device.h"
#include "hcudp/export.h"
#include "hcudp/hami/keys.h"
#include "hcudp/offer.h"
#include "hcudp/status.h"

namespace hcudp::hami {

// One card in hami.io/node-hcu-register / hygon.com/node-hcu-register:
// "Id,Count,Devmem,Devcore,Type,Numa,Health,Index,Mode:".
struct NodeDevice {
  std::string id;               // "HCU-<serial>"
  int32_t count = 0;            // vHCU slots (split count, or what remains)
  int32_t devmem_mib = 0;       // memory, MiB
  int32_t devcore_percent = 0;  // compute, percent of the card
  std::string type;             // "HCU-K100_AI"
  // NUMA node; -1 when the card has none. int64: the vendor wrote the
  // uint32 numa_node_number, so "no NUMA" may read 4294967295.
  int64_t numa = 0;
  bool healthy = true;
  int index = 0;  // card index (dvInd)
  std::string mode = std::string(kNodeDeviceMode);

  HCUDP_EXPORT bool operator==(const NodeDevice& o) const;
};

// Records concatenated, each ending in ':'. Health is "true"/"false".
HCUDP_EXPORT StatusOr<std::string> EncodeNodeDevices(const std::vector<NodeDevice>& devices);
// Accepts the 9-field form and HAMi's 7-field form (Id..Health; then index
// is 0 and mode "hami-core", as HAMi decodes it). Health takes Go's
// strconv.ParseBool spellings. Id, Type and Mode must not contain ';' (the
// Id becomes a pod device UUID). The empty string is zero devices.
HCUDP_EXPORT StatusOr<std::vector<NodeDevice>> DecodeNodeDevices(std::string_view value);

// Both node lists built from one inventory, in card-index order.
struct NodeRegistration {
  std::vector<NodeDevice> full;       // hami.io/node-hcu-register
  std::vector<NodeDevice> remaining;  // hygon.com/node-hcu-register
  // One line per card left out of both lists, saying why (no memory, no
  // CUs, no model, no or duplicate serial, a separator in serial/model).
  std::vector<std::string> skipped;
};

// full: Count = split_count, Devmem = trunc(VRAM / MiB), Devcore = 100.
// remaining: Count = split_count - vHCUs on the card (never below 0), Devmem
// = trunc((VRAM - vHCU memory) / MiB), Devcore = trunc(free CU * 100 / CU),
// each never below 0. Whole-card allocations are not subtracted (the
// scheduler tracks them from pod annotations, as with the vendor plugin).
// Without the ledger: every vHCU taken for HAMi's own. Prefer the form
// below, which the agent uses.
HCUDP_EXPORT NodeRegistration BuildNodeRegistration(const NodeInventory& inventory,
                                                    int split_count);

// By the offer rule (hcudp/offer.h; `plan` from DecideOffers(inventory, the
// node's holdings, OfferMode::kHami)):
//   - a card the rule does not offer (its vHCU or MIG state unknown, a
//     whole-card holder, a MIG node) has nothing free in either list: Count,
//     Devmem and Devcore 0. Unknown is never capacity;
//   - full subtracts what vHCUs no HAMi pod holds take (an admin's pre-split
//     ones, DRA claims'): HAMi's scheduler subtracts only pods from it, and
//     would otherwise place pods on a card they fill;
//   - remaining subtracts every vHCU, as above.
HCUDP_EXPORT NodeRegistration BuildNodeRegistration(const NodeInventory& inventory,
                                                    const OfferPlan& plan, int split_count);

}  // namespace hcudp::hami

#endif  // HCUDP_HAMI_NODE_DEVICES_H_
