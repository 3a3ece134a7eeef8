// Fuzzes the node-lock and handshake parsers: an accepted lock is held by
// exactly its own namespace and name, and re-formats to a lock with the same
// instant.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "hami_fuzz_fail.h"
#include "hcudp/hami/handshake.h"
#include "hcudp/hami/node_lock.h"

namespace hami = hcudp::hami;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view value(reinterpret_cast<const char*>(data), size);
  (void)hami::ParseHandshake(value);
  auto lock = hami::ParseNodeLock(value);
  if (!lock.ok()) return 0;
  if (!hami::NodeLockHeldBy(*lock, lock->pod_namespace, lock->pod_name))
    HamiFuzzFail(value, "hami_node_lock:1");
  if (hami::NodeLockHeldBy(*lock, lock->pod_namespace, lock->pod_name + "x"))
    HamiFuzzFail(value, "hami_node_lock:2");
  auto formatted = hami::FormatNodeLock(lock->time, lock->pod_namespace, lock->pod_name);
  if (!formatted.ok()) HamiFuzzFail(value, "hami_node_lock:3");
  auto again = hami::ParseNodeLock(*formatted);
  if (!again.ok() || again->time != lock->time) HamiFuzzFail(value, "hami_node_lock:4");
  return 0;
}
