// Typed views of Pod and Node JSON, and patch builders.
#include "hcudp/kube_objects.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cctype>

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
    StatusOr<int64_t> t = ParseRfc3339(meta->creation_timestamp);
    if (!t.ok()) return t.status().WithContext("field metadata.creationTimestamp");
    meta->creation_unix_s = *t;
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

Status ParsePodValue(const Value& obj, std::string_view raw, Pod* pod) {
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
  pod->raw_json.assign(raw.data(), raw.size());
  return OkStatus();
}

std::string Serialize(const Value& value) {
  rapidjson::StringBuffer b;
  rapidjson::Writer<rapidjson::StringBuffer> w(b);
  value.Accept(w);
  return std::string(b.GetString(), b.GetSize());
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

int Digits(std::string_view s, size_t pos, size_t n, bool* ok) {
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (i >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i]))) {
      *ok = false;
      return 0;
    }
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

// Days since 1970-01-01 of a proleptic Gregorian date.
int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

}  // namespace

StatusOr<int64_t> ParseRfc3339(std::string_view s) {
  bool ok = s.size() >= 20 && s[4] == '-' && s[7] == '-' && (s[10] == 'T' || s[10] == 't') &&
            s[13] == ':' && s[16] == ':';
  int year = Digits(s, 0, 4, &ok), month = Digits(s, 5, 2, &ok), day = Digits(s, 8, 2, &ok);
  int hour = Digits(s, 11, 2, &ok), minute = Digits(s, 14, 2, &ok), sec = Digits(s, 17, 2, &ok);
  size_t pos = 19;
  if (ok && pos < s.size() && s[pos] == '.') {
    ++pos;
    size_t start = pos;
    while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) ++pos;
    ok = pos > start;
  }
  int offset_s = 0;
  if (ok && pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (ok && pos + 6 == s.size() && (s[pos] == '+' || s[pos] == '-') && s[pos + 3] == ':') {
    int oh = Digits(s, pos + 1, 2, &ok), om = Digits(s, pos + 4, 2, &ok);
    offset_s = (oh * 3600 + om * 60) * (s[pos] == '-' ? -1 : 1);
    ok = ok && oh < 24 && om < 60;
    pos += 6;
  } else {
    ok = false;
  }
  ok = ok && pos == s.size() && month >= 1 && month <= 12 && day >= 1 && day <= 31 && hour < 24 &&
       minute < 60 && sec <= 60;
  if (!ok) return InvalidArgumentError("not an RFC 3339 time: \"" + std::string(s) + "\"");
  return DaysFromCivil(year, month, day) * 86400 + int64_t{hour} * 3600 + int64_t{minute} * 60 +
         sec - offset_s;
}

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
  s = ParsePodValue(doc, json, &pod);
  if (!s.ok()) return s.WithContext("pod");
  return pod;
}

StatusOr<Node> ParseNode(std::string_view json) {
  rapidjson::Document doc;
  Status s = ParseDocument(json, &doc);
  if (!s.ok()) return s.WithContext("node");
  Node node;
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
      std::string raw = (*items)[i].IsObject() ? Serialize((*items)[i]) : std::string();
      s = ParsePodValue((*items)[i], raw, &pod);
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
