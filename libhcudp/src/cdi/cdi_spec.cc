#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <set>

#include "cdi/cdi_edits.h"
#include "hcudp/cdi.h"
#include "hcudp_internal/file_util.h"

namespace hcudp {
namespace {

bool CdiAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool CdiNameChar(char c) { return CdiAlnum(c) || c == '_' || c == '.' || c == ':' || c == '-'; }

}  // namespace

void WriteCdiEdits(CdiJsonWriter& w, const ContainerAllocation& edits) {
  w.StartObject();
  if (!edits.devices.empty()) {
    w.Key("deviceNodes");
    w.StartArray();
    for (const auto& d : edits.devices) {
      w.StartObject();
      w.Key("path");
      w.String(d.container_path.c_str());
      w.Key("hostPath");
      w.String(d.host_path.c_str());
      w.Key("permissions");
      w.String(d.permissions.c_str());
      w.EndObject();
    }
    w.EndArray();
  }
  if (!edits.mounts.empty()) {
    w.Key("mounts");
    w.StartArray();
    for (const auto& m : edits.mounts) {
      w.StartObject();
      w.Key("hostPath");
      w.String(m.host_path.c_str());
      w.Key("containerPath");
      w.String(m.container_path.c_str());
      w.Key("options");
      w.StartArray();
      w.String(m.read_only ? "ro" : "rw");
      w.String("nosuid");
      w.String("nodev");
      w.String("bind");
      w.EndArray();
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
}

std::string CdiDeviceName(std::string_view device_id) {
  std::string out;
  for (char c : device_id) out += CdiNameChar(c) ? c : '_';
  // The CDI parser wants a letter or digit first and last.
  if (out.empty() || !CdiAlnum(out.front())) out.insert(out.begin(), 'x');
  if (!CdiAlnum(out.back())) out += 'x';
  return out;
}

std::string CdiQualifiedName(std::string_view device_id) {
  return std::string(kCdiKind) + "=" + CdiDeviceName(device_id);
}

CdiSpec BuildCdiSpec(const NodeInventory& inventory, const std::vector<Resource>& resources,
                     const AllocationBuilder& builder) {
  CdiSpec spec;
  rapidjson::StringBuffer buffer;
  CdiJsonWriter w(buffer);
  w.SetIndent(' ', 2);
  w.StartObject();
  w.Key("cdiVersion");
  w.String(kCdiVersion.data(), static_cast<rapidjson::SizeType>(kCdiVersion.size()));
  w.Key("kind");
  w.String(kCdiKind.data(), static_cast<rapidjson::SizeType>(kCdiKind.size()));
  w.Key("containerEdits");
  WriteCdiEdits(w, builder.CommonEdits(inventory));
  w.Key("devices");
  w.StartArray();
  std::set<std::string> seen;
  for (const auto& resource : resources) {
    for (const auto& device : resource.devices) {
      if (!seen.insert(device.id).second) continue;
      auto edits = builder.DeviceEdits(inventory, resource, device);
      if (!edits.ok()) {
        spec.skipped.push_back(device.id + ": " + edits.status().message());
        continue;
      }
      w.StartObject();
      w.Key("name");
      w.String(CdiDeviceName(device.id).c_str());
      w.Key("containerEdits");
      WriteCdiEdits(w, *edits);
      w.EndObject();
    }
  }
  w.EndArray();
  w.EndObject();
  spec.json = std::string(buffer.GetString(), buffer.GetSize()) + "\n";
  return spec;
}

Status WriteCdiSpec(const std::string& dir, const std::string& json) {
  Status st = file_util::MakeDirs(dir, 0755);
  if (st.ok()) {
    st = file_util::WriteFileAtomic(dir + "/" + std::string(kCdiSpecFileName), json, 0644,
                                    file_util::Durability::kSyncFileAndDirectory);
  }
  // The daemon retries a failed write on its next refresh: Unavailable, as before.
  if (!st.ok()) return UnavailableError("write CDI spec: " + st.message());
  return OkStatus();
}

}  // namespace hcudp
