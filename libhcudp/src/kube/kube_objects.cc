// Typed views of Pod and Node JSON, and patch builders.
#include "hcudp/kube_objects.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "hcudp/hami/rfc3339.h"

namespace hcudp {
namespace {

using Value = rapidjson::Value;

Status TypeError(const std::string& field, const char* want) {
  return InvalidArgumentError("field " + field + ": must be " + want);
}

// Finds `key` in object `obj`; nullptr when absent or null.
const Value* Member(const Value& obj, const char* key) {
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd() || it->value.IsNull()) return nullptr;
  return &it->value;
}

Status GetString(const Value& obj, const char* key, const std::string& field, std::string* out) {
  const Value* v = Member(obj, key);
  if (v == nullptr) return OkStatus();
  if (!v->IsString()) return TypeError(field, "a string");
  out->assign(v->GetString(), v->GetStringLength());
  return OkStatus();
}

Status GetObject(const Value& obj, const char* key, const std::string& field, const Value** out) {
  const Value* v = Member(obj, key);
  *out = nullptr;
  if (v == nullptr) return OkStatus();
  if (!v->IsObject()) return TypeError(field, "an object");
  *out = v;
  return OkStatus();
}

// A map of strings (labels, annotations). Quantities in resource lists may
// be numbers in hand-written JSON; they are kept as their JSON text.
Status GetStringMap(const Value& obj, const char* key, const std::string& field,
                    std::map<std::string, std::string>* out, bool allow_numbers = false) {
  const Value* v = nullptr;
  HCUDP_RETURN_IF_ERROR(GetObject(obj, key, field, &v));
  if (v == nullptr) return OkStatus();
  for (auto it = v->MemberBegin(); it != v->MemberEnd(); ++it) {
    std::string k(it->name.GetString(), it->name.GetStringLength());
    if (it->value.IsString()) {
      (*out)[k].assign(it->value.GetString(), it->value.GetStringLength());
    } else if (allow_numbers && it->value.IsNumber()) {
      rapidjson::StringBuffer b;
      rapidjson::Writer<rapidjson::StringBuffer> w(b);
      it->value.Accept(w);
      (*out)[k] = b.GetString();
    } else {
      return TypeError(field + "." + k, "a string");
    }
  }
  return OkStatus();
}

Status ParseMeta(const Value& obj, ObjectMeta* meta) {
  const Value* m = nullptr;
  HCUDP_RETURN_IF_ERROR(GetObject(obj, "metadata", "metadata", &m));
  if (m == nullptr) return InvalidArgumentError("field metadata: required");
  HCUDP_RETURN_IF_ERROR(GetString(*m, "name", "metadata.name", &meta->name));
  HCUDP_RETURN_IF_ERROR(GetString(*m, "namespace", "metadata.namespace", &meta->namespace_name));
  HCUDP_RETURN_IF_ERROR(GetString(*m, "uid", "metadata.uid", &meta->uid));
  HCUDP_RETURN_IF_ERROR(
      GetString(*m, "resourceVersion", "metadata.resourceVersion", &meta->resource_version));
  HCUDP_RETURN_IF_ERROR(
      GetString(*m, "creationTimestamp", "metadata.creationTimestamp", &meta->creation_timestamp));
  if (!meta->creation_timestamp.empty()) {
    Status t = hami::ParseRfc3339(meta->creation_timestamp).status();
    if (!t.ok()) return t.WithContext("field metadata.creationTimestamp");
  }
  HCUDP_RETURN_IF_ERROR(GetStringMap(*m, "labels", "metadata.labels", &meta->labels));
  HCUDP_RETURN_IF_ERROR(
      GetStringMap(*m, "annotations", "metadata.annotations", &meta->annotations));
  return OkStatus();
}

Status ParseContainer(const Value& c, const std::string& field, Container* out) {
  if (!c.IsObject()) return TypeError(field, "an object");
  HCUDP_RETURN_IF_ERROR(GetString(c, "name", field + ".name", &out->name));
  const Value* resources = nullptr;
  HCUDP_RETURN_IF_ERROR(GetObject(c, "resources", field + ".resources", &resources));
  if (resources != nullptr) {
    HCUDP_RETURN_IF_ERROR(
        GetStringMap(*resources, "limits", field + ".resources.limits", &out->limits, true));
    HCUDP_RETURN_IF_ERROR(
        GetStringMap(*resources, "requests", field + ".resources.requests", &out->requests, true));
  }
  return OkStatus();
}

Status ParsePodValue(const Value& obj, Pod* pod) {
  if (!obj.IsObject()) return InvalidArgumentError("pod: not a JSON object");
  HCUDP_RETURN_IF_ERROR(ParseMeta(obj, &pod->metadata));
  const Value* spec = nullptr;
  HCUDP_RETURN_IF_ERROR(GetObject(obj, "spec", "spec", &spec));
  if (spec != nullptr) {
    HCUDP_RETURN_IF_ERROR(GetString(*spec, "nodeName", "spec.nodeName", &pod->node_name));
    const Value* containers = Member(*spec, "containers");
    if (containers != nullptr) {
      if (!containers->IsArray()) return TypeError("spec.containers", "an array");
      for (rapidjson::SizeType i = 0; i < containers->Size(); ++i) {
        Container c;
        HCUDP_RETURN_IF_ERROR(
            ParseContainer((*containers)[i], "spec.containers[" + std::to_string(i) + "]", &c));
        pod->containers.push_back(std::move(c));
      }
    }
  }
  const Value* status = nullptr;
  HCUDP_RETURN_IF_ERROR(GetObject(obj, "status", "status", &status));
  if (status != nullptr) {
    HCUDP_RETURN_IF_ERROR(GetString(*status, "phase", "status.phase", &pod->phase));
  }
  return OkStatus();
}

Status ParseDocument(std::string_view json, rapidjson::Document* doc) {
  doc->Parse(json.data(), json.size());
  if (doc->HasParseError()) {
    return InvalidArgumentError("not JSON (error at offset " +
                                std::to_string(doc->GetErrorOffset()) + ")");
  }
  if (!doc->IsObject()) return InvalidArgumentError("not a JSON object");
  return OkStatus();
}

}  // namespace

