// Fuzzes the parsers of Kubernetes API JSON: typed Pod/Node/PodList views,
// object metadata, RFC 3339 times and watch-stream lines. A rejection always
// says why.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "hcudp/hami/rfc3339.h"
#include "hcudp/kube_objects.h"
#include "kube/watch_event.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  hcudp::StatusOr<hcudp::Pod> pod = hcudp::ParsePod(text);
  if (!pod.ok() && pod.status().message().empty()) std::abort();
  (void)hcudp::ParseNode(text);
  hcudp::StatusOr<hcudp::PodList> list = hcudp::ParsePodList(text);
  if (!list.ok() && list.status().message().empty()) std::abort();
  (void)hcudp::ParseObjectMeta(text);
  (void)hcudp::hami::ParseRfc3339(text.substr(0, 64));
  hcudp::WatchEvent event;
  if (hcudp::kube::ParseWatchLine(text, &event).ok() && event.object_json.empty()) std::abort();
  // Quoting anything must give a string the pod parser accepts as a name.
  std::string quoted = "{\"metadata\":{\"name\":" + hcudp::JsonQuote(text) + "}}";
  hcudp::StatusOr<hcudp::ObjectMeta> meta = hcudp::ParseObjectMeta(quoted);
  if (!meta.ok() || meta->name != text) std::abort();
  return 0;
}
