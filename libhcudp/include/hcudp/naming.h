// Naming and inventory: strategy x naming policy -> the resources the plugin
// registers, with each resource's device IDs, health and NUMA node. Pure
// functions of a NodeInventory (reference/seed-behaviour.md §2.1-2.2,
// DESIGN.md §4.1).
#ifndef HCUDP_NAMING_H_
#define HCUDP_NAMING_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hcudp/device.h"
#include "hcudp/export.h"
#include "hcudp/offer.h"
#include "hcudp/options.h"
#include "hcudp/status.h"

namespace hcudp {

inline constexpr std::string_view kResourceNamespace = "hygon.com";

enum class DeviceKind {
  kCard,       // a whole card; ID = BDF
  kVhcu,       // a pre-split vHCU; ID = vdev<N>
  kMig,        // a MIG instance; ID = MIG-<uuid>
  kHamiCount,  // hcunum fake device; ID = HCU-<serial>-fake-<i>
  kHamiCores,  // hcucores fake device; ID = 0, 1, ...
};

HCUDP_EXPORT std::string_view DeviceKindName(DeviceKind kind);

// One device of a resource, as ListAndWatch reports it.
struct ResourceDevice {
  std::string id;
  Health health = Health::kHealthy;
  int numa_node = kNoNumaNode;  // kNoNumaNode: omit TopologyInfo
  int card = -1;                // parent card index; -1 for hcucores
  int vhcu_id = -1;             // kVhcu: the vdev index
  int mig_index = -1;           // kMig: index into NodeInventory::mig_instances
  // False when the offer rule does not offer it (held by an owner kubelet
  // does not know of, or unknown): listed, so a pod that holds it keeps its
  // ID, but Unhealthy, so kubelet never allocates it.
  bool offered = true;
};

struct Resource {
  std::string name;       // "hygon.com/hcu-share-15c-8g"
  std::string last_name;  // "hcu-share-15c-8g"
  DeviceKind kind = DeviceKind::kCard;
  std::vector<ResourceDevice> devices;
};

struct NamingParams {
  Strategy strategy = Strategy::kMixed;
  NamingPolicy policy = NamingPolicy::kDefault;
  int device_split_count = 4;     // hami: hcunum devices per card
  bool resource_multiple = false; // hami: also hcucores
};

// Upper bound of --device-split-count (hcunum devices per card). Every card
// lists that many hcunum devices in one ListAndWatch message, and kubelet
// refuses a message over 4 MiB (about 50 bytes a device): 1024 a card keeps
// a 64-card node under it. A card holds at most one vHCU per compute unit
// (120 on a K100_AI) anyway.
inline constexpr int kMaxDeviceSplitCount = 1024;
// InvalidArgument "<count> is above 1024: ..." (why, as above) or below 1.
HCUDP_EXPORT Status CheckDeviceSplitCount(int64_t count);

// Round half away from zero of bytes / 2^30 ("8188 MiB" -> 8, "16376" -> 16).
HCUDP_EXPORT int64_t RoundGiB(uint64_t bytes);

// Physical resource prefix of a card under `policy`: "hcu", "K100_AI",
// "K100-AI_64G_120CU". The model is cut at the first ','.
HCUDP_EXPORT std::string ResourcePrefix(const Card& card, NamingPolicy policy);
// "share-<cu>c-<GiB>g".
HCUDP_EXPORT std::string VhcuProfileKey(int compute_units, uint64_t memory_bytes);
// "mig-" + profile with '.' -> '-': "mig-4g-31gb".
HCUDP_EXPORT std::string MigProfileKey(std::string_view profile);
// "hcunum" / "K100_AI_hcunum" / "K100-AI_64G_120CU_hcunum" from card 0.
HCUDP_EXPORT std::string HamiCountName(const NodeInventory& inventory, NamingPolicy policy);
// The HAMi count name with "hcunum" replaced by `what` ("hcucores", "hcumem").
HCUDP_EXPORT std::string HamiDerivedName(const std::string& count_name, std::string_view what);

// Kubernetes extended-resource name check as kubelet applies it
// (kubelet-contract.md §2): InvalidArgument naming the bad name.
HCUDP_EXPORT Status ValidateResourceName(std::string_view full_name);

// The resources to register, in a stable order (physical, vHCU profiles,
// MIG profiles, HAMi; by name within each group), each with its devices
// sorted by ID (BDFs and MIG UUIDs bytewise, others naturally: vdev2 <
// vdev10). Resources whose name would be invalid are an InvalidArgument error
// naming the model.
//  - Each card is named under its own prefix (a mixed-model node gets one
//    physical resource per model under policies 1 and 2).
//  - On a MIG node whole cards and vHCUs are unusable: their resources are
//    registered with zero devices.
//  - vHCUs and MIG instances whose card is not in the inventory are left out.
//  - hami: device_split_count < 1 is InvalidArgument; hcucores has
//    cards.size() x 100 devices, Healthy, no NUMA, card -1.
HCUDP_EXPORT StatusOr<std::vector<Resource>> BuildResources(const NodeInventory& inventory,
                                                            const NamingParams& params);

// The same by the offer rule (hcudp/offer.h; `plan` from DecideOffers(
// inventory, the node's holdings, OfferMode::kDevicePlugin)), what the node
// watcher publishes:
//  - a whole card the rule does not offer is left out (unknown vHCU or MIG
//    state, MIG mode unknown, held by another owner, a MIG node; in mixed, a
//    card that carries vHCUs). Under strategy hcu a card carrying pre-split
//    vHCUs stays listed, as the vendor's plugin lists it (DESIGN §4.1);
//  - a vHCU or MIG instance the rule does not offer stays listed with
//    `offered` false (see ResourceDevice), except under MIG mode (vHCUs)
//    or when its card is not readable, where it is left out as above.
HCUDP_EXPORT StatusOr<std::vector<Resource>> BuildResources(const NodeInventory& inventory,
                                                            const NamingParams& params,
                                                            const OfferPlan& plan);

}  // namespace hcudp

#endif  // HCUDP_NAMING_H_
