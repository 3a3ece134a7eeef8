// Fuzzes the parsers of Kubernetes API JSON: typed Pod/Node/PodList views,
// object metadata, RFC 3339 times and watch-stream lines. An accepted pod
// must parse again from its own raw_json with the same identity.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "hcudp/kube_objects.h"
#include "kube/watch_event.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  hcudp::StatusOr<hcudp::Pod> pod = hcudp::ParsePod(text);
  if (pod.ok()) {
    hcudp::StatusOr<hcudp::Pod> again = hcudp::ParsePod(pod->raw_json);
    if (!again.ok() || again->metadata.name != pod->metadata.name ||
        again->containers.size() != pod->containers.size()) {
      std::abort();
    }
  } else if (pod.status().message().empty()) {
    std::abort();
  }
  (void)hcudp::ParseNode(text);
  hcudp::StatusOr<hcudp::PodList> list = hcudp::ParsePodList(text);
  if (list.ok()) {
    for (const hcudp::Pod& item : list->items) {
      if (!hcudp::ParsePod(item.raw_json).ok()) std::abort();
    }
  }
  (void)hcudp::ParseObjectMeta(text);
  (void)hcudp::ParseRfc3339(text.substr(0, 64));
  hcudp::WatchEvent event;
  if (hcudp::kube::ParseWatchLine(text, &event).ok() && event.object_json.empty()) std::abort();
  // Quoting anything must give a string the pod parser accepts as a name.
  std::string quoted = "{\"metadata\":{\"name\":" + hcudp::JsonQuote(text) + "}}";
  hcudp::StatusOr<hcudp::ObjectMeta> meta = hcudp::ParseObjectMeta(quoted);
  if (!meta.ok() || meta->name != text) std::abort();
  return 0;
}
