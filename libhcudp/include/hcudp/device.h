// The device model: what a node has. Plain values, copied freely; produced by
// a Backend (discovery) and consumed by naming, allocation and the CLI.
#ifndef HCUDP_DEVICE_H_
#define HCUDP_DEVICE_H_

#include <cassert>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hcudp/export.h"
#include "hcudp/status.h"

namespace hcudp {

enum class Health { kHealthy, kUnhealthy };

// Exactly "Healthy" / "Unhealthy", the strings kubelet expects.
HCUDP_EXPORT std::string_view HealthName(Health health);
// Accepts exactly "Healthy" or "Unhealthy".
HCUDP_EXPORT StatusOr<Health> ParseHealth(std::string_view text);

inline constexpr int kNoNumaNode = -1;
inline constexpr uint64_t kMiB = 1024ull * 1024ull;
inline constexpr uint64_t kGiB = 1024ull * kMiB;

// A physical HCU. `index` is the DMI/RSMI index; BDF is the stable key.
struct Card {
  int index = 0;
  std::string bdf;            // "0000:09:00.0", lower-case
  std::string model;          // DMI device name, cut at the first ',' ("K100_AI")
  uint16_t pci_device_id = 0; // 0x6210
  std::string serial;         // board serial, "T6T8290019020401"
  int compute_units = 0;      // DMI compute_unit_count
  uint64_t memory_bytes = 0;  // VRAM total
  int numa_node = kNoNumaNode;
  Health health = Health::kHealthy;
  // DRI nodes of this card as host paths ("/dev/dri/card1",
  // "/dev/dri/renderD128"), from /sys/module/<drv>/drivers/pci:<drv>/<bdf>/drm.
  // Empty when the lookup failed; dri_error then says why.
  std::vector<std::string> dri_nodes;
  std::string dri_error;
  // The card's place in the PCI hierarchy, from the /sys/bus/pci/devices/<bdf>
  // link: its sysfs directory as a host path
  // ("/sys/devices/pci0000:00/0000:00:01.1/0000:09:00.0") and the PCIe root
  // complex it hangs from, "pci<domain>:<bus>" ("pci0000:00"), the format of
  // the standard attribute resource.kubernetes.io/pcieRoot. Both empty when
  // the link cannot be read or resolved (the card stays usable).
  std::string sysfs_dir;
  std::string pcie_root;

  uint64_t memory_mib() const { return memory_bytes / kMiB; }
};

// A vHCU (virtual HCU): a slice of one card, recorded in /etc/vdev/vdev<id>.conf.
struct Vhcu {
  int id = 0;                 // node-global vdev index N of vdevN
  int card = 0;               // parent card index; -1: its card was not discovered
  std::string card_bdf;       // parent card BDF
  int compute_units = 0;
  uint64_t memory_mib = 0;
  int pipe_id = 0;
  uint64_t cu_mask_lo = 0;    // CUs 0..63
  uint64_t cu_mask_hi = 0;    // CUs 64..127
  uint64_t container_id = 0;  // bound container, 0 if none
  std::string conf_path;      // host path "/etc/vdev/vdev<id>.conf"

  uint64_t memory_bytes() const { return memory_mib * kMiB; }
};

// A MIG compute instance, from /etc/dmi_mig_config/ci/dev<d>gi<g>ci<c>.conf.
struct MigInstance {
  int card = 0;               // card index, by the conf's pci; -1: not discovered
  std::string card_bdf;
  int gpu_instance = 0;       // GI id
  int compute_instance = 0;   // CI id
  // Profile name without the "MIG " prefix: "4g.31gb", or "1c.4g.31gb" when
  // the CI uses fewer slices than its GI.
  std::string profile;
  int compute_units = 0;
  uint64_t memory_mib = 0;
  std::string uuid;           // mig_uuid, without the "MIG-" prefix
  std::string conf_path;      // host path of the ci conf

