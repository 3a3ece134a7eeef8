// ReadLedger: marks, intents, the DRA checkpoint, Hygon's state and
// (optionally) pod-resources into one Holdings.
#include "node/ledger_read.h"

#include <algorithm>

#include "dra/hygon_state.h"
#include "hcudp/dra/checkpoint.h"
#include "hcudp/vhcu_manager.h"
#include "hcudp_internal/file_util.h"
#include "hcudp_internal/host_fs.h"
#include "vhcu/intent_record.h"

namespace hcudp::internal {
namespace {

void ReadMarks(const HostFs& fs, Holdings* out) {
  std::vector<std::string> unparsable;
  StatusOr<std::vector<MarkFile>> marks = ListMarkFiles(fs.root(), &unparsable);
  if (!marks.ok()) {
    out->gaps.push_back({fs.MarkDir(),
                         "mark files cannot be listed: " + marks.status().message()});
    return;
  }
  for (const std::string& name : unparsable) {
    out->notes.push_back("not a mark file name: " + name);
  }
  for (const MarkFile& m : *marks) {
    Holder h;
    h.source = HolderSource::kHamiMark;
    h.owner = m.name.pod_uid;
    h.describe = "pod " + m.name.pod_uid + " (container " + m.name.container + ")";
    h.path = m.path;
    h.device.card = m.name.card;
    if (m.name.whole_card()) {
      h.device.kind = DeviceRef::Kind::kCard;
    } else {
      h.device.kind = DeviceRef::Kind::kVhcu;
      h.device.vhcu_id = m.name.vhcu_id;
      h.dynamic = true;
    }
    out->holders.push_back(std::move(h));
  }
}

void ReadIntents(const HostFs& fs, Holdings* out) {
  const std::string dir = fs.IntentDir();
  std::vector<std::string> unreadable;
  auto intents = ReadIntentJournal(dir, &unreadable);
  if (!intents.ok()) {
    out->gaps.push_back({dir, "the vHCU intents cannot be listed: " + intents.status().message()});
    return;
  }
  for (const std::string& bad : unreadable) {
    out->gaps.push_back({bad, "a vHCU intent that does not read"});
  }
  for (const auto& [r, path] : *intents) {
    Holder h;
    h.source = HolderSource::kVhcuIntent;
    h.owner = r.pod_uid;
    h.describe = "pod " + r.pod_uid + " (container " + r.container + ", a vHCU create in flight)";
    h.path = path;
    h.dynamic = true;
    h.device.kind = DeviceRef::Kind::kVhcu;
    h.device.card = r.card;
    h.device.card_bdf = r.card_bdf;
    h.device.compute_units = r.compute_units;
    h.device.memory_mib = r.memory_mib;
    if (r.vhcu_id) {
      h.device.vhcu_id = *r.vhcu_id;
    } else {
      h.prior_vhcu_ids.assign(r.prior_vhcu_ids.begin(), r.prior_vhcu_ids.end());
    }
    out->holders.push_back(std::move(h));
  }
}

DeviceRef RefOf(const dra::PreparedDevice& d) {
  DeviceRef ref;
  ref.card = d.card;
  ref.card_bdf = d.card_bdf;
  switch (d.kind) {
    case dra::PreparedKind::kCard:
      ref.kind = DeviceRef::Kind::kCard;
      break;
    case dra::PreparedKind::kVhcu:
    case dra::PreparedKind::kDynamicVhcu:
      ref.kind = DeviceRef::Kind::kVhcu;
      ref.vhcu_id = d.vhcu_id;
      ref.compute_units = d.compute_units;
      ref.memory_mib = d.memory_mib;
      break;
    case dra::PreparedKind::kMig:
      ref.kind = DeviceRef::Kind::kMig;
      ref.mig_uuid = d.mig_uuid;
      break;
  }
  return ref;
}

void ReadCheckpoint(const HostFs& fs, Holdings* out) {
  dra::CheckpointStore store(fs.root());
  std::vector<std::string> bad;
  auto claims = store.ReadAll(&bad);
  if (!claims.ok()) {
    out->gaps.push_back(
        {store.dir(), "the DRA checkpoint cannot be listed: " + claims.status().message()});
    return;
  }
  const std::string aside = std::string(".json") + std::string(dra::kSetAsideSuffix) + ":";
  for (const std::string& b : bad) {
    // Set aside by kubelet's Unprepare of its claim: it holds nothing.
    if (b.find(aside) != std::string::npos) {
      out->notes.push_back(b);
      continue;
    }
    out->gaps.push_back(
        {b.substr(0, b.find(": ")), "a DRA checkpoint entry that does not read: " + b});
  }
  for (const dra::PreparedClaim& c : *claims) {
    const std::string name =
        c.namespace_name.empty() ? std::string("(unnamed)") : c.namespace_name + "/" + c.name;
    for (const dra::PreparedDevice& d : c.devices) {
      Holder h;
      h.source = HolderSource::kDraClaim;
      h.owner = c.uid;
      h.describe = "claim " + name + " (uid " + c.uid + ")" +
                   (c.adopted_from.empty() ? "" : ", adopted from " + c.adopted_from);
      h.path = store.dir() + "/" + c.uid + ".json";
      h.device = RefOf(d);
      h.dynamic = d.kind == dra::PreparedKind::kDynamicVhcu;
      out->holders.push_back(std::move(h));
    }
  }
}

void ReadHygonState(const std::string& cdi_dir, Holdings* out) {
  if (cdi_dir.empty()) return;
  const std::string path = cdi_dir + "/" + std::string(dra::kHygonStateFileName);
  StatusOr<std::string> text = dra::ReadHygonState(path);  // never blocks on a FIFO
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound) return;
    out->gaps.push_back({path, "Hygon's DRA state cannot be read: " + text.status().message()});
    return;
  }
  auto claims = dra::ParseHygonState(*text);
  if (!claims.ok()) {
    out->gaps.push_back({path, "Hygon's DRA state does not parse: " + claims.status().message()});
    return;
  }
  for (const dra::HygonClaim& c : *claims) {
    for (const dra::HygonDevice& d : c.devices) {
      Holder h;
      h.source = HolderSource::kHygonClaim;
      h.owner = c.uid;
      h.describe = "Hygon DRA claim (uid " + c.uid + ")";
      h.path = path;
      h.device.card = d.card;
      if (d.whole_card || d.vhcu_id < 0) {
        h.device.kind = DeviceRef::Kind::kCard;
      } else {
        h.device.kind = DeviceRef::Kind::kVhcu;
        h.device.vhcu_id = d.vhcu_id;
        h.dynamic = !d.mark.empty();
      }
      out->holders.push_back(std::move(h));
    }
  }
}

}  // namespace

Holdings ReadLedger(const LedgerSources& sources) {
  Holdings out;
  const HostFs fs(sources.host_root);
  ReadMarks(fs, &out);
  ReadIntents(fs, &out);
  ReadCheckpoint(fs, &out);
  ReadHygonState(sources.cdi_dir, &out);
  if (sources.pod_resources) {
    StatusOr<std::vector<Holder>> pods = sources.pod_resources();
    if (pods.ok()) {
      for (Holder& h : *pods) out.holders.push_back(std::move(h));
    } else {
      out.notes.push_back("kubelet's pod-resources not asked: " + pods.status().message());
    }
  }
  return out;
}

}  // namespace hcudp::internal