StatusOr<ObjectMeta> ParseObjectMeta(std::string_view json) {
  rapidjson::Document doc;
  HCUDP_RETURN_IF_ERROR(ParseDocument(json, &doc));
  ObjectMeta meta;
  HCUDP_RETURN_IF_ERROR(ParseMeta(doc, &meta));
  return meta;
}

StatusOr<Pod> ParsePod(std::string_view json) {
  rapidjson::Document doc;
  Status s = ParseDocument(json, &doc);
  if (!s.ok()) return s.WithContext("pod");
  Pod pod;
  s = ParsePodValue(doc, &pod);
  if (!s.ok()) return s.WithContext("pod");
  return pod;
}

StatusOr<NodeObject> ParseNode(std::string_view json) {
  rapidjson::Document doc;
  Status s = ParseDocument(json, &doc);
  if (!s.ok()) return s.WithContext("node");
  NodeObject node;
  s = ParseMeta(doc, &node.metadata);
  if (!s.ok()) return s.WithContext("node");
  node.raw_json.assign(json.data(), json.size());
  return node;
}

StatusOr<PodList> ParsePodList(std::string_view json) {
  rapidjson::Document doc;
  Status s = ParseDocument(json, &doc);
  if (!s.ok()) return s.WithContext("pod list");
  PodList list;
  const Value* meta = nullptr;
  HCUDP_RETURN_IF_ERROR(GetObject(doc, "metadata", "metadata", &meta));
  if (meta != nullptr) {
    HCUDP_RETURN_IF_ERROR(
        GetString(*meta, "resourceVersion", "metadata.resourceVersion", &list.resource_version));
    HCUDP_RETURN_IF_ERROR(GetString(*meta, "continue", "metadata.continue", &list.continue_token));
  }
  const Value* items = Member(doc, "items");
  if (items != nullptr) {
    if (!items->IsArray()) return TypeError("items", "an array");
    for (rapidjson::SizeType i = 0; i < items->Size(); ++i) {
      Pod pod;
      s = ParsePodValue((*items)[i], &pod);
      if (!s.ok()) return s.WithContext("pod list: items[" + std::to_string(i) + "]");
      list.items.push_back(std::move(pod));
    }
  }
  return list;
}

std::string JsonQuote(std::string_view text) {
  rapidjson::StringBuffer b;
  rapidjson::Writer<rapidjson::StringBuffer> w(b);
  w.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
  return std::string(b.GetString(), b.GetSize());
}

std::string AnnotationsPatch(const std::map<std::string, std::optional<std::string>>& annotations,
                             const std::string& resource_version) {
  std::string out = "{\"metadata\":{";
  if (!resource_version.empty()) {
    out += "\"resourceVersion\":" + JsonQuote(resource_version) + ",";
  }
  out += "\"annotations\":{";
  bool first = true;
  for (const auto& [key, value] : annotations) {
    if (!first) out += ",";
    first = false;
    out += JsonQuote(key) + ":" + (value ? JsonQuote(*value) : "null");
  }
  out += "}}}";
  return out;
}

}  // namespace hcudp
