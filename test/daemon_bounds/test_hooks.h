// The hooks of the test-only daemon build (hcu-dp-daemon-testhooks, built
// from hcu-dp-daemon's sources with HCUDP_DAEMON_TEST_HOOKS). Test-only code,
// kept here: the shipped daemon has none of it.
#ifndef HCUDP_TEST_DAEMON_BOUNDS_TEST_HOOKS_H_
#define HCUDP_TEST_DAEMON_BOUNDS_TEST_HOOKS_H_

#include "deviceplugin_v1beta1.pb.h"

namespace hcudp::testing {

// An Allocate naming the device ID "test-hook:hold" never returns, as a
// handler stuck in a call without a deadline would; any other returns.
void HoldAllocateIfAsked(const v1beta1::AllocateRequest& request);

}  // namespace hcudp::testing

#endif  // HCUDP_TEST_DAEMON_BOUNDS_TEST_HOOKS_H_
