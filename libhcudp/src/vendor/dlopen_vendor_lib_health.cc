// DlopenVendorLib::QueryHealth: hy-smi --healthcheck (matched by BDF), plus
// uncorrectable ECC counts and card presence from RSMI.

#include <algorithm>
#include <map>
#include <mutex>
#include <set>

#include "hcudp/healthcheck.h"
#include "hcudp_internal/log.h"
#include "vendor/dlopen_vendor_lib_impl.h"
#include "vendor/node_files.h"
#include "vendor/subprocess.h"
#include "vendor/vendor_status.h"

namespace hcudp::vendor {
namespace {

void MarkUnhealthy(CardHealthReport* report, const std::string& reason) {
  report->health = Health::kUnhealthy;
  report->reason += (report->reason.empty() ? "" : "; ") + reason;
}

}  // namespace

void DlopenVendorLib::LogSkippedLines(const std::vector<std::string>& skipped) {
  if (skipped.empty()) return;
  const auto now = std::chrono::steady_clock::now();
  MutexLock guard(health_mu_);
  if (skipped_logged_at_ != std::chrono::steady_clock::time_point() &&
      now - skipped_logged_at_ < kSkippedLogInterval) {
    skipped_suppressed_ += skipped.size();
    return;
  }
  LOG(WARNING) << "hy-smi --healthcheck: skipped " << skipped.size()
               << " odd line(s), first: " << skipped.front()
               << (skipped_suppressed_ > 0
                       ? " (" + std::to_string(skipped_suppressed_) + " more since the last note)"
                       : std::string());
  skipped_logged_at_ = now;
  skipped_suppressed_ = 0;
}

StatusOr<std::vector<CardHealthReport>> DlopenVendorLib::QueryHealth() {
  // DMI gone for the life of the process is a failed query, never a
  // verdict on the cards.
  HCUDP_RETURN_IF_ERROR(RestartRequired().WithContext("health query"));
  const std::string hy_smi = internal::JoinUnder(options_.hyhal_path, "bin/hy-smi");
  StatusOr<CommandResult> run =
      RunCommand({hy_smi, "--healthcheck"}, options_.healthcheck_timeout_ms);
  if (!run.ok()) return run.status().WithContext("health query");
  if (run->exit_code != 0) {
    std::string out = run->output.substr(0, 200);
    return UnavailableError("health query: " + hy_smi + " --healthcheck exited with " +
                            std::to_string(run->exit_code) + ": " + out);
  }
  std::vector<std::string> skipped;
  StatusOr<std::vector<HealthcheckEntry>> entries = ParseHealthcheck(run->output, &skipped);
  if (!entries.ok()) return entries.status().WithContext("health query");
  LogSkippedLines(skipped);
  std::map<std::string, const HealthcheckEntry*> by_bdf;
  for (const HealthcheckEntry& e : *entries) by_bdf[e.bdf] = &e;

  ResyncIfCountsDisagree();
  ProbeResetRequired();

  std::set<std::string> needs_reset;
  {
    MutexLock guard(dmi_down_mu_);
    needs_reset = reset_required_;
  }
  ReaderLock lock(mu_);
  HCUDP_RETURN_IF_ERROR(CheckInitializedLocked());
  HCUDP_ASSIGN_OR_RETURN(const int count, RsmiCountLocked());
  std::vector<CardHealthReport> reports;
  MutexLock health_guard(health_mu_);
  for (int card = 0; card < count; ++card) {
    HCUDP_ASSIGN_OR_RETURN(std::string bdf, BdfLocked(card));
    CardHealthReport report;
    report.bdf = bdf;
    HySmiVerdict& last = hysmi_verdicts_[bdf];
    auto it = by_bdf.find(bdf);
    if (it == by_bdf.end()) {
      // A card missing from one reading keeps its last verdict; only
      // kMissingReadings in a row make it missing (doc/real-node.md).
      ++last.missing;
      if (last.missing >= kMissingReadings) {
        MarkUnhealthy(&report, "missing from hy-smi --healthcheck for " +
                                   std::to_string(last.missing) + " readings in a row");
      } else if (!last.word.empty() && last.health != Health::kHealthy) {
        MarkUnhealthy(&report, "hy-smi: " + last.word + " (last reading; missing from this one)");
      }
    } else {
      last.missing = 0;
      last.word = it->second->word;
      last.health = it->second->health;
      if (it->second->health != Health::kHealthy) {
        MarkUnhealthy(&report, "hy-smi: " + it->second->word);
      }
      by_bdf.erase(it);
    }
    if (needs_reset.count(bdf) != 0) {
      MarkUnhealthy(&report, "the card needs a reset (DMI_STATUS_RESET_REQUIRED)");
    }
    StatusOr<uint64_t> ecc = EccLocked(card);
    if (ecc.ok() && *ecc > 0) {
      MarkUnhealthy(&report, std::to_string(*ecc) + " uncorrectable ECC error(s)");
    } else if (!ecc.ok() && ecc.status().code() != StatusCode::kUnimplemented) {
      // A failed query never marks a card unhealthy.
      VLOG(1) << "ECC query for " << bdf << " failed: " << ecc.status().message();
    }
    reports.push_back(std::move(report));
  }
  // Cards seen earlier that the library no longer lists have vanished.
  for (const std::string& bdf : known_bdfs_) {
    const bool listed = std::any_of(reports.begin(), reports.end(),
                                    [&](const CardHealthReport& r) { return r.bdf == bdf; });
    if (listed) continue;
    CardHealthReport report;
    report.bdf = bdf;
    MarkUnhealthy(&report, "no longer reported by the driver (rsmi)");
    by_bdf.erase(bdf);
    reports.push_back(std::move(report));
  }
  // Cards hy-smi knows but the library does not: report what hy-smi says.
  for (const auto& [bdf, entry] : by_bdf) {
    CardHealthReport report;
    report.bdf = bdf;
    if (entry->health != Health::kHealthy) MarkUnhealthy(&report, "hy-smi: " + entry->word);
    reports.push_back(std::move(report));
  }
  return reports;
}

void DlopenVendorLib::ProbeResetRequired() {
  // dmiGetDeviceInfo is the cheapest call that names a card: RESET_REQUIRED
  // there marks the card; an answer clears it (the card was reset).
  ReaderLock lock(mu_);
  if (!initialized_) return;
  for (size_t card = 0; card < card_map_.bdfs.size(); ++card) {
    const int dmi = card_map_.dmi_index[card];
    if (dmi < 0) continue;
    dmiDeviceInfo raw{};
    const dmiStatus st = api_->dmi.get_device_info(dmi, &raw);
    MutexLock guard(dmi_down_mu_);
    if (st == DMI_STATUS_RESET_REQUIRED) {
      if (reset_required_.insert(card_map_.bdfs[card]).second) {
        LOG(ERROR) << "card " << card_map_.bdfs[card]
                   << " needs a reset (dmiGetDeviceInfo: " << DmiCodeName(st) << ")";
      }
    } else if (st == DMI_STATUS_SUCCESS) {
      if (reset_required_.erase(card_map_.bdfs[card]) != 0) {
        LOG(WARNING) << "card " << card_map_.bdfs[card] << " answers again after a reset";
      }
    }
  }
}

}  // namespace hcudp::vendor
