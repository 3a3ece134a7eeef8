// One sync of the node's pool against the API server (slice_publisher.h
// describes the protocol). No state of its own: what it learns across syncs
// (the generation, dropped fields) is in SyncMemory, owned by the caller.
#ifndef HCUDP_DRA_SLICE_SYNC_H_
#define HCUDP_DRA_SLICE_SYNC_H_

#include <cstdint>

#include "hcudp/device.h"
#include "hcudp/dra/slices.h"
#include "hcudp/kube_client.h"
#include "hcudp/status.h"

namespace hcudp::dra {

struct SyncMemory {
  int64_t last_generation = 0;  // highest generation this process wrote or saw
  bool taints_dropped = false;
  bool consumable_capacity_dropped = false;
};

struct SyncResult {
  int64_t generation = 0;
  int slices = 0;
  int devices = 0;
  int writes = 0;  // 0: the pool was already up to date
};

// LIST, compare, write a new generation when different; re-plans and
// republishes once more when a write's answer shows dropped taints; re-lists
// after a conflict (up to 4 rounds). `call` bounds every API call.
StatusOr<SyncResult> SyncPool(KubeClient& client, const NodeInventory& inventory,
                              const SliceParams& params, SyncMemory& memory,
                              const CallOptions& call);

}  // namespace hcudp::dra

#endif  // HCUDP_DRA_SLICE_SYNC_H_
