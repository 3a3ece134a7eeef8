// One entry of the vHCU intent journal (internal to the vHCU manager): what
// CreateVhcu was about to do, written before it did it.
#ifndef HCUDP_SRC_HAMI_INTENT_RECORD_H_
#define HCUDP_SRC_HAMI_INTENT_RECORD_H_

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "hcudp/status.h"

namespace hcudp::internal {

struct IntentRecord {
  std::string pod_uid;
  std::string container;
  int card = 0;
  int compute_units = 0;
  uint64_t memory_mib = 0;
  std::set<int> prior_vhcu_ids;  // vHCU ids on the node before the create
  std::optional<int> vhcu_id;    // set once the create returned
};

// "key: value" lines, fixed order:
//   pod_uid, container, card, compute_units, memory_mib,
//   prior_vhcu_ids (comma list, may be empty), [vhcu_id]
std::string FormatIntentRecord(const IntentRecord& intent);
// Strict: every key above once (vhcu_id optional), nothing else; errors name
// the line.
StatusOr<IntentRecord> ParseIntentRecord(std::string_view text);
// "<podUID>_<container>_<card>.intent"
std::string IntentFileName(const IntentRecord& intent);

}  // namespace hcudp::internal

#endif  // HCUDP_SRC_HAMI_INTENT_RECORD_H_
