// Decoding one line of a WATCH stream: {"type": ..., "object": {...}}.
#ifndef HCUDP_SRC_KUBE_WATCH_EVENT_H_
#define HCUDP_SRC_KUBE_WATCH_EVENT_H_

#include <rapidjson/document.h>

#include <string>
#include <string_view>

#include "hcudp/kube_client.h"
#include "hcudp/status.h"

namespace hcudp::kube {

// A JSON value as compact text (what a watch event's object, a listed item
// or a request body is sent or kept as).
std::string JsonText(const rapidjson::Value& value);

// Fills `event` from one JSON line. InvalidArgument naming what is wrong.
Status ParseWatchLine(std::string_view line, WatchEvent* event);

}  // namespace hcudp::kube

#endif  // HCUDP_SRC_KUBE_WATCH_EVENT_H_
