#include "vhcu/intent_record.h"

#include <map>
#include <vector>

#include "hami/text_util.h"
#include "hcudp_internal/file_util.h"
#include "hcudp_internal/log.h"

namespace hcudp::internal {
namespace {

using hami::internal::ParseInt;
using hami::internal::Quote;
using hami::internal::Split;

using hami::internal::kInt32Max;

}  // namespace

std::string FormatIntentRecord(const IntentRecord& intent) {
  std::string prior;
  for (int id : intent.prior_vhcu_ids) prior += (prior.empty() ? "" : ",") + std::to_string(id);
  std::string out = "pod_uid: " + intent.pod_uid + "\ncontainer: " + intent.container +
                    "\ncard: " + std::to_string(intent.card) +
                    (intent.card_bdf.empty() ? "" : "\ncard_bdf: " + intent.card_bdf) +
                    "\ncompute_units: " + std::to_string(intent.compute_units) +
                    "\nmemory_mib: " + std::to_string(intent.memory_mib) +
                    "\nprior_vhcu_ids: " + prior + "\n";
  if (intent.vhcu_id) out += "vhcu_id: " + std::to_string(*intent.vhcu_id) + "\n";
  return out;
}

StatusOr<IntentRecord> ParseIntentRecord(std::string_view text) {
  std::map<std::string, std::string> values;
  std::vector<std::string_view> lines = Split(text, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    if (line.empty()) continue;
    size_t colon = line.find(": ");
    if (colon == std::string_view::npos) {
      return InvalidArgumentError("intent line " + std::to_string(i + 1) + " " + Quote(line) +
                                  " is not 'key: value'");
    }
    std::string key(line.substr(0, colon));
    if (!values.emplace(key, std::string(line.substr(colon + 2))).second) {
      return InvalidArgumentError("intent line " + std::to_string(i + 1) + ": duplicate key " +
                                  key);
    }
  }
  IntentRecord r;
  auto find = [&](const char* key) -> const std::string* {
    auto it = values.find(key);
    return it == values.end() ? nullptr : &it->second;
  };
  for (const auto& [key, value] : values) {
    if (key != "pod_uid" && key != "container" && key != "card" && key != "card_bdf" &&
        key != "compute_units" && key != "memory_mib" && key != "prior_vhcu_ids" &&
        key != "vhcu_id") {
      return InvalidArgumentError("intent has unknown key " + key);
    }
  }
  for (const char* key : {"pod_uid", "container", "card", "compute_units", "memory_mib"}) {
    if (find(key) == nullptr || find(key)->empty()) {
      return InvalidArgumentError(std::string("intent lacks key ") + key);
    }
  }
  r.pod_uid = *find("pod_uid");
  r.container = *find("container");
  if (const std::string* bdf = find("card_bdf"); bdf != nullptr) r.card_bdf = *bdf;
  auto card = ParseInt(*find("card"), 0, kInt32Max);
  auto cu = ParseInt(*find("compute_units"), 0, kInt32Max);
  auto mib = ParseInt(*find("memory_mib"), 0, int64_t{1} << 40);
  if (!card || !cu || !mib)
    return InvalidArgumentError("intent card, compute_units or memory_mib is not a number");
  r.card = static_cast<int>(*card);
  r.compute_units = static_cast<int>(*cu);
  r.memory_mib = static_cast<uint64_t>(*mib);
  if (const std::string* prior = find("prior_vhcu_ids"); prior != nullptr && !prior->empty()) {
    for (std::string_view item : Split(*prior, ',')) {
      auto id = ParseInt(item, 0, kInt32Max);
      if (!id)
        return InvalidArgumentError("intent prior_vhcu_ids item " + Quote(item) + " is not an id");
      r.prior_vhcu_ids.insert(static_cast<int>(*id));
    }
  }
  if (const std::string* vhcu = find("vhcu_id"); vhcu != nullptr) {
    auto id = ParseInt(*vhcu, 0, kInt32Max);
    if (!id) return InvalidArgumentError("intent vhcu_id " + Quote(*vhcu) + " is not an id");
    r.vhcu_id = static_cast<int>(*id);
  }
  return r;
}

std::string IntentFileName(const IntentRecord& intent, const std::string& attempt) {
  return intent.pod_uid + "_" + intent.container + "_" + std::to_string(intent.card) + "_" +
         attempt + ".intent";
}

// Is `v` on the intent's card: by BDF when the intent has one (the index may
// name another card after a re-enumeration), else by index.
bool OnIntentCard(const Vhcu& v, const IntentRecord& r) {
  return r.card_bdf.empty() ? v.card == r.card : v.card_bdf == r.card_bdf;
}

bool OfIntentSize(const Vhcu& v, const IntentRecord& r) {
  return v.compute_units == r.compute_units && v.memory_mib == r.memory_mib;
}

bool IsTmpName(const std::string& s) {
  return s.size() >= 4 && s.compare(s.size() - 4, 4, ".tmp") == 0;
}

StatusOr<std::vector<std::pair<IntentRecord, std::string>>> ReadIntentJournal(
    const std::string& dir, std::vector<std::string>* unreadable) {
  HCUDP_ASSIGN_OR_RETURN(std::vector<std::string> names, file_util::ListFileNames(dir));
  std::vector<std::pair<IntentRecord, std::string>> out;
  for (const std::string& name : names) {
    if (IsTmpName(name)) continue;
    std::string path = dir + "/" + name;
    StatusOr<std::string> text = file_util::ReadFile(path);
    StatusOr<IntentRecord> record =
        text.ok() ? ParseIntentRecord(*text) : StatusOr<IntentRecord>(text.status());
    if (!record.ok()) {
      LOG_EVERY_N(ERROR, 100) << "unreadable vHCU intent " << path << ": "
                              << record.status().ToString() << "; left for an administrator";
      if (unreadable != nullptr) unreadable->push_back(path);
      continue;
    }
    out.emplace_back(std::move(*record), std::move(path));
  }
  return out;
}

std::string DescribeIntent(const IntentRecord& r) {
  return "pod " + r.pod_uid + " container " + r.container + " card " + std::to_string(r.card) +
         (r.card_bdf.empty() ? "" : " (" + r.card_bdf + ")");
}

}  // namespace hcudp::internal
