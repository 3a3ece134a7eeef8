// ParseResourceClaim: the fields of a resource.k8s.io/v1 ResourceClaim a node
// plugin needs, with errors that name the field.
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <map>
#include <string>

#include "dra/slice_names.h"
#include "hcudp/dra/checkpoint.h"
#include "hcudp/dra/claim.h"
#include "kube/api_error.h"

namespace hcudp::dra {
namespace {

using Value = rapidjson::Value;

Status FieldError(const std::string& field, const std::string& why) {
  return InvalidArgumentError("ResourceClaim field " + field + ": " + why);
}

// `key` of object `obj`: nullptr when absent or null.
const Value* Member(const Value& obj, const char* key) {
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd() || it->value.IsNull()) return nullptr;
  return &it->value;
}

Status Object(const Value& obj, const char* key, const std::string& field, const Value** out) {
  *out = Member(obj, key);
  if (*out != nullptr && !(*out)->IsObject()) return FieldError(field, "must be an object");
  return OkStatus();
}

Status Array(const Value& obj, const char* key, const std::string& field, const Value** out) {
  *out = Member(obj, key);
  if (*out != nullptr && !(*out)->IsArray()) return FieldError(field, "must be a list");
  return OkStatus();
}

Status String(const Value& obj, const char* key, const std::string& field, std::string* out) {
  const Value* v = Member(obj, key);
  if (v == nullptr) return OkStatus();
  if (!v->IsString()) return FieldError(field, "must be a string");
  out->assign(v->GetString(), v->GetStringLength());
  return OkStatus();
}

Status Required(const std::string& value, const std::string& field) {
  if (value.empty()) return FieldError(field, "required");
  return OkStatus();
}

// A map of quantities: "cores" and "memory" are read, other keys ("slices")
// must be quantities too but are not kept.
Status Capacity(const Value& obj, const char* key, const std::string& field, bool* present,
                CapacityAmounts* out) {
  const Value* map = nullptr;
  HCUDP_RETURN_IF_ERROR(Object(obj, key, field, &map));
  if (present != nullptr) *present = map != nullptr;
  if (map == nullptr) return OkStatus();
  for (auto it = map->MemberBegin(); it != map->MemberEnd(); ++it) {
    std::string name(it->name.GetString(), it->name.GetStringLength());
    std::string text;
    if (it->value.IsString()) {
      text.assign(it->value.GetString(), it->value.GetStringLength());
    } else if (it->value.IsUint64()) {
      text = std::to_string(it->value.GetUint64());
    } else {
      return FieldError(field + "." + name, "must be a quantity string");
    }
    StatusOr<int64_t> amount = ParseQuantity(text);
    if (!amount.ok()) return FieldError(field + "." + name, amount.status().message());
    if (name == "cores") out->cores = *amount;
    if (name == "memory") out->memory_bytes = *amount;
  }
  return OkStatus();
}

// capacity.requests of every request and sub-request, by "name" and
// "name/sub".
Status SpecCapacities(const Value& root, std::map<std::string, CapacityAmounts>* out) {
  const Value* spec = nullptr;
  const Value* devices = nullptr;
  const Value* requests = nullptr;
  HCUDP_RETURN_IF_ERROR(Object(root, "spec", "spec", &spec));
  if (spec == nullptr) return OkStatus();
  HCUDP_RETURN_IF_ERROR(Object(*spec, "devices", "spec.devices", &devices));
  if (devices == nullptr) return OkStatus();
  HCUDP_RETURN_IF_ERROR(Array(*devices, "requests", "spec.devices.requests", &requests));
  if (requests == nullptr) return OkStatus();
  for (rapidjson::SizeType i = 0; i < requests->Size(); ++i) {
    const std::string field = "spec.devices.requests[" + std::to_string(i) + "]";
    const Value& r = (*requests)[i];
    if (!r.IsObject()) return FieldError(field, "must be an object");
    std::string name;
    HCUDP_RETURN_IF_ERROR(String(r, "name", field + ".name", &name));
    const Value* exactly = nullptr;
    HCUDP_RETURN_IF_ERROR(Object(r, "exactly", field + ".exactly", &exactly));
    if (exactly != nullptr) {
      const Value* capacity = nullptr;
      HCUDP_RETURN_IF_ERROR(Object(*exactly, "capacity", field + ".exactly.capacity", &capacity));
      if (capacity != nullptr) {
        HCUDP_RETURN_IF_ERROR(Capacity(*capacity, "requests", field + ".exactly.capacity.requests",
                                       nullptr, &(*out)[name]));
      }
    }
    const Value* subs = nullptr;
    HCUDP_RETURN_IF_ERROR(Array(r, "firstAvailable", field + ".firstAvailable", &subs));
    if (subs == nullptr) continue;
    for (rapidjson::SizeType j = 0; j < subs->Size(); ++j) {
      const std::string sub_field = field + ".firstAvailable[" + std::to_string(j) + "]";
      const Value& s = (*subs)[j];
      if (!s.IsObject()) return FieldError(sub_field, "must be an object");
      std::string sub;
      HCUDP_RETURN_IF_ERROR(String(s, "name", sub_field + ".name", &sub));
      const Value* capacity = nullptr;
      HCUDP_RETURN_IF_ERROR(Object(s, "capacity", sub_field + ".capacity", &capacity));
      if (capacity != nullptr) {
        HCUDP_RETURN_IF_ERROR(Capacity(*capacity, "requests", sub_field + ".capacity.requests",
                                       nullptr, &(*out)[name + "/" + sub]));
      }
    }
  }
  return OkStatus();
}

Status ReservedPod(const Value& status, std::string* pod_uid) {
  const Value* reserved = nullptr;
  HCUDP_RETURN_IF_ERROR(Array(status, "reservedFor", "status.reservedFor", &reserved));
  if (reserved == nullptr) return OkStatus();
  for (rapidjson::SizeType i = 0; i < reserved->Size(); ++i) {
    const std::string field = "status.reservedFor[" + std::to_string(i) + "]";
    const Value& r = (*reserved)[i];
    if (!r.IsObject()) return FieldError(field, "must be an object");
    std::string group, resource, uid;
    HCUDP_RETURN_IF_ERROR(String(r, "apiGroup", field + ".apiGroup", &group));
    HCUDP_RETURN_IF_ERROR(String(r, "resource", field + ".resource", &resource));
    HCUDP_RETURN_IF_ERROR(String(r, "uid", field + ".uid", &uid));
    if (group.empty() && resource == "pods" && !uid.empty() && pod_uid->empty()) *pod_uid = uid;
  }
  return OkStatus();
}

Status Result(const Value& r, const std::string& field, std::string_view driver,
              std::vector<AllocatedDevice>* out) {
  if (!r.IsObject()) return FieldError(field, "must be an object");
  std::string result_driver;
  HCUDP_RETURN_IF_ERROR(String(r, "driver", field + ".driver", &result_driver));
  HCUDP_RETURN_IF_ERROR(Required(result_driver, field + ".driver"));
  if (result_driver != driver) return OkStatus();
  AllocatedDevice d;
  HCUDP_RETURN_IF_ERROR(String(r, "request", field + ".request", &d.request));
  HCUDP_RETURN_IF_ERROR(Required(d.request, field + ".request"));
  size_t slash = d.request.find('/');
  if (slash == 0 || slash + 1 == d.request.size() ||
      (slash != std::string::npos && d.request.find('/', slash + 1) != std::string::npos)) {
    return FieldError(field + ".request", "must be <request> or <request>/<sub-request>");
  }
  HCUDP_RETURN_IF_ERROR(String(r, "pool", field + ".pool", &d.pool));
  HCUDP_RETURN_IF_ERROR(Required(d.pool, field + ".pool"));
  HCUDP_RETURN_IF_ERROR(String(r, "device", field + ".device", &d.device));
  HCUDP_RETURN_IF_ERROR(Required(d.device, field + ".device"));
  HCUDP_RETURN_IF_ERROR(String(r, "shareID", field + ".shareID", &d.share_id));
  const Value* admin = Member(r, "adminAccess");
  if (admin != nullptr) {
    if (!admin->IsBool()) return FieldError(field + ".adminAccess", "must be a boolean");
    d.admin_access = admin->GetBool();
  }
  HCUDP_RETURN_IF_ERROR(Capacity(r, "consumedCapacity", field + ".consumedCapacity",
                                 &d.has_consumed_capacity, &d.consumed));
  out->push_back(std::move(d));
  return OkStatus();
}

}  // namespace

