// The ownership ledger: who holds which device on this node, read from every
// record that says so, in one place (issue 28). hcudp::Node answers
// Holders(device) from it; the offer rule (hcudp/offer.h) reads it whole.
//
// The records (host paths under host-root):
//   - HAMi mark files      /etc/vdev/dynamic/<pod>_<container>_<card>_<vdev>
//   - vHCU intents         /var/lib/hcu-device-plugin/intents/*.intent (a
//                          create in flight or crashed: it may hold a vHCU
//                          by id, or by card and size when it recorded none)
//   - the DRA checkpoint   /var/lib/hcu-device-plugin/dra/<claim>.json,
//                          adopted Hygon claims included (adopted_from)
//   - Hygon's DRA state    <cdi-spec-dir>/hcu-dra-driver-prepared-state.state
//                          (claims Hygon's driver prepared, not adopted yet)
//   - kubelet pod-resources, when the Node was given a source for it.
//
// Unknown is not absent: a record that exists but cannot be read (a
// directory that cannot be listed, an intent or checkpoint entry that does
// not decode, a state file that does not parse) may name any device, so
// every answer is then unknown. Set-aside checkpoint entries (renamed
// .undecodable by an Unprepare: kubelet said that claim is done) hold
// nothing. A pod-resources source that does not answer is noted, not a gap:
// kubelet's view is an extra, the node's own records are the ledger.
#ifndef HCUDP_LEDGER_H_
#define HCUDP_LEDGER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hcudp/device.h"
#include "hcudp/export.h"

namespace hcudp {

// A device that can be held: a whole card, a vHCU or a MIG instance.
struct HCUDP_EXPORT DeviceRef {
  enum class Kind { kCard, kVhcu, kMig };
  Kind kind = Kind::kCard;
  int card = -1;          // the card's (or parent's) index; -1: not known
  std::string card_bdf;   // the card's (or parent's) BDF; "": not known
  int vhcu_id = -1;       // kVhcu
  std::string mig_uuid;   // kMig, without "MIG-"
  int compute_units = 0;  // kVhcu: its size, for records that name no id
  uint64_t memory_mib = 0;

  static DeviceRef OfCard(const Card& card);
  static DeviceRef OfVhcu(const Vhcu& vhcu);
  static DeviceRef OfMig(const MigInstance& mig);
  // "card 0000:0b:00.0" (or "card 2" without a BDF), "vdev3", "MIG-<uuid>".
  std::string Name() const;
};

enum class HolderSource {
  kHamiMark,      // a mark file
  kVhcuIntent,    // an intent of the vHCU journal
  kDraClaim,      // a DRA checkpoint entry (ours, or adopted from Hygon's)
  kHygonClaim,    // Hygon's DRA driver state, not adopted yet
  kPodResources,  // kubelet's pod-resources API
};
// "mark file", "vHCU intent", "DRA claim", "Hygon DRA claim", "pod-resources".
HCUDP_EXPORT std::string_view HolderSourceName(HolderSource source);

// One record that holds a device.
struct Holder {
  HolderSource source = HolderSource::kHamiMark;
  std::string owner;     // the pod UID or claim UID
  std::string describe;  // "pod <uid> (container c)", "claim ns/name (uid u)"
  std::string path;      // the record's file; "" for pod-resources
  // What it holds. A vHCU named by id has vhcu_id >= 0; one named only by
  // card and size (an intent that recorded no id, a DRA claim whose dynamic
  // vHCU was not made yet) has vhcu_id -1 and holds any vHCU of that size on
  // that card that is not in `prior_vhcu_ids`.
  DeviceRef device;
  std::vector<int> prior_vhcu_ids;  // by size only: the vHCUs there before
  // A vHCU this owner's driver created for it (HAMi, a DRA claim's
  // consumedCapacity), not a pre-split one it was handed.
  bool dynamic = false;
};

// What the ledger could not read.
struct LedgerGap {
  std::string path;
  std::string reason;
};

// The answer of a holders lookup: three-way, as Lookup<T>. Found: held, by
// holders(). Absent: held by no record. Unknown: some record could not be
// read (why() names it); holders() still lists those that could.
class [[nodiscard]] HCUDP_EXPORT Holders {
 public:
  Holders() = default;
  Holders(Certainty certainty, std::vector<Holder> holders, std::string why)
      : certainty_(certainty), holders_(std::move(holders)), why_(std::move(why)) {}

  Certainty certainty() const { return certainty_; }
  const std::vector<Holder>& holders() const { return holders_; }
  const std::string& why() const { return why_; }
  // The holders, "; "-joined ("DRA claim ns/a (uid u) [path]; ...").
  std::string Describe() const;

 private:
  Certainty certainty_ = Certainty::kAbsent;
  std::vector<Holder> holders_;
  std::string why_;
};

// The ledger as read at one moment.
struct HCUDP_EXPORT Holdings {
  std::vector<Holder> holders;
  std::vector<LedgerGap> gaps;     // non-empty: every answer is unknown
  std::vector<std::string> notes;  // what was skipped without doubt (for logs)

  // Who holds `device` directly (a whole card: its whole-card records; its
  // children are devices of their own).
  Holders Of(const DeviceRef& device) const;
  bool Known() const { return gaps.empty(); }
};

}  // namespace hcudp

#endif  // HCUDP_LEDGER_H_
