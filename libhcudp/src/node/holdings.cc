// The ledger's answers (hcudp/ledger.h): which records hold a device.
#include <algorithm>

#include "hcudp/ledger.h"

namespace hcudp {
namespace {

// The same card: by BDF when both sides know it, else by index.
bool SameCard(const DeviceRef& a, const DeviceRef& b) {
  if (!a.card_bdf.empty() && !b.card_bdf.empty()) return a.card_bdf == b.card_bdf;
  return a.card >= 0 && a.card == b.card;
}

std::string_view WithoutMigPrefix(std::string_view uuid) {
  if (uuid.rfind("MIG-", 0) == 0) uuid.remove_prefix(4);
  return uuid;
}

bool HoldsVhcu(const Holder& h, const DeviceRef& d) {
  if (h.device.vhcu_id >= 0) return h.device.vhcu_id == d.vhcu_id;
  // Named by card and size only: any vHCU of that size on that card made
  // after it. A vHCU that could not be read (no size, no card) may be it.
  if (std::find(h.prior_vhcu_ids.begin(), h.prior_vhcu_ids.end(), d.vhcu_id) !=
      h.prior_vhcu_ids.end()) {
    return false;
  }
  const bool unread = d.compute_units == 0 && d.card < 0 && d.card_bdf.empty();
  if (unread) return true;
  return SameCard(h.device, d) && h.device.compute_units == d.compute_units &&
         h.device.memory_mib == d.memory_mib;
}

bool HoldsDevice(const Holder& h, const DeviceRef& d) {
  if (h.device.kind != d.kind) return false;
  switch (d.kind) {
    case DeviceRef::Kind::kCard:
      return SameCard(h.device, d);
    case DeviceRef::Kind::kVhcu:
      return HoldsVhcu(h, d);
    case DeviceRef::Kind::kMig:
      return WithoutMigPrefix(h.device.mig_uuid) == WithoutMigPrefix(d.mig_uuid);
  }
  return false;
}

}  // namespace

DeviceRef DeviceRef::OfCard(const Card& card) {
  DeviceRef d;
  d.kind = Kind::kCard;
  d.card = card.index;
  d.card_bdf = card.bdf;
  return d;
}

DeviceRef DeviceRef::OfVhcu(const Vhcu& vhcu) {
  DeviceRef d;
  d.kind = Kind::kVhcu;
  d.card = vhcu.card;
  d.card_bdf = vhcu.card_bdf;
  d.vhcu_id = vhcu.id;
  d.compute_units = vhcu.compute_units;
  d.memory_mib = vhcu.memory_mib;
  return d;
}

DeviceRef DeviceRef::OfMig(const MigInstance& mig) {
  DeviceRef d;
  d.kind = Kind::kMig;
  d.card = mig.card;
  d.card_bdf = mig.card_bdf;
  d.mig_uuid = mig.uuid;
  return d;
}

std::string DeviceRef::Name() const {
  switch (kind) {
    case Kind::kCard:
      return "card " + (card_bdf.empty() ? std::to_string(card) : card_bdf);
    case Kind::kVhcu:
      return vhcu_id >= 0 ? "vdev" + std::to_string(vhcu_id)
                          : "a vHCU of " + std::to_string(compute_units) + " CU, " +
                                std::to_string(memory_mib) + " MiB on card " +
                                (card_bdf.empty() ? std::to_string(card) : card_bdf);
    case Kind::kMig:
      return "MIG-" + std::string(WithoutMigPrefix(mig_uuid));
  }
  return "?";
}

std::string_view HolderSourceName(HolderSource source) {
  switch (source) {
    case HolderSource::kHamiMark:
      return "mark file";
    case HolderSource::kVhcuIntent:
      return "vHCU intent";
    case HolderSource::kDraClaim:
      return "DRA claim";
    case HolderSource::kHygonClaim:
      return "Hygon DRA claim";
    case HolderSource::kPodResources:
      return "pod-resources";
  }
  return "?";
}

std::string Holders::Describe() const {
  std::string out;
  for (const Holder& h : holders_) {
    if (!out.empty()) out += "; ";
    out += h.describe;
    if (!h.path.empty()) out += " [" + h.path + "]";
  }
  return out;
}

Holders Holdings::Of(const DeviceRef& device) const {
  std::vector<Holder> found;
  for (const Holder& h : holders) {
    if (HoldsDevice(h, device)) found.push_back(h);
  }
  if (!gaps.empty()) {
    std::string why = "the holders of " + device.Name() + " are unknown: " + gaps.front().path +
                      ": " + gaps.front().reason;
    if (gaps.size() > 1) why += " (and " + std::to_string(gaps.size() - 1) + " more)";
    return Holders(Certainty::kUnknown, std::move(found), std::move(why));
  }
  const Certainty c = found.empty() ? Certainty::kAbsent : Certainty::kFound;
  return Holders(c, std::move(found), "");
}

}  // namespace hcudp
