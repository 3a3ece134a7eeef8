#include "crash_points.h"

#include <csignal>
#include <cstdlib>
#include <map>
#include <string>

#include "hcudp_internal/log.h"

namespace hcudp::testing {
namespace {

std::string CrashStep() {
  const char* env = std::getenv(kCrashAfterEnv);
  return env == nullptr ? "" : env;
}

// The hook that SIGKILLs the process after step `it->second` of `steps`.
template <typename Step>
std::function<bool(Step)> HookAt(const std::map<std::string, Step>& steps, const char* what) {
  auto it = steps.find(CrashStep());
  if (it == steps.end()) return nullptr;
  LOG(WARNING) << "test only: will crash after " << what << " step " << it->first;
  const Step target = it->second;
  return [target](Step s) {
    if (s == target) std::raise(SIGKILL);
    return false;
  };
}

}  // namespace

std::function<bool(VhcuCreateStep)> VhcuCrashHook(bool warn_if_unknown) {
  static const std::map<std::string, VhcuCreateStep> kSteps = {
      {"intent-recorded", VhcuCreateStep::kIntentRecorded},
      {"vhcu-created", VhcuCreateStep::kVhcuCreated},
      {"id-recorded", VhcuCreateStep::kIdRecorded},
      {"mark-written", VhcuCreateStep::kMarkWritten}};
  auto hook = HookAt(kSteps, "vHCU");
  if (hook == nullptr && warn_if_unknown && !CrashStep().empty()) {
    LOG(WARNING) << kCrashAfterEnv << "=" << CrashStep() << " not understood; ignored";
  }
  return hook;
}

std::function<bool(dra::PrepareStep)> PrepareCrashHook() {
  static const std::map<std::string, dra::PrepareStep> kSteps = {
      {"dra-preparing", dra::PrepareStep::kCheckpointPreparing},
      {"dra-device-made", dra::PrepareStep::kDeviceMade},
      {"dra-claim-spec", dra::PrepareStep::kClaimSpecWritten},
      {"dra-prepared", dra::PrepareStep::kCheckpointPrepared},
      {"dra-unprepare-freed", dra::PrepareStep::kUnprepareDeviceFreed}};
  return HookAt(kSteps, "Prepare");
}

}  // namespace hcudp::testing
