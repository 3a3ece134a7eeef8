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

namespace {

void WriteStrings(CdiJsonWriter& w, const std::vector<std::string>& list) {
  w.StartArray();
  for (const auto& s : list) w.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size()));
  w.EndArray();
}

}  // namespace

void WriteCdiEdits(CdiJsonWriter& w, const ContainerAllocation& edits) {
  w.StartObject();
  if (!edits.envs.empty()) {
    w.Key("env");
    std::vector<std::string> env;
    for (const auto& [k, v] : edits.envs) env.push_back(k + "=" + v);
    WriteStrings(w, env);
  }
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
      WriteStrings(w,
                   {m.read_only ? "ro" : "rw", "nosuid", "nodev", m.recursive ? "rbind" : "bind"});
      w.EndObject();
    }
    w.EndArray();
  }
  if (!edits.hooks.empty()) {
    w.Key("hooks");
    w.StartArray();
    for (const auto& h : edits.hooks) {
      w.StartObject();
      w.Key("hookName");
      w.String(h.hook_name.c_str());
      w.Key("path");
      w.String(h.path.c_str());
      w.Key("args");
      WriteStrings(w, h.args);
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
  w.Key("kind");
  w.String(kCdiKind.data(), static_cast<rapidjson::SizeType>(kCdiKind.size()));
  w.Key("containerEdits");
  WriteCdiEdits(w, builder.CdiCommonEdits(inventory));
  w.Key("devices");
  w.StartArray();
  std::set<std::string> seen;
  for (const auto& resource : resources) {
    for (const auto& device : resource.devices) {
      if (!seen.insert(device.id).second) continue;
      auto edits = builder.CdiDeviceEdits(inventory, resource, device);
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
  spec.json = WithMinimumCdiVersion(std::string_view(buffer.GetString(), buffer.GetSize()));
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
