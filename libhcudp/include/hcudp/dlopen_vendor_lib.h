// DlopenVendorLib: the VendorLib of a real HCU node. Loads librocm_smi64,
// libhydmi and (optionally) libhydmi_mig from <hyhal_path>/lib at run time, so
// the binaries have no link-time dependency on them and run --backend=sim on
// machines without them (reference/hcu-hardware.md §1).
#ifndef HCUDP_DLOPEN_VENDOR_LIB_H_
#define HCUDP_DLOPEN_VENDOR_LIB_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "hcudp/export.h"
#include "hcudp/status.h"
#include "hcudp/vendor_lib.h"

namespace hcudp {

struct DlopenVendorLibOptions {
  // Vendor runtime: libraries under lib/, hy-smi under bin/. Default /opt/hyhal.
  std::string hyhal_path = "/opt/hyhal";
  // Prefix for node files (/sys/module/hycu/initstate, ...). Default "/".
  std::string host_root = "/";

  // Start-up (Init): wait for /sys/module/hycu/initstate to read "live",
  // polling this often, at most this many times. Default 16 x 10 s.
  int driver_wait_attempts = 16;
  int driver_poll_interval_ms = 10000;
  // rsmi_init failures are retried this many times, this far apart.
  // Default 6 x 10 s.
  int init_retries = 6;
  int init_retry_interval_ms = 10000;
  // While RSMI, DMI and the PCI scan disagree on the card count, re-init
  // (rsmi_shut_down + rsmi_init) up to this many times, this far apart, then
  // continue with a warning as the vendor stack does. Default 12 x 10 s.
  int count_mismatch_retries = 12;
  int count_retry_interval_ms = 10000;
  // `hy-smi --healthcheck` is killed after this long. Default 10 s.
  int healthcheck_timeout_ms = 10000;
  // DestroyVhcu tries once and answers DEVICE_BUSY with Unavailable; the
  // VhcuManager's queue owns the retries (no sleeping under a lock).
  // DMI queries (never a create or destroy) answered with Unavailable —
  // hymgr unreachable (dmiStatus 32-34), the device or SMI busy, interrupted —
  // are retried this many times, backing off from the initial delay,
  // doubling up to the cap, with the library's lock released while waiting
  // (a caller's own lock is not); then Unavailable. Default 5, 200 ms, 2 s.
  int transient_retries = 5;
  int transient_backoff_initial_ms = 200;
  int transient_backoff_max_ms = 2000;
  // How waits sleep; tests substitute a fake. Default (empty):
  // std::this_thread::sleep_for.
  std::function<void(std::chrono::milliseconds)> sleep;
};

// Stops every vendor tool this process is running (hy-smi) at once, and
// keeps new ones from starting: the first step of a shutdown, so that a hung
// tool never holds it up. Safe from any thread.
HCUDP_EXPORT void CancelVendorTools();

// Loads and resolves every needed symbol; errors name the missing library or
// symbol. The returned library is not yet Init()-ed.
HCUDP_EXPORT StatusOr<std::unique_ptr<VendorLib>> NewDlopenVendorLib(
    const DlopenVendorLibOptions& options);

}  // namespace hcudp

#endif  // HCUDP_DLOPEN_VENDOR_LIB_H_
