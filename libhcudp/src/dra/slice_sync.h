// One sync of the node's pool against the API server (slice_publisher.h
// describes the protocol). No state of its own: what it learns across syncs
// (the generation, dropped fields) is in SyncMemory, owned by the caller.
#ifndef HCUDP_DRA_SLICE_SYNC_H_
#define HCUDP_DRA_SLICE_SYNC_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hcudp/device.h"
#include "hcudp/dra/slices.h"
#include "hcudp/kube_client.h"
#include "hcudp/status.h"

namespace hcudp::dra {

struct SyncMemory {
  int64_t last_generation = 0;  // highest generation this process wrote or saw
  bool taints_dropped = false;
  bool consumable_capacity_dropped = false;
  // The API server's gitVersion when a field was found dropped: a different
  // one (an upgrade) is checked again (the latches cleared).
  std::string server_version;
};

struct SyncResult {
  int64_t generation = 0;
  int slices = 0;
  int devices = 0;
  int writes = 0;  // 0: the pool was already up to date
  // What the writes left on the server: slice name -> the write's answer
  // (the stored object), "" for a deleted slice. Also on a failed sync, for
  // the writes that were made.
  std::vector<std::pair<std::string, std::string>> written;
};

// LIST (or take `snapshot`, the watched copy of the slices as a list, for
// the first round), compare, write a new generation when different; re-plans
// and republishes once more when a write's answer shows dropped taints;
// re-lists after a conflict (up to 4 rounds). A stored slice whose Node
// ownerReference differs from params.node_uid is a difference. `call` bounds
// every API call. `result` gets what was written even when the sync fails.
Status SyncPool(KubeClient& client, const SliceOffer& inventory, const SliceParams& params,
                SyncMemory& memory, const CallOptions& call,
                const std::optional<std::string>& snapshot, SyncResult& result);

}  // namespace hcudp::dra

#endif  // HCUDP_DRA_SLICE_SYNC_H_
