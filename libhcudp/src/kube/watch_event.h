// Decoding one line of a WATCH stream: {"type": ..., "object": {...}}.
#ifndef HCUDP_SRC_KUBE_WATCH_EVENT_H_
#define HCUDP_SRC_KUBE_WATCH_EVENT_H_

#include <string_view>

#include "hcudp/kube_client.h"
#include "hcudp/status.h"

namespace hcudp::kube {

// Fills `event` from one JSON line. InvalidArgument naming what is wrong.
Status ParseWatchLine(std::string_view line, WatchEvent* event);

}  // namespace hcudp::kube

#endif  // HCUDP_SRC_KUBE_WATCH_EVENT_H_
