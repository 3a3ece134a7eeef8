// DRA ResourceSlices (DESIGN.md §9): a node's inventory -> the
// resource.k8s.io/v1 ResourceSlice objects of its one pool. Pure functions;
// SlicePublisher (slice_publisher.h) writes them to the API server.
//
// Devices of the pool, in PCI-address order of their card:
//   hcu-<bdf, ':' and '.' as '-'>             a whole card (type "hcu"),
//                                              allowMultipleAllocations with
//                                              consumable cores/memory/slices
//   hcu-<bdf...>-vdev<N>                       a pre-split vHCU (type "vhcu")
//   hcu-<bdf...>-mig-<gi>-<ci>                 a MIG instance (type "mig")
// A card that carries vHCUs or MIG instances (or whose vHCU state could not be
// read, or on a MIG node) is not offered whole. An unhealthy card and its
// children carry the taint dra.hygon.com/unhealthy:NoSchedule, or are left
// out when `taints_supported` is false. Slices hold at most 128 devices, 64
// when one of them carries a taint; every slice names the pool's generation
// and slice count. The attribute list is in doc/dra.md.
#ifndef HCUDP_DRA_SLICES_H_
#define HCUDP_DRA_SLICES_H_

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hcudp/device.h"
#include "hcudp/dra/checkpoint.h"
#include "hcudp/export.h"
#include "hcudp/ledger.h"
#include "hcudp/status.h"

