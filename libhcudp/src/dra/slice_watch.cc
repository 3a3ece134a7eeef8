// WatchedSlices: the watched copy of the node's ResourceSlices.
#include "dra/slice_watch.h"

#include <rapidjson/document.h>

#include "kube/watch_event.h"

namespace hcudp::dra {
namespace {

// metadata.name of an object's JSON; empty when it has none.
std::string NameOf(const rapidjson::Value& obj) {
  if (!obj.IsObject()) return "";
  auto meta = obj.FindMember("metadata");
  if (meta == obj.MemberEnd() || !meta->value.IsObject()) return "";
  auto name = meta->value.FindMember("name");
  if (name == meta->value.MemberEnd() || !name->value.IsString()) return "";
  return std::string(name->value.GetString(), name->value.GetStringLength());
}

}  // namespace

StatusOr<std::string> WatchedSlices::ApplyList(const std::string& list_json) {
  rapidjson::Document doc;
  doc.Parse(list_json.data(), list_json.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return InvalidArgumentError("ResourceSlice list from the API server is not a JSON object");
  }
  auto items = doc.FindMember("items");
  if (items == doc.MemberEnd() || !(items->value.IsArray() || items->value.IsNull())) {
    return InvalidArgumentError("ResourceSlice list from the API server has no items array");
  }
  std::map<std::string, std::string> fresh;
  if (items->value.IsArray()) {
    for (const rapidjson::Value& item : items->value.GetArray()) {
      const std::string name = NameOf(item);
      if (name.empty()) {
        return InvalidArgumentError("a ResourceSlice from the API server has no metadata.name");
      }
      fresh[name] = kube::JsonText(item);
    }
  }
  std::string version;
  auto meta = doc.FindMember("metadata");
  if (meta != doc.MemberEnd() && meta->value.IsObject()) {
    auto rv = meta->value.FindMember("resourceVersion");
    if (rv != meta->value.MemberEnd() && rv->value.IsString()) version = rv->value.GetString();
  }
  MutexLock lock(mu_);
  slices_ = std::move(fresh);
  valid_ = true;
  return version;
}

void WatchedSlices::ApplyEvent(const WatchEvent& event) {
  if (event.type != WatchEventType::kAdded && event.type != WatchEventType::kModified &&
      event.type != WatchEventType::kDeleted) {
    return;
  }
  rapidjson::Document doc;
  doc.Parse(event.object_json.data(), event.object_json.size());
  const std::string name = doc.HasParseError() ? "" : NameOf(doc);
  MutexLock lock(mu_);
  if (name.empty()) {
    valid_ = false;  // an event not understood: the copy can no longer be trusted
    return;
  }
  if (event.type == WatchEventType::kDeleted) {
    slices_.erase(name);
  } else {
    slices_[name] = event.object_json;
  }
}

void WatchedSlices::ApplyWrite(const std::string& name, const std::string& object_json) {
  MutexLock lock(mu_);
  if (object_json.empty()) {
    slices_.erase(name);
  } else {
    slices_[name] = object_json;
  }
}

void WatchedSlices::Invalidate() {
  MutexLock lock(mu_);
  valid_ = false;
  slices_.clear();
}

std::optional<std::string> WatchedSlices::Snapshot() const {
  MutexLock lock(mu_);
  if (!valid_) return std::nullopt;
  std::string out = "{\"items\":[";
  bool first = true;
  for (const auto& [name, json] : slices_) {
    if (!first) out += ",";
    first = false;
    out += json;
  }
  out += "]}";
  return out;
}

}  // namespace hcudp::dra