std::string BaseRequestName(std::string_view request) {
  return std::string(request.substr(0, request.find('/')));
}

std::string AllocatedDevice::BaseRequest() const { return BaseRequestName(request); }

Status CheckClaimRef(const ClaimRef& ref) {
  HCUDP_RETURN_IF_ERROR(CheckDnsLabel(ref.namespace_name, "claim namespace"));
  HCUDP_RETURN_IF_ERROR(CheckDnsSubdomain(ref.name, "claim name"));
  return CheckClaimUid(ref.uid);  // its message quotes at most 128 characters
}

ResourcePath ResourceClaimPath(std::string namespace_name, std::string name) {
  ResourcePath p;
  p.api_prefix = std::string(kResourceApiPrefix);
  p.resource = "resourceclaims";
  p.namespace_name = std::move(namespace_name);
  p.name = std::move(name);
  return p;
}

StatusOr<ParsedClaim> ParseResourceClaim(std::string_view json, std::string_view driver) {
  // The kube client checks what it GETs; an embedder's text is checked too.
  if (!kube::JsonNestingWithin(json)) {
    return InvalidArgumentError("ResourceClaim: nests deeper than " +
                                std::to_string(kube::kMaxJsonDepth) + " levels");
  }
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError()) {
    return InvalidArgumentError(std::string("ResourceClaim: not valid JSON: ") +
                                rapidjson::GetParseError_En(doc.GetParseError()) + " at offset " +
                                std::to_string(doc.GetErrorOffset()));
  }
  if (!doc.IsObject()) return InvalidArgumentError("ResourceClaim: not a JSON object");
  ParsedClaim claim;
  std::string kind;
  HCUDP_RETURN_IF_ERROR(String(doc, "kind", "kind", &kind));
  if (!kind.empty() && kind != "ResourceClaim") {
    return FieldError("kind", "is \"" + kind.substr(0, 64) + "\", not ResourceClaim");
  }
  const Value* meta = nullptr;
  HCUDP_RETURN_IF_ERROR(Object(doc, "metadata", "metadata", &meta));
  if (meta == nullptr) return FieldError("metadata", "required");
  HCUDP_RETURN_IF_ERROR(String(*meta, "namespace", "metadata.namespace", &claim.namespace_name));
  HCUDP_RETURN_IF_ERROR(String(*meta, "name", "metadata.name", &claim.name));
  HCUDP_RETURN_IF_ERROR(String(*meta, "uid", "metadata.uid", &claim.uid));
  HCUDP_RETURN_IF_ERROR(Required(claim.name, "metadata.name"));
  HCUDP_RETURN_IF_ERROR(Required(claim.uid, "metadata.uid"));

  std::map<std::string, CapacityAmounts> requested;
  HCUDP_RETURN_IF_ERROR(SpecCapacities(doc, &requested));

  const Value* status = nullptr;
  HCUDP_RETURN_IF_ERROR(Object(doc, "status", "status", &status));
  if (status == nullptr) return claim;
  HCUDP_RETURN_IF_ERROR(ReservedPod(*status, &claim.pod_uid));
  const Value* allocation = nullptr;
  HCUDP_RETURN_IF_ERROR(Object(*status, "allocation", "status.allocation", &allocation));
  if (allocation == nullptr) return claim;
  claim.allocated = true;
  const Value* devices = nullptr;
  const Value* results = nullptr;
  HCUDP_RETURN_IF_ERROR(Object(*allocation, "devices", "status.allocation.devices", &devices));
  if (devices == nullptr) return claim;
  HCUDP_RETURN_IF_ERROR(Array(*devices, "results", "status.allocation.devices.results", &results));
  if (results == nullptr) return claim;
  for (rapidjson::SizeType i = 0; i < results->Size(); ++i) {
    HCUDP_RETURN_IF_ERROR(Result((*results)[i],
                                 "status.allocation.devices.results[" + std::to_string(i) + "]",
                                 driver, &claim.results));
  }
  for (AllocatedDevice& d : claim.results) {
    auto it = requested.find(d.request);
    if (it != requested.end()) d.requested = it->second;
  }
  return claim;
}

}  // namespace hcudp::dra