namespace hcudp::dra {

inline constexpr std::string_view kDriverName = "dra.hygon.com";
inline constexpr std::string_view kUnhealthyTaintKey = "dra.hygon.com/unhealthy";
inline constexpr int kMaxDevicesPerSlice = 128;
inline constexpr int kMaxDevicesPerSliceWithTaints = 64;

struct SliceParams {
  std::string node_name;  // required: the pool name and spec.nodeName
  std::string node_uid;   // the Node's UID: an ownerReference; empty: none
  std::string driver_name = std::string(kDriverName);
  // False where the API server drops device taints (DRADeviceTaints off):
  // unhealthy cards are then left out instead.
  bool taints_supported = true;
  // The `slices` capacity of a whole card (vHCUs it can carry), >= 1.
  int max_vhcus_per_card = 4;
};

enum class PoolDeviceType { kCard, kVhcu, kMig };
HCUDP_EXPORT std::string_view PoolDeviceTypeName(PoolDeviceType type);  // "hcu", "vhcu", "mig"

// One device of the pool, as published.
struct PoolDevice {
  std::string name;  // DNS label, unique in the pool
  PoolDeviceType type = PoolDeviceType::kCard;
  int card = -1;         // the (parent) card index
  std::string card_bdf;  // the (parent) card BDF
  int vhcu_id = -1;      // kVhcu: N of vdevN
  int mig_index = -1;    // kMig: index into NodeInventory::mig_instances
  bool tainted = false;  // carries dra.hygon.com/unhealthy
  int slice = 0;         // index of the slice holding it
  std::string json;      // the v1 Device object
};

// Something the inventory has that the pool does not offer, and why.
struct LeftOutDevice {
  std::string what;    // "card 3 (0000:29:00.0)", "vdev5"
  std::string reason;  // "unhealthy and the API server drops taints"
};

// The pool at one point in time, without generation (the publisher picks it).
struct PoolPlan {
  std::string pool_name;  // = node name
  std::string node_name;
  std::string node_uid;
  std::string driver_name;
  std::vector<PoolDevice> devices;  // in publication order
  std::vector<LeftOutDevice> left_out;
  int slice_count = 0;  // >= 1 (an empty pool is one empty slice)
  bool uses_taints = false;
};

// Device names (DESIGN §9), the one definition the slices and Prepare share:
//   card BDF "0000:3b:00.0"          -> "hcu-0000-3b-00-0"
//   its vHCU 3                       -> "hcu-0000-3b-00-0-vdev3"
//   its MIG instance (GI 1, CI 0)    -> "hcu-0000-3b-00-0-mig-1-0"
HCUDP_EXPORT std::string CardDeviceName(std::string_view bdf);
HCUDP_EXPORT std::string VhcuDeviceName(std::string_view card_bdf, int vhcu_id);
HCUDP_EXPORT std::string MigDeviceName(std::string_view card_bdf, int gpu_instance,
                                       int compute_instance);

// What the slices offer: the node's inventory less the vHCUs and MIG
// instances that are not free devices, and the cards never offered whole.
// Implicitly made from a bare inventory (every card without children may
// then be offered whole), as tests and tools describe a node.
struct SliceOffer {
  SliceOffer() = default;
  // NOLINTNEXTLINE(google-explicit-constructor): a bare inventory is an offer
  SliceOffer(NodeInventory inv) : inventory(std::move(inv)) {}
  NodeInventory inventory;
  // BDFs of cards that carry children held by a claim or a pod, or children
  // whose owners cannot be read: not offered whole (issue 28, repro 1).
  std::set<std::string> not_whole;
  std::vector<LeftOutDevice> left_out;  // what OfferSlices held back, and why
};

// The pool of `offer`. InvalidArgument naming the field for a bad node
// name or driver name, a card BDF that gives no valid device name, or
// max_vhcus_per_card < 1.
HCUDP_EXPORT StatusOr<PoolPlan> BuildPoolPlan(const SliceOffer& offer, const SliceParams& params);

// The slices' reading of the one offer rule (hcudp/offer.h, DecideOffers in
// OfferMode::kDra) over the ledger's holdings (hcudp/ledger.h): a vHCU or
// MIG instance is a device of the pool only when it is offered free; a card
// that is not free (it carries pre-split vHCUs or MIG instances, held or
// not; it is held whole; something on it is unknown) is never offered
// whole; a card carrying only claims' dynamic vHCUs stays offered, shared.
// The vHCUs claims or pods made are capacity consumed, not devices, and are
// not listed in left_out; everything else held back is, with why.
HCUDP_EXPORT SliceOffer OfferSlices(const NodeInventory& inventory, const Holdings& holdings);
// The same, reading the ledger now from the records under `host_root`
// (`cdi_dir`, a host path, holds Hygon's state file; "" skips it).
HCUDP_EXPORT SliceOffer OfferSlices(const NodeInventory& inventory, const std::string& host_root,
                                    const std::string& cdi_dir);

// The ResourceSlice object (JSON) of slice `index` of `plan` at `generation`:
// apiVersion resource.k8s.io/v1, metadata.generateName
// "<node>-<driver>-", the Node ownerReference when node_uid is set, and
// spec {driver, nodeName, pool{name, generation, resourceSliceCount},
// devices}. Precondition: 0 <= index < plan.slice_count.
HCUDP_EXPORT std::string SliceObjectJson(const PoolPlan& plan, int index, int64_t generation);

// All slices of the plan at `generation`, as one v1 ResourceSliceList.
HCUDP_EXPORT std::string SliceListJson(const PoolPlan& plan, int64_t generation);

// HSL islands: cards joined by HSL (or HYSWITCH) links, transitively. Returns
// one island number per card of `inventory.cards` (same order), numbered
// 0, 1, ... by the lowest BDF in each island; a card with no such link is an
// island of its own.
HCUDP_EXPORT std::vector<int> HslIslands(const NodeInventory& inventory);

// A Kubernetes quantity in canonical form, as the API server stores it:
// binary (Ki..Ei, the largest that divides `bytes`) or plain decimal with
// k/M/G/T/P/E when `value` is an exact multiple.
HCUDP_EXPORT std::string BinaryQuantity(uint64_t bytes);
HCUDP_EXPORT std::string DecimalQuantity(uint64_t value);

}  // namespace hcudp::dra

#endif  // HCUDP_DRA_SLICES_H_
