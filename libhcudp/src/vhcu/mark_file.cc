// /etc/vdev/dynamic/<podUID>_<container>_<dvInd>_<vdevIdx> (§5.6).
#include "hcudp/hami/mark_file.h"

#include "hami/text_util.h"
#include "hami/time_text.h"

namespace hcudp::hami {
namespace {

using internal::ParseInt;
using internal::Quote;

using internal::kInt32Max;

}  // namespace

bool MarkFileName::operator==(const MarkFileName& o) const {
  return pod_uid == o.pod_uid && container == o.container && card == o.card && vhcu_id == o.vhcu_id;
}

StatusOr<std::string> FormatMarkFileName(const MarkFileName& mark) {
  for (auto [name, value] : {std::pair<std::string_view, std::string_view>{"pod UID", mark.pod_uid},
                             {"container name", mark.container}}) {
    if (value.empty() || internal::ContainsAny(value, std::string_view("_/\0", 3)) ||
        value == "." || value == "..") {
      return InvalidArgumentError("mark file: " + std::string(name) + " " + Quote(value) +
                                  " is empty or contains '_' or '/'");
    }
  }
  if (mark.card < 0) {
    return InvalidArgumentError("mark file: card index " + std::to_string(mark.card) +
                                " is negative");
  }
  if (mark.vhcu_id < kWholeCardVhcuId) {
    return InvalidArgumentError("mark file: vHCU id " + std::to_string(mark.vhcu_id) +
                                " is below -1");
  }
  return mark.pod_uid + "_" + mark.container + "_" + std::to_string(mark.card) + "_" +
         std::to_string(mark.vhcu_id);
}

StatusOr<MarkFileName> ParseMarkFileName(std::string_view file_name) {
  std::vector<std::string_view> parts = internal::Split(file_name, '_');
  if (parts.size() != 4) {
    return InvalidArgumentError("mark file name " + Quote(file_name) + " has " +
                                std::to_string(parts.size()) +
                                " '_' parts, want 4 (<podUID>_<container>_<card>_<vdevIdx>)");
  }
  MarkFileName mark;
  if (parts[0].empty() || parts[1].empty() ||
      internal::ContainsAny(file_name, std::string_view("/\0", 2))) {
    return InvalidArgumentError("mark file name " + Quote(file_name) +
                                ": empty pod UID or container, or a '/'");
  }
  mark.pod_uid = std::string(parts[0]);
  mark.container = std::string(parts[1]);
  auto card = ParseInt(parts[2], 0, kInt32Max);
  if (!card) {
    return InvalidArgumentError("mark file name " + Quote(file_name) + ": card " + Quote(parts[2]) +
                                " is not an index >= 0");
  }
  mark.card = static_cast<int>(*card);
  auto vhcu = ParseInt(parts[3], kWholeCardVhcuId, kInt32Max);
  if (!vhcu) {
    return InvalidArgumentError("mark file name " + Quote(file_name) + ": vdev index " +
                                Quote(parts[3]) + " is not -1 or an index >= 0");
  }
  mark.vhcu_id = static_cast<int>(*vhcu);
  return mark;
}

std::string FormatMarkFileTime(std::chrono::system_clock::time_point time) {
  return internal::FormatCivil(time, ' ', /*local=*/true);
}

}  // namespace hcudp::hami
