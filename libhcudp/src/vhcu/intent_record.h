// One entry of the vHCU intent journal (internal to the vHCU manager): what
// CreateVhcu was about to do, written before it did it.
#ifndef HCUDP_SRC_VHCU_INTENT_RECORD_H_
#define HCUDP_SRC_VHCU_INTENT_RECORD_H_

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hcudp/device.h"
#include "hcudp/status.h"

namespace hcudp::internal {

struct IntentRecord {
  std::string pod_uid;
  std::string container;
  int card = 0;
  std::string card_bdf;  // the card's PCI BDF ("" in records of older versions)
  int compute_units = 0;
  uint64_t memory_mib = 0;
  std::set<int> prior_vhcu_ids;  // vHCU ids on the node before the create
  std::optional<int> vhcu_id;    // set once the create returned
};

// "key: value" lines, fixed order:
//   pod_uid, container, card, [card_bdf], compute_units, memory_mib,
//   prior_vhcu_ids (comma list, may be empty), [vhcu_id]
// "pod <uid> container <name> card <n> (<bdf>)", for logs.
std::string DescribeIntent(const IntentRecord& r);

std::string FormatIntentRecord(const IntentRecord& intent);
// Strict: every key above once (card_bdf and vhcu_id optional), nothing
// else; errors name the line.
StatusOr<IntentRecord> ParseIntentRecord(std::string_view text);
// "<podUID>_<container>_<card>_<attempt>.intent": one file per create
// attempt, so that an intent left unresolved never blocks the next attempt.
std::string IntentFileName(const IntentRecord& intent, const std::string& attempt);

// Is `v` on the intent's card: by BDF when the intent has one (the index may
// name another card after a re-enumeration), else by index.
bool OnIntentCard(const Vhcu& v, const IntentRecord& r);
// Exactly the CUs and MiB the intent asked for.
bool OfIntentSize(const Vhcu& v, const IntentRecord& r);
// Every readable intent in `dir` with its path (".tmp" files skipped,
// unreadable ones logged and skipped, and named in `unreadable` when it is
// given); a missing directory is empty.
StatusOr<std::vector<std::pair<IntentRecord, std::string>>> ReadIntentJournal(
    const std::string& dir, std::vector<std::string>* unreadable = nullptr);

}  // namespace hcudp::internal

#endif  // HCUDP_SRC_VHCU_INTENT_RECORD_H_
