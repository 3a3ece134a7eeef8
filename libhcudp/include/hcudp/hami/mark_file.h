// Mark files under /etc/vdev/dynamic (§5.6): their names and content.
// Part of the HAMi codec (hcudp/hami/*.h; the rules for all of it are in
// hcudp/hami/keys.h).
#ifndef HCUDP_HAMI_MARK_FILE_H_
#define HCUDP_HAMI_MARK_FILE_H_

#include <chrono>
#include <string>
#include <string_view>

#include "hcudp/export.h"
#include "hcudp/status.h"

namespace hcudp::hami {

// Host directory of mark files (a host path: prefix it with host-root).
inline constexpr std::string_view kMarkFileDir = "/etc/vdev/dynamic";

inline constexpr int kWholeCardVhcuId = -1;

// /etc/vdev/dynamic/<podUID>_<container>_<dvInd>_<vdevIdx>.
struct MarkFileName {
  std::string pod_uid;
  std::string container;
  int card = 0;                    // dvInd, >= 0
  int vhcu_id = kWholeCardVhcuId;  // vdev index, or -1 for a whole card

  bool whole_card() const { return vhcu_id == kWholeCardVhcuId; }
  HCUDP_EXPORT bool operator==(const MarkFileName& o) const;
};

// InvalidArgument when a part is empty or contains '_' or '/', card < 0 or
// vhcu_id < -1.
HCUDP_EXPORT StatusOr<std::string> FormatMarkFileName(const MarkFileName& mark);
// Exactly four '_' parts; card a non-negative int; vhcu_id an int >= -1.
HCUDP_EXPORT StatusOr<MarkFileName> ParseMarkFileName(std::string_view file_name);
// Mark file content: local time as Go's "2006-01-02 15:04:05" (the vendor's).
HCUDP_EXPORT std::string FormatMarkFileTime(std::chrono::system_clock::time_point time);

}  // namespace hcudp::hami

#endif  // HCUDP_HAMI_MARK_FILE_H_
