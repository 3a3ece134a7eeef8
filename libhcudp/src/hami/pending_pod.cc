// The pod being bound to this node (§5.4 step 1).
#include "hcudp/hami/pending_pod.h"

#include "hami/text_util.h"
#include "hcudp/hami/keys.h"

namespace hcudp::hami {

StatusOr<int64_t> ParseBindTime(std::string_view value) {
  auto seconds = internal::ParseInt(value, 0, int64_t{1} << 40);
  if (!seconds) {
    return InvalidArgumentError("bind time " + internal::Quote(value) + " is not unix seconds");
  }
  return *seconds;
}

bool IsAllocatingOn(const std::map<std::string, std::string>& annotations,
                    std::string_view node_name) {
  auto value = [&](std::string_view key) -> const std::string* {
    auto it = annotations.find(std::string(key));
    return it == annotations.end() ? nullptr : &it->second;
  };
  const std::string* phase = value(kBindPhaseAnnotation);
  const std::string* node = value(kVgpuNodeAnnotation);
  return value(kBindTimeAnnotation) != nullptr && phase != nullptr &&
         *phase == kBindPhaseAllocating && node != nullptr && *node == node_name;
}

}  // namespace hcudp::hami