  std::string device_id() const { return "MIG-" + uuid; }
};

// Why part of the node's state is unknown (issue 23). Unknown is never
// absent: what it hides may exist, so nothing is destroyed, published as free
// or offered whole because of it.
enum class UnknownReason {
  kQueryFailed,        // a vendor query about the card failed
  kConfTorn,           // a vdev<N>.conf is empty, truncated or invalid
  kVdevUnreadable,     // /etc/vdev is missing, not a directory or unreadable
  kMissedDiscovery,    // a card seen before was not found by this discovery
  kMigModeUnknown,     // the MIG mode query failed: any card may be split
  kMigConfUnreadable,  // /etc/dmi_mig_config/ci (or a CI conf in it) unreadable
};

// "query failed", "conf torn", "/etc/vdev unreadable", "missed by discovery",
// "MIG mode unknown", "MIG conf unreadable".
HCUDP_EXPORT std::string_view UnknownReasonName(UnknownReason reason);

// vHCU state that discovery could not read: an empty, truncated or invalid
// vdev<N>.conf (a non-atomic rewrite), /etc/vdev missing, not a directory
// or unreadable, the host-root gone. What it hides is unknown, so it is
// never read as "no vHCUs" (fail closed).
struct VhcuStateGap {
  int vhcu_id = -1;    // the N of the conf; -1: the whole /etc/vdev
  int card = -1;       // the card it concerns; -1: any card
  std::string path;    // the host path that could not be read
  std::string reason;  // why, for the log
  // kConfTorn (vhcu_id >= 0) or kVdevUnreadable (vhcu_id == -1).
  UnknownReason kind = UnknownReason::kVdevUnreadable;
};

// MIG state that discovery could not read: the MIG mode query failed
// (kMigModeUnknown: whether cards are split at all is unknown), or the CI
// conf directory or one CI conf could not be read (kMigConfUnreadable: the
// instances it hides are unknown). Never read as "MIG off" or "no instance".
struct MigStateGap {
  std::string path;    // the conf or directory, or "MIG mode" for the query
  std::string reason;  // why, for the log
  UnknownReason kind = UnknownReason::kMigModeUnknown;
};

// A card whose state discovery could not read this time: its queries failed,
// or it was seen before and this discovery did not find it. It stays in the
// model, with its last known identity, until its absence is confirmed (the
// PCI device is gone, or several discoveries in a row agree).
struct UnknownCard {
  // The last known identity. `bdf` is empty when it was never read (the
  // card's first queries failed): it may then be any card not in `cards`.
  Card last_known;
  UnknownReason reason = UnknownReason::kQueryFailed;
  std::string path;    // the BDF or sysfs path concerned, for the log
  std::string detail;  // why, for the log
  int missed = 1;      // discoveries in a row that could not read it
};

// The answer of a lookup that can meet unknown state. There is no boolean
// "found": a caller names the state it acts on (switch on certainty(), where
// -Wswitch catches a missed case), so unknown is never read as absent
// without saying so.
enum class Certainty { kFound, kAbsent, kUnknown };

// "found", "absent", "unknown".
HCUDP_EXPORT std::string_view CertaintyName(Certainty certainty);

template <typename T>
class [[nodiscard]] Lookup {
 public:
  static Lookup Found(const T& value) { return Lookup(Certainty::kFound, &value, {}); }
  static Lookup Absent() { return Lookup(Certainty::kAbsent, nullptr, {}); }
  static Lookup Unknown(std::string why) {
    return Lookup(Certainty::kUnknown, nullptr, std::move(why));
  }

  Certainty certainty() const { return certainty_; }
  // Precondition: certainty() is kFound. Refers into the inventory looked in.
  const T& value() const {
    assert(value_ != nullptr);
    return *value_;
  }
  // Why the answer is unknown (names the path or the failed query); empty
  // otherwise.
  const std::string& why() const { return why_; }

