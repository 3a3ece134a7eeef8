// Preparer::Unprepare of a claim whose checkpoint entry does not decode: a
// corrupt file, a newer format after a rollback, one too large or too deep,
// an entry that is not a regular file. Kubelet keeps the pod Terminating
// until Unprepare succeeds, and a retry cannot make the entry decode, so
// failing would block the pod's deletion forever. Instead the node's own
// files say what was the claim's:
//   - a mark whose owner is the claim UID (a claim reserved for no pod), or
//   - a vHCU mark naming a vHCU the claim's own CDI spec lists
//     (<driver>-vhcu_<uid>.json: devices <uid>-vdev<N>),
// and that no decodable entry records. Those are released, the claim's CDI
// spec is removed, and the entry is set aside (<uid>.json.undecodable) for an
// admin: `hcuctl dra prepared` names it and exits 1. What cannot be proven
// (a whole-card mark of the claim's pod, a vHCU the node cannot read now) is
// logged and left.
#include <rapidjson/document.h>

#include <set>
#include <string>
#include <vector>

#include "dra/prepare_impl.h"
#include "hcudp_internal/file_util.h"
#include "hcudp_internal/log.h"
#include "kube/api_error.h"

namespace hcudp::dra {
namespace {

// The vHCU indexes the claim's CDI spec lists (devices <uid>-vdev<N>); empty
// when there is no spec or it does not parse (then it proves nothing).
std::set<int> VhcusInClaimSpec(const std::string& path, const std::string& uid) {
  std::set<int> out;
  StatusOr<std::string> text = file_util::ReadFile(path, kMaxCheckpointEntryBytes);
  if (!text.ok() || !kube::JsonNestingWithin(*text)) return out;
  rapidjson::Document doc;
  doc.Parse(text->data(), text->size());
  if (doc.HasParseError() || !doc.IsObject()) return out;
  auto devices = doc.FindMember("devices");
  if (devices == doc.MemberEnd() || !devices->value.IsArray()) return out;
  const std::string prefix = uid + "-vdev";
  for (const rapidjson::Value& d : devices->value.GetArray()) {
    if (!d.IsObject()) continue;
    auto name = d.FindMember("name");
    if (name == d.MemberEnd() || !name->value.IsString()) continue;
    const std::string n(name->value.GetString(), name->value.GetStringLength());
    if (n.size() <= prefix.size() || n.size() > prefix.size() + 7 || n.rfind(prefix, 0) != 0 ||
        n.find_first_not_of("0123456789", prefix.size()) != std::string::npos) {
      continue;
    }
    out.insert(std::stoi(n.substr(prefix.size())));
  }
  return out;
}

}  // namespace

std::set<std::string> Preparer::Impl::RecordedMarks(const std::string& except_uid) const {
  std::set<std::string> recorded;
  StatusOr<std::vector<PreparedClaim>> entries = store_.ReadAll(nullptr);
  if (entries.ok()) {
    for (const PreparedClaim& c : *entries) {
      if (c.uid == except_uid) continue;
      for (const PreparedDevice& d : c.devices) recorded.insert(d.mark);
    }
  }
  MutexLock lock(mu_);
  for (const auto& [uid, c] : claims_) {
    if (uid == except_uid) continue;
    for (const PreparedDevice& d : c.devices) recorded.insert(d.mark);
  }
  return recorded;
}

Status Preparer::Impl::UnprepareUndecodable(const ClaimRef& ref, const Status& read_error) {
  const std::string label = "claim " + ref.namespace_name + "/" + ref.name + " (" + ref.uid + ")";
  const std::set<int> in_spec = VhcusInClaimSpec(ClaimSpecPath(ref.uid), ref.uid);
  const std::set<std::string> recorded = RecordedMarks(ref.uid);
  HCUDP_ASSIGN_OR_RETURN(std::vector<MarkFile> marks, ListMarkFiles(o_.host_root, nullptr));
  std::vector<MarkFile> proven;
  for (const MarkFile& m : marks) {
    if (recorded.count(FileNameOf(m.path)) > 0) continue;
    const bool by_owner = m.name.pod_uid == ref.uid;
    const bool by_spec = !m.name.whole_card() && in_spec.count(m.name.vhcu_id) > 0;
    if (by_owner || by_spec) proven.push_back(m);
  }
  std::optional<NodeInventory> inventory;
  std::vector<std::string> released;
  std::vector<std::string> kept;
  for (const MarkFile& m : proven) {
    const std::string file = FileNameOf(m.path);
    if (m.name.whole_card()) {
      HCUDP_RETURN_IF_ERROR(
          file_util::RemoveFile(m.path, file_util::Durability::kSyncFileAndDirectory));
      released.push_back(file);
      continue;
    }
    if (!inventory) {
      StatusOr<NodeInventory> found = backend_->Discover();
      if (!found.ok()) return UnavailableError("discovering the node: " + found.status().message());
      inventory = std::move(*found);
    }
    // Only a vHCU the node shows on the mark's card is destroyed; one it
    // cannot read now (or whose index names another card) keeps its mark.
    Lookup<Vhcu> v = inventory->LookupVhcu(m.name.vhcu_id);
    if (v.certainty() != Certainty::kFound || v.value().card != m.name.card) {
      kept.push_back(file);
      continue;
    }
    Status st = vhcus_->Release(m.name);
    if (!st.ok()) {
      return UnavailableError(label + ": releasing vHCU " + std::to_string(m.name.vhcu_id) + ": " +
                              st.message());
    }
    released.push_back(file);
  }
  HCUDP_RETURN_IF_ERROR(
      file_util::RemoveFile(ClaimSpecPath(ref.uid), file_util::Durability::kSyncFileAndDirectory));
  HCUDP_ASSIGN_OR_RETURN(std::string aside, store_.SetAside(ref.uid));
  bool changed = false;
  {
    MutexLock lock(mu_);
    changed = claims_.erase(ref.uid) > 0;
    pending_.erase(ref.uid);
  }
  if (changed) Changed();
  std::string list;
  for (const std::string& f : released) list += (list.empty() ? "" : ", ") + f;
  std::string left;
  for (const std::string& f : kept) left += (left.empty() ? "" : ", ") + f;
  LOG(ERROR) << label << ": its checkpoint entry does not decode (" << read_error.message()
             << "); unprepared with what the node proves: released "
             << (list.empty() ? "no mark" : list)
             << (left.empty() ? "" : "; kept (vHCU not readable on its card now): " + left)
             << "; marks of the claim's pod that name no vHCU of its CDI spec cannot be tied to "
                "it and are left; entry set aside as "
             << aside << " (listed by `hcuctl dra prepared`)";
  return OkStatus();
}

}  // namespace hcudp::dra
