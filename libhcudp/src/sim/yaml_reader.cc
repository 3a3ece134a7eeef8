#include "sim/yaml_reader.h"

#include <set>

#include "conf/text_util.h"

namespace hcudp::sim {
namespace {

int LineOf(const YAML::Node& node) { return node.Mark().is_null() ? 0 : node.Mark().line + 1; }

std::string KindName(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Null:
      return "empty";
    case YAML::NodeType::Scalar:
      return "\"" + node.Scalar() + "\"";
    default:
      return "undefined";
  }
}

// A quoted scalar carries the non-specific tag "!"; a plain one "?".
bool IsPlainScalar(const YAML::Node& node) { return node.IsScalar() && node.Tag() != "!"; }

}  // namespace

Status FieldError(const std::string& path, const YAML::Node& node, const std::string& message) {
  return InvalidArgumentError("SimNode " + path + ": line " + std::to_string(LineOf(node)) + ": " +
                              message);
}

StatusOr<YamlMap> YamlMap::Open(const YAML::Node& node, std::string path,
                                std::initializer_list<std::string_view> allowed) {
  std::string shown = path.empty() ? "(top level)" : path;
  if (!node.IsMap()) return FieldError(shown, node, "must be a mapping, is " + KindName(node));
  std::set<std::string> seen;
  for (const auto& entry : node) {
    const YAML::Node& key = entry.first;
    std::string key_path = path.empty() ? "" : path + ".";
    if (!key.IsScalar()) return FieldError(shown, key, "a key is not a plain name");
    key_path += key.Scalar();
    bool known = false;
    for (std::string_view a : allowed) known = known || a == key.Scalar();
    if (!known) return FieldError(key_path, key, "unknown field \"" + key.Scalar() + "\"");
    if (!seen.insert(key.Scalar()).second) {
      return FieldError(key_path, key, "field given twice");
    }
  }
  return YamlMap(node, std::move(path));
}

bool YamlMap::Has(std::string_view key) const { return node_[std::string(key)].IsDefined(); }

std::string YamlMap::PathOf(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

StatusOr<YAML::Node> YamlMap::Required(std::string_view key) const {
  YAML::Node value = node_[std::string(key)];
  if (!value.IsDefined()) return FieldError(PathOf(key), node_, "required field is missing");
  return value;
}

Status YamlMap::Int(std::string_view key, int64_t min, int64_t max, int64_t* out) const {
  HCUDP_ASSIGN_OR_RETURN(YAML::Node value, Required(key));
  std::optional<int64_t> v;
  if (IsPlainScalar(value)) v = text::ParseInt(value.Scalar());
  if (!v) return FieldError(PathOf(key), value, "must be an integer, is " + KindName(value));
  if (*v < min || *v > max) {
    return FieldError(PathOf(key), value,
                      std::to_string(*v) + " is out of range " + std::to_string(min) + ".." +
                          std::to_string(max));
  }
  *out = *v;
  return OkStatus();
}

Status YamlMap::Int(std::string_view key, int64_t min, int64_t max, int* out) const {
  int64_t v = 0;
  HCUDP_RETURN_IF_ERROR(Int(key, min, max, &v));
  *out = static_cast<int>(v);
  return OkStatus();
}

Status YamlMap::Uint(std::string_view key, uint64_t min, uint64_t max, uint64_t* out) const {
  HCUDP_ASSIGN_OR_RETURN(YAML::Node value, Required(key));
  std::optional<uint64_t> v;
  if (IsPlainScalar(value)) v = text::ParseUint(value.Scalar());
  if (!v) {
    return FieldError(PathOf(key), value, "must be a non-negative integer, is " + KindName(value));
  }
  if (*v < min || *v > max) {
    return FieldError(PathOf(key), value,
                      std::to_string(*v) + " is out of range " + std::to_string(min) + ".." +
                          std::to_string(max));
  }
  *out = *v;
  return OkStatus();
}

Status YamlMap::String(std::string_view key, std::string* out) const {
  HCUDP_ASSIGN_OR_RETURN(YAML::Node value, Required(key));
  if (!value.IsScalar() || value.Scalar().empty()) {
    return FieldError(PathOf(key), value, "must be a non-empty string, is " + KindName(value));
  }
  *out = value.Scalar();
  return OkStatus();
}

Status YamlMap::Bool(std::string_view key, bool* out) const {
  HCUDP_ASSIGN_OR_RETURN(YAML::Node value, Required(key));
  if (IsPlainScalar(value) && (value.Scalar() == "true" || value.Scalar() == "false")) {
    *out = value.Scalar() == "true";
    return OkStatus();
  }
  return FieldError(PathOf(key), value, "must be true or false, is " + KindName(value));
}

Status RequireSequence(const YAML::Node& node, const std::string& path) {
  if (node.IsSequence()) return OkStatus();
  return FieldError(path, node, "must be a list, is " + KindName(node));
}

}  // namespace hcudp::sim
