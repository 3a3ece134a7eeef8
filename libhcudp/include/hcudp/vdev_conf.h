// /etc/vdev/vdev<N>.conf: the record of one vHCU, written by the driver (or
// the sim) and read by the container runtime at /etc/vdev/docker/vdev<N>.conf.
// Format and rules: reference/hcu-hardware.md §3.3-3.5.
#ifndef HCUDP_VDEV_CONF_H_
#define HCUDP_VDEV_CONF_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hcudp/export.h"
#include "hcudp/status.h"

namespace hcudp {

inline constexpr int kMaxCuMaskBits = 128;
inline constexpr int kMaxPipeId = 19;

struct VdevConf {
  std::string pci_bus_id;   // parent card BDF
  uint64_t cu_mask_lo = 0;  // first cu_mask line: CUs 0..63
  uint64_t cu_mask_hi = 0;  // second cu_mask line: CUs 64..127
  int cu_count = 0;         // == popcount of the masks
  uint64_t mem_mib = 0;     // "mem: <n> MiB"
  int device_id = 0;        // parent card index
  int vdev_id = 0;          // must equal N of vdevN.conf
  int pipe_id = 0;          // 0..19, unique among one card's vHCUs
  int enable = 1;
};

// Strict parse: all nine keys, in any order, `key: value`; unknown keys,
// duplicates (other than the two cu_mask lines), bad numbers and an empty
// file are errors naming the line. Checks cu_count == popcount(masks).
HCUDP_EXPORT StatusOr<VdevConf> ParseVdevConf(std::string_view text);
// The canonical text, fixed key order, as the driver writes it.
HCUDP_EXPORT std::string FormatVdevConf(const VdevConf& conf);
// vdev_id must equal the N in the file name (else the runtime silently gives
// the container no device).
HCUDP_EXPORT Status CheckVdevConfName(const VdevConf& conf, int file_index);
// pipe_id unique per parent card among `confs`.
HCUDP_EXPORT Status CheckPipeIdsUnique(const std::vector<VdevConf>& confs);
// N of "vdevN.conf", or InvalidArgument.
HCUDP_EXPORT StatusOr<int> ParseVdevConfFileName(std::string_view file_name);

}  // namespace hcudp

#endif  // HCUDP_VDEV_CONF_H_
