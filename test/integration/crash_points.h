// The crash points of the test copy of the daemon (hcu-dp-daemon-crashpoints,
// built from hcu-dp-daemon's sources with HCUDP_TEST_CRASH_POINTS): with
// HCUDP_TEST_ONLY_CRASH_AFTER=<step> the daemon SIGKILLs itself right after
// that step of a vHCU creation or a DRA Prepare. Test-only code, kept here:
// the shipped daemon has no crash switch at all.
#ifndef HCUDP_TEST_INTEGRATION_CRASH_POINTS_H_
#define HCUDP_TEST_INTEGRATION_CRASH_POINTS_H_

#include <functional>

#include "hcudp/dra/preparer.h"
#include "hcudp/vhcu_manager.h"

namespace hcudp::testing {

inline constexpr char kCrashAfterEnv[] = "HCUDP_TEST_ONLY_CRASH_AFTER";

// "intent-recorded", "vhcu-created", "id-recorded" or "mark-written": the
// hook for VhcuManagerOptions::crash_after; null for any other value (with
// `warn_if_unknown`, a set value that is no vHCU step is logged).
std::function<bool(VhcuCreateStep)> VhcuCrashHook(bool warn_if_unknown);

// "dra-preparing", "dra-device-made", "dra-claim-spec", "dra-prepared" or
// "dra-unprepare-freed": the hook for PreparerOptions::crash_after.
std::function<bool(dra::PrepareStep)> PrepareCrashHook();

}  // namespace hcudp::testing

#endif  // HCUDP_TEST_INTEGRATION_CRASH_POINTS_H_
