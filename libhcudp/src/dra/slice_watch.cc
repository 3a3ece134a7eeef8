// WatchedSlices: the watched copy of the node's ResourceSlices.
#include "dra/slice_watch.h"

#include <rapidjson/document.h>

#include <optional>

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

// A resourceVersion as an integer (etcd's revision, as every API server
// gives it); nullopt when it is not one.
std::optional<uint64_t> RevisionOf(const std::string& version) {
  if (version.empty() || version.size() > 19) return std::nullopt;
  uint64_t value = 0;
  for (char c : version) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  return value;
}

// metadata.resourceVersion of an object's JSON, as an integer.
std::optional<uint64_t> ObjectRevision(const std::string& object_json) {
  rapidjson::Document doc;
  doc.Parse(object_json.data(), object_json.size());
  if (doc.HasParseError() || !doc.IsObject()) return std::nullopt;
  auto meta = doc.FindMember("metadata");
  if (meta == doc.MemberEnd() || !meta->value.IsObject()) return std::nullopt;
  auto rv = meta->value.FindMember("resourceVersion");
  if (rv == meta->value.MemberEnd() || !rv->value.IsString()) return std::nullopt;
  return RevisionOf(rv->value.GetString());
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
  // Our writes newer than the list stay over its view; the rest it confirms
  // (or overrides: someone changed or deleted the slice after us).
  const std::optional<uint64_t> listed_at = RevisionOf(version);
  for (auto it = recent_writes_.begin(); it != recent_writes_.end();) {
    const auto& [written_at, json] = it->second;
    if (listed_at && written_at > *listed_at) {
      auto listed = fresh.find(it->first);
      const std::optional<uint64_t> listed_rev =
          listed == fresh.end() ? std::nullopt : ObjectRevision(listed->second);
      if (!listed_rev || *listed_rev < written_at) fresh[it->first] = json;
      ++it;
    } else {
      it = recent_writes_.erase(it);
    }
  }
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
  const std::optional<uint64_t> revision =
      object_json.empty() ? std::nullopt : ObjectRevision(object_json);
  MutexLock lock(mu_);
  if (object_json.empty()) {
    slices_.erase(name);
    recent_writes_.erase(name);
  } else {
    slices_[name] = object_json;
    if (revision) {
      recent_writes_[name] = {*revision, object_json};
    } else {
      recent_writes_.erase(name);
    }
  }
}

void WatchedSlices::Invalidate() {
  MutexLock lock(mu_);
  valid_ = false;
  slices_.clear();  // our recent writes stay: the next LIST may be older than them
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
