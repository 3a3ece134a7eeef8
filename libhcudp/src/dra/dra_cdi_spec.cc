#include "dra/dra_cdi_spec.h"

#include <rapidjson/writer.h>

#include <set>

#include "cdi/cdi_edits.h"
#include "hcudp/dra/preparer.h"
#include "hcudp_internal/file_util.h"

namespace hcudp::dra {
namespace {

void Header(CdiJsonWriter& w, const std::string& kind, const NodeInventory& inventory,
            const AllocationBuilder& builder) {
  w.Key("kind");
  w.String(kind.c_str());
  w.Key("containerEdits");
  WriteCdiEdits(w, builder.CdiCommonEdits(inventory));
}

void Device(CdiJsonWriter& w, const std::string& name, const ContainerAllocation& edits) {
  w.StartObject();
  w.Key("name");
  w.String(name.c_str());
  w.Key("containerEdits");
  WriteCdiEdits(w, edits);
  w.EndObject();
}

// The edits of one prepared device, through the device-plugin builder.
StatusOr<ContainerAllocation> Edits(const PreparedDevice& d, const NodeInventory& inventory,
                                    const AllocationBuilder& builder) {
  Resource resource;
  ResourceDevice rd;
  rd.id = d.device;
  rd.card = d.card;
  switch (d.kind) {
    case PreparedKind::kCard:
      resource.kind = DeviceKind::kCard;
      break;
    case PreparedKind::kVhcu:
    case PreparedKind::kDynamicVhcu:
      resource.kind = DeviceKind::kVhcu;
      rd.vhcu_id = d.vhcu_id;
      break;
    case PreparedKind::kMig:
      resource.kind = DeviceKind::kMig;
      for (size_t i = 0; i < inventory.mig_instances.size(); ++i) {
        if (inventory.mig_instances[i].uuid == d.mig_uuid) rd.mig_index = static_cast<int>(i);
      }
      break;
  }
  return builder.CdiDeviceEdits(inventory, resource, rd);
}

}  // namespace

std::string CardCdiKind(const std::string& driver) { return driver + "/hcu"; }
std::string VhcuCdiKind(const std::string& driver) { return driver + "/vhcu"; }
std::string WholeCardSpecFileName(const std::string& driver) { return driver + "-hcu.json"; }
std::string ClaimSpecFileName(const std::string& driver, const std::string& claim_uid) {
  return driver + "-vhcu_" + claim_uid + ".json";
}

std::string ClaimCdiDeviceName(const std::string& claim_uid, const PreparedDevice& device) {
  if (device.kind == PreparedKind::kMig) return claim_uid + "-" + device.device;
  return claim_uid + "-vdev" + std::to_string(device.vhcu_id);
}

std::string BuildWholeCardSpec(const std::string& driver, const NodeInventory& inventory,
                               const AllocationBuilder& builder, std::vector<std::string>* skipped,
                               const std::map<std::string, std::string>& kept) {
  rapidjson::StringBuffer buffer;
  CdiJsonWriter w(buffer);
  w.SetIndent(' ', 2);
  w.StartObject();
  Header(w, CardCdiKind(driver), inventory, builder);
  w.Key("devices");
  w.StartArray();
  std::set<std::string> written;
  // One card's entry, its edits built from `in` (which holds it).
  auto write_card = [&](const Card& card, const NodeInventory& in) {
    PreparedDevice d;
    d.kind = PreparedKind::kCard;
    d.card = card.index;
    d.device = CardDeviceName(card);
    if (written.count(d.device) != 0) return;
    StatusOr<ContainerAllocation> edits = Edits(d, in, builder);
    if (!edits.ok()) {
      if (skipped != nullptr) skipped->push_back(card.bdf + ": " + edits.status().message());
      return;
    }
    Device(w, d.device, *edits);
    written.insert(d.device);
  };
  for (const Card& card : inventory.cards) write_card(card, inventory);
  for (const UnknownCard& u : inventory.unknown_cards) {
    const Card& card = u.last_known;
    if (card.bdf.empty() || card.dri_nodes.empty() || card.index < 0) continue;
    NodeInventory alone = inventory;
    alone.cards = {card};
    write_card(card, alone);
  }
  for (const auto& [name, entry] : kept) {
    if (written.count(name) != 0) continue;
    w.RawValue(entry.data(), entry.size(), rapidjson::kObjectType);
    written.insert(name);
  }
  w.EndArray();
  w.EndObject();
  return WithMinimumCdiVersion(std::string_view(buffer.GetString(), buffer.GetSize()));
}

std::map<std::string, std::string> WholeCardSpecEntries(std::string_view spec_json) {
  std::map<std::string, std::string> out;
  rapidjson::Document doc;
  doc.Parse(spec_json.data(), spec_json.size());
  if (doc.HasParseError() || !doc.IsObject()) return out;
  auto devices = doc.FindMember("devices");
  if (devices == doc.MemberEnd() || !devices->value.IsArray()) return out;
  for (const rapidjson::Value& device : devices->value.GetArray()) {
    if (!device.IsObject()) continue;
    auto name = device.FindMember("name");
    if (name == device.MemberEnd() || !name->value.IsString()) continue;
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
    device.Accept(w);
    out[name->value.GetString()] = std::string(buffer.GetString(), buffer.GetSize());
  }
  return out;
}

StatusOr<std::string> BuildClaimSpec(const std::string& driver, const PreparedClaim& claim,
                                     const NodeInventory& inventory,
                                     const AllocationBuilder& builder) {
  rapidjson::StringBuffer buffer;
  CdiJsonWriter w(buffer);
  w.SetIndent(' ', 2);
  w.StartObject();
  Header(w, VhcuCdiKind(driver), inventory, builder);
  w.Key("devices");
  w.StartArray();
  int count = 0;
  for (const PreparedDevice& d : claim.devices) {
    if (d.kind == PreparedKind::kCard) continue;
    StatusOr<ContainerAllocation> edits = Edits(d, inventory, builder);
    if (!edits.ok()) {
      return FailedPreconditionError("CDI edits of " + d.device + " (claim " + claim.uid +
                                     "): " + edits.status().message());
    }
    Device(w, ClaimCdiDeviceName(claim.uid, d), *edits);
    ++count;
  }
  w.EndArray();
  w.EndObject();
  if (count == 0) return std::string();
  return WithMinimumCdiVersion(std::string_view(buffer.GetString(), buffer.GetSize()));
}

Status WriteSpecFile(const std::string& dir, const std::string& file_name,
                     const std::string& json) {
  Status st = file_util::MakeDirs(dir, 0755, file_util::Durability::kSyncFileAndDirectory);
  if (st.ok()) {
    st = file_util::WriteFileAtomic(dir + "/" + file_name, json, 0644,
                                    file_util::Durability::kSyncFileAndDirectory);
  }
  if (!st.ok()) return UnavailableError("write CDI spec " + file_name + ": " + st.message());
  return OkStatus();
}

}  // namespace hcudp::dra