 private:
  Lookup(Certainty certainty, const T* value, std::string why)
      : certainty_(certainty), value_(value), why_(std::move(why)) {}
  Certainty certainty_;
  const T* value_;
  std::string why_;
};

enum class LinkType { kNone, kPcie, kHsl, kHyswitch, kUnknown };

// "NONE", "PCIE", "HSL", "HYSWITCH", "UNKNOWN" (the vendor's spelling).
HCUDP_EXPORT std::string_view LinkTypeName(LinkType type);
HCUDP_EXPORT StatusOr<LinkType> ParseLinkType(std::string_view text);

// How two cards are connected, as the driver reports it.
struct Link {
  int src = 0;  // card index
  int dst = 0;  // card index
  LinkType type = LinkType::kPcie;
  int hops = 2;
  // The driver's link weight: a distance, lower is closer (RSMI/KFD).
  int weight = 40;
  // HSL only: number of up XHCL links from src whose peer is dst.
  int up_links = 0;
};

// Everything discovery found on the node, at one point in time.
struct HCUDP_EXPORT NodeInventory {
  std::string driver_version;
  std::vector<Card> cards;  // sorted by index
  std::vector<Vhcu> vhcus;  // sorted by id
  // vHCU state that could not be read; `vhcus` may lack what they hide.
  std::vector<VhcuStateGap> vhcu_gaps;
  // The MIG mode as read; false also when the query failed, which
  // mig_gaps then says (use LookupMigMode for a decision).
  bool mig_enabled = false;
  std::vector<MigInstance> mig_instances;  // sorted by card, gi, ci
  // MIG state that could not be read; `mig_instances` may lack what they
  // hide, and `mig_enabled` may be wrong when the mode is among them.
  std::vector<MigStateGap> mig_gaps;
  // One entry per ordered pair (src != dst) of cards.
  std::vector<Link> links;
  bool has_kfd = false;   // /dev/kfd exists
  bool has_mkfd = false;  // /dev/mkfd exists

  // Cards that are known to exist but whose state could not be read, or
  // that one discovery missed (see UnknownCard), sorted by BDF. Never in
  // `cards`: nothing iterating `cards` offers them.
  std::vector<UnknownCard> unknown_cards;

  // Readable cards only: null for an absent AND for an unknown card. For a
  // decision that destroys, frees or publishes, use LookupCardByBdf.
  const Card* FindCard(int index) const;
  const Card* FindCardByBdf(std::string_view bdf) const;
  // Found in `cards`; unknown when an unknown card has this BDF (or one of
  // no known BDF exists); absent otherwise.
  Lookup<Card> LookupCardByBdf(std::string_view bdf) const;
  // Found in `vhcus`; unknown when a gap may hide vHCU `id` (its conf is
  // torn, or /etc/vdev could not be listed); absent otherwise.
  Lookup<Vhcu> LookupVhcu(int id) const;
  // Found (value() is `mig_enabled`) when the MIG mode query answered;
  // unknown when it failed.
  Lookup<bool> LookupMigMode() const;
  // Found in `mig_instances` (by UUID, with or without "MIG-"); unknown when
  // the MIG mode or some MIG conf could not be read; absent otherwise.
  Lookup<MigInstance> LookupMig(std::string_view uuid) const;
  // No MIG gap: the mode and every instance were read.
  bool MigStateKnown() const { return mig_gaps.empty(); }
  const Link* FindLink(int src, int dst) const;
  // Number of vHCUs whose parent is card `index`.
  int VhcuCount(int index) const;
  // False when card `index` may carry vHCUs that `vhcus` lacks (a gap
  // names it, or names no card).
  bool VhcuStateKnown(int index) const;
  // Nothing on card `bdf` is unknown: the card was read and no gap may hide
  // vHCUs on it. False for an unknown card, true for an absent one.
  bool CardStateKnown(std::string_view bdf) const;
  // True when no card, vHCU or MIG state is unknown.
  bool AllKnown() const { return unknown_cards.empty() && vhcu_gaps.empty() && mig_gaps.empty(); }
};

}  // namespace hcudp

#endif  // HCUDP_DEVICE_H_
