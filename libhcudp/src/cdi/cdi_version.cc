// The lowest cdiVersion a spec needs (DESIGN §4.3). A runtime refuses a spec
// whose cdiVersion its CDI library does not know (podman 4.3 and containerd
// 1.7.0-1.7.12 know nothing past 0.5.0), and the library refuses one lower
// than the fields it uses require. So every spec we write carries exactly the
// version its content needs, found by the rule of the CDI library's
// MinimumRequiredVersion (specs-go/version.go), applied here to the JSON
// itself so that a field added later to a writer raises the version with it.
#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <initializer_list>
#include <string>

#include "cdi/cdi_edits.h"

namespace hcudp {
namespace {

using Value = rapidjson::Value;

// obj[key] when obj is an object holding it, else nullptr.
const Value* Field(const Value& obj, const char* key) {
  if (!obj.IsObject()) return nullptr;
  auto it = obj.FindMember(key);
  return it == obj.MemberEnd() ? nullptr : &it->value;
}

bool NonEmptyArray(const Value* v) { return v != nullptr && v->IsArray() && !v->Empty(); }
bool NonEmptyObject(const Value* v) {
  return v != nullptr && v->IsObject() && v->MemberCount() > 0;
}
bool NonEmptyString(const Value* v) {
  return v != nullptr && v->IsString() && v->GetStringLength() > 0;
}
bool IsAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// The spec's own containerEdits and each device's, as the library walks them.
template <typename Fn>
bool AnyEdits(const Value& spec, Fn&& fn) {
  if (const Value* e = Field(spec, "containerEdits"); e != nullptr && fn(*e)) return true;
  const Value* devices = Field(spec, "devices");
  if (devices == nullptr || !devices->IsArray()) return false;
  for (const Value& d : devices->GetArray()) {
    if (const Value* e = Field(d, "containerEdits"); e != nullptr && fn(*e)) return true;
  }
  return false;
}

// Any element of edits[list] whose `key` is a non-empty string.
bool AnyListField(const Value& edits, const char* list, const char* key) {
  const Value* items = Field(edits, list);
  if (items == nullptr || !items->IsArray()) return false;
  for (const Value& item : items->GetArray()) {
    if (NonEmptyString(Field(item, key))) return true;
  }
  return false;
}

bool HasIntelRdt(const Value& edits) {
  const Value* rdt = Field(edits, "intelRdt");
  return rdt != nullptr && !rdt->IsNull();
}

// v1.1.0: netDevices; intelRdt's schemata and enableMonitoring.
bool RequiresV110(const Value& spec) {
  return AnyEdits(spec, [](const Value& e) {
    if (NonEmptyArray(Field(e, "netDevices"))) return true;
    if (!HasIntelRdt(e)) return false;
    const Value& rdt = *Field(e, "intelRdt");
    const Value* schemata = Field(rdt, "schemata");
    const Value* monitoring = Field(rdt, "enableMonitoring");
    return (schemata != nullptr && !schemata->IsNull()) ||
           (monitoring != nullptr && monitoring->IsBool() && monitoring->GetBool());
  });
}

// v0.7.0: intelRdt; additionalGids.
bool RequiresV070(const Value& spec) {
  return AnyEdits(spec, [](const Value& e) {
    return HasIntelRdt(e) || NonEmptyArray(Field(e, "additionalGids"));
  });
}

// v0.6.0: annotations on the spec or a device; a '.' in the kind's class.
bool RequiresV060(const Value& spec) {
  if (NonEmptyObject(Field(spec, "annotations"))) return true;
  if (const Value* devices = Field(spec, "devices"); devices != nullptr && devices->IsArray()) {
    for (const Value& d : devices->GetArray()) {
      if (NonEmptyObject(Field(d, "annotations"))) return true;
    }
  }
  const Value* kind = Field(spec, "kind");
  if (kind == nullptr || !kind->IsString()) return false;
  const std::string k(kind->GetString(), kind->GetStringLength());
  const size_t slash = k.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == k.size()) return false;
  return k.find('.', slash + 1) != std::string::npos;
}

// v0.5.0: a device name that does not start with a letter; a device node's
// hostPath.
bool RequiresV050(const Value& spec) {
  if (const Value* devices = Field(spec, "devices"); devices != nullptr && devices->IsArray()) {
    for (const Value& d : devices->GetArray()) {
      const Value* name = Field(d, "name");
      if (NonEmptyString(name) && !IsAsciiLetter(name->GetString()[0])) return true;
    }
  }
  return AnyEdits(spec, [](const Value& e) { return AnyListField(e, "deviceNodes", "hostPath"); });
}

// v0.4.0: a mount's type.
bool RequiresV040(const Value& spec) {
  return AnyEdits(spec, [](const Value& e) { return AnyListField(e, "mounts", "type"); });
}

}  // namespace

std::string CdiMinimumVersion(const rapidjson::Value& spec) {
  // Newest first: the first rule a spec meets is its version. 1.0.0 and
  // 0.8.0 changed the library only, no field.
  struct Rule {
    const char* version;
    bool (*needs)(const Value&);
  };
  for (const Rule& r : {Rule{"1.1.0", RequiresV110}, Rule{"0.7.0", RequiresV070},
                        Rule{"0.6.0", RequiresV060}, Rule{"0.5.0", RequiresV050},
                        Rule{"0.4.0", RequiresV040}}) {
    if (r.needs(spec)) return r.version;
  }
  return "0.3.0";
}

std::string WithMinimumCdiVersion(std::string_view body) {
  rapidjson::Document doc;
  doc.Parse(body.data(), body.size());
  // Our own writer made `body`: a parse error is a bug, and no spec at all
  // is better than one a runtime would misread.
  if (doc.HasParseError() || !doc.IsObject()) return std::string();
  const std::string version = CdiMinimumVersion(doc);
  rapidjson::StringBuffer buffer;
  CdiJsonWriter w(buffer);
  w.SetIndent(' ', 2);
  w.StartObject();
  w.Key("cdiVersion");
  w.String(version.c_str(), static_cast<rapidjson::SizeType>(version.size()));
  for (const auto& m : doc.GetObject()) {
    if (std::string_view(m.name.GetString(), m.name.GetStringLength()) == "cdiVersion") continue;
    w.Key(m.name.GetString(), m.name.GetStringLength());
    m.value.Accept(w);
  }
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

}  // namespace hcudp
