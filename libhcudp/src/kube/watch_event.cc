#include "kube/watch_event.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <string>
#include <utility>

#include "kube/api_error.h"

namespace hcudp::kube {
namespace {

bool ParseEventType(std::string_view text, WatchEventType* type) {
  static constexpr std::pair<std::string_view, WatchEventType> kTypes[] = {
      {"ADDED", WatchEventType::kAdded},
      {"MODIFIED", WatchEventType::kModified},
      {"DELETED", WatchEventType::kDeleted},
      {"BOOKMARK", WatchEventType::kBookmark},
      {"ERROR", WatchEventType::kError}};
  for (const auto& [name, value] : kTypes) {
    if (text == name) {
      *type = value;
      return true;
    }
  }
  return false;
}

}  // namespace

std::string JsonText(const rapidjson::Value& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  value.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

// Parses one watch line into `event`. InvalidArgument on malformed input.
Status ParseWatchLine(std::string_view line, WatchEvent* event) {
  if (!JsonNestingWithin(line)) {
    return InvalidArgumentError("watch event nests deeper than " + std::to_string(kMaxJsonDepth) +
                                " levels");
  }
  rapidjson::Document doc;
  doc.Parse(line.data(), line.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return InvalidArgumentError("watch event is not a JSON object");
  }
  auto type = doc.FindMember("type");
  auto object = doc.FindMember("object");
  if (type == doc.MemberEnd() || !type->value.IsString()) {
    return InvalidArgumentError("watch event: field type missing");
  }
  if (!ParseEventType(type->value.GetString(), &event->type)) {
    return InvalidArgumentError(std::string("watch event: unknown type ") +
                                type->value.GetString());
  }
  if (object == doc.MemberEnd() || !object->value.IsObject()) {
    return InvalidArgumentError("watch event: field object missing");
  }
  event->object_json = JsonText(object->value);
  event->resource_version.clear();
  auto meta = object->value.FindMember("metadata");
  if (meta != object->value.MemberEnd() && meta->value.IsObject()) {
    auto rv = meta->value.FindMember("resourceVersion");
    if (rv != meta->value.MemberEnd() && rv->value.IsString()) {
      event->resource_version = rv->value.GetString();
    }
  }
  return OkStatus();
}

}  // namespace hcudp::kube
