// The host-wide vHCU lock: one lock for every vHCU create and destroy on a
// node, shared by hcu-dp-daemon and hcuctl (issue 9.5).
//
// It is flock(2) on <host-root>/var/lib/hcu-device-plugin/vhcu.lock (the
// directory the HAMi manifest already mounts from the host). The holder writes
// "pid <pid> (<command line>)" into the file, so a waiter can name it. The
// kernel drops the lock when the holder dies, kill -9 included; the text left
// behind by a dead holder is never read as a holder, because a waiter only
// reads it while the lock is actually held.
//
// Waits are bounded: Acquire gives up after `timeout` with Unavailable naming
// the holder and the path. A thread that already holds the lock for this
// host-root gets a nested hold at once (so the daemon's VhcuManager can hold
// it across intent, create and mark while the backend takes it again inside).
// Other threads and processes wait.
#ifndef HCUDP_VHCU_LOCK_H_
#define HCUDP_VHCU_LOCK_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "hcudp/export.h"
#include "hcudp/status.h"

namespace hcudp {

inline constexpr std::string_view kVhcuLockFile = "/var/lib/hcu-device-plugin/vhcu.lock";

// host_root + kVhcuLockFile.
HCUDP_EXPORT std::string VhcuLockPath(const std::string& host_root);

class HCUDP_EXPORT VhcuHostLock {
 public:
  // Takes the lock, waiting at most `timeout` (0: one try; real time: the
  // holder is another thread or process, which lets go in real time, so a
  // simulated clock could neither end nor time out the wait); the wait polls
  // every 20 ms. `on_wait`, when set, is called once with the holder's
  // description if the lock is busy.
  static StatusOr<VhcuHostLock> Acquire(
      const std::string& host_root, std::chrono::milliseconds timeout,
      const std::function<void(const std::string& holder)>& on_wait = nullptr);

  VhcuHostLock(VhcuHostLock&& other) noexcept;
  VhcuHostLock& operator=(VhcuHostLock&& other) noexcept;
  VhcuHostLock(const VhcuHostLock&) = delete;
  VhcuHostLock& operator=(const VhcuHostLock&) = delete;
  ~VhcuHostLock();  // releases the hold

  class Hold;  // libhcudp/src/backend/vhcu_lock.cc

 private:
  explicit VhcuHostLock(std::unique_ptr<Hold> hold);
  std::unique_ptr<Hold> hold_;
};

}  // namespace hcudp

#endif  // HCUDP_VHCU_LOCK_H_
