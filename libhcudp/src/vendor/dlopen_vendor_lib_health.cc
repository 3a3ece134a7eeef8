// DlopenVendorLib::QueryHealth: hy-smi --healthcheck (matched by BDF), plus
// uncorrectable ECC counts and card presence from RSMI.
#include <glog/logging.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "hcudp/healthcheck.h"
#include "vendor/dlopen_vendor_lib_impl.h"
#include "vendor/node_files.h"
#include "vendor/subprocess.h"

namespace hcudp::vendor {
namespace {

void MarkUnhealthy(CardHealthReport* report, const std::string& reason) {
  report->health = Health::kUnhealthy;
  report->reason += (report->reason.empty() ? "" : "; ") + reason;
}

}  // namespace

StatusOr<std::vector<CardHealthReport>> DlopenVendorLib::QueryHealth() {
  const std::string hy_smi = UnderRoot(options_.hyhal_path, "/bin/hy-smi");
  StatusOr<CommandResult> run =
      RunCommand({hy_smi, "--healthcheck"}, options_.healthcheck_timeout_ms);
  if (!run.ok()) return run.status().WithContext("health query");
  if (run->exit_code != 0) {
    std::string out = run->output.substr(0, 200);
    return UnavailableError("health query: " + hy_smi + " --healthcheck exited with " +
                            std::to_string(run->exit_code) + ": " + out);
  }
  StatusOr<std::vector<HealthcheckEntry>> entries = ParseHealthcheck(run->output);
  if (!entries.ok()) return entries.status().WithContext("health query");
  std::map<std::string, const HealthcheckEntry*> by_bdf;
  for (const HealthcheckEntry& e : *entries) by_bdf[e.bdf] = &e;

  ResyncIfCountsDisagree();

  std::shared_lock lock(mu_);
  HCUDP_RETURN_IF_ERROR(CheckInitializedLocked());
  HCUDP_ASSIGN_OR_RETURN(const int count, RsmiCountLocked());
  std::vector<CardHealthReport> reports;
  for (int card = 0; card < count; ++card) {
    HCUDP_ASSIGN_OR_RETURN(std::string bdf, BdfLocked(card));
    CardHealthReport report;
    report.bdf = bdf;
    auto it = by_bdf.find(bdf);
    if (it == by_bdf.end()) {
      MarkUnhealthy(&report, "missing from hy-smi --healthcheck");
    } else {
      if (it->second->health != Health::kHealthy) {
        MarkUnhealthy(&report, "hy-smi: " + it->second->word);
      }
      by_bdf.erase(it);
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

}  // namespace hcudp::vendor
