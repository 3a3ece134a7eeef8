// hygon.com/container-index (§5.4).
#include "hcudp/hami/container_index.h"

#include "hami/text_util.h"
#include "hcudp/hami/pod_devices.h"

namespace hcudp::hami {
namespace {

using internal::ParseInt;
using internal::Quote;
using internal::Split;

using internal::kInt32Max;

}  // namespace

std::string EncodeContainerIndex(const std::vector<int>& indexes) {
  std::string out;
  for (int i : indexes) out += std::to_string(i) + ",";
  return out;
}

StatusOr<std::vector<int>> DecodeContainerIndex(std::string_view value) {
  std::vector<int> indexes;
  if (value.empty()) return indexes;
  if (value.back() != ',') {
    return InvalidArgumentError("container index " + Quote(value) +
                                " does not end with ',' (each index ends in ',')");
  }
  std::vector<std::string_view> items = Split(value.substr(0, value.size() - 1), ',');
  for (size_t n = 0; n < items.size(); ++n) {
    auto index = ParseInt(items[n], 0, kInt32Max);
    if (!index) {
      return InvalidArgumentError("container index item " + std::to_string(n) + " " +
                                  Quote(items[n]) + " is not a container index >= 0");
    }
    indexes.push_back(static_cast<int>(*index));
  }
  return indexes;
}

StatusOr<std::vector<int>> ContainerIndexesFromAllocated(std::string_view value,
                                                         int container_count) {
  if (container_count < 0) return InvalidArgumentError("container count is negative");
  std::vector<std::string_view> parts = Split(value, ';');
  // The vendor prepends ';' until the part count reaches the container count.
  size_t shift = parts.size() < static_cast<size_t>(container_count)
                     ? static_cast<size_t>(container_count) - parts.size()
                     : 0;
  std::vector<int> indexes;
  for (size_t i = 0; i < parts.size(); ++i) {
    StatusOr<ContainerDevices> devices = DecodeContainerDevices(parts[i]);
    if (!devices.ok()) return devices.status().WithContext("part " + std::to_string(i));
    if (!devices->empty()) indexes.push_back(static_cast<int>(i + shift));
  }
  return indexes;
}

}  // namespace hcudp::hami
