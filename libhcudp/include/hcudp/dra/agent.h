// DraAgent: DRA mode (DESIGN.md §9) as a library object, without gRPC. It
// owns the claim Preparer (over a VhcuManager), the SlicePublisher, the tick
// thread and the health verdict of prepared devices; a frontend (the
// daemon's kubelet sockets, an embedder, a test) only forwards kubelet's
// calls and reads Health().
//
//   auto node = hcudp::Node::Open(node_options);   // the one door (hcudp/node.h)
//   auto agent = DraAgent::New(**node, client, options);
//   (*node)->state().set_listener([&] { (*agent)->OnNodeChanged(); });
//   (*node)->StartWatching();
//   (*agent)->Recover();          // before serving: nothing is published yet
//   (*agent)->Start();            // publishes, then ticks
//   (*agent)->Prepare(ref, deadline); (*agent)->Unprepare(ref);
//
// It sits on the Node: the Node's snapshot is what it judges and publishes,
// the Node's ledger (Node::ReadHoldings) what it offers against, the Node's
// backend (its one CardKeeper) what its preparer and vHCU manager act on.
// It runs no watcher of its own.
//
// Ordering (issue 28, reproduction 4): the slices are first published once
// Recover() has filled the prepared claims, and recomputed after Recover,
// after every Prepare and Unprepare, and on every node change.
//
// What the slices offer is the one offer rule (hcudp/offer.h, OfferMode::kDra)
// over the ownership ledger (hcudp/ledger.h), read on every refresh
// (OfferSlices, slices.h): a card that carries pre-split vHCUs or MIG
// instances, held or not, is never offered whole; a device a claim or a pod
// holds is never offered; a card carrying only claims' dynamic vHCUs stays
// offered as a shared device.
//
// Lifecycles belong to kubelet and the API server: a claim is released only
// by Unprepare or once the API server says it is gone (404 or another UID).
// A device that vanished makes the claim's devices Unhealthy in Health(); it
// is never unprepared, destroyed or its CDI spec deleted for that.
//
// Thread-safety: every method may be called from any thread. OnNodeChanged
// must not block (it runs on the node watcher's thread): it writes the
// whole-card CDI spec and wakes the agent's refresh thread. No lock is held
// across I/O or a call out.
#ifndef HCUDP_DRA_AGENT_H_
#define HCUDP_DRA_AGENT_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hcudp/clock.h"
#include "hcudp/device.h"
#include "hcudp/dra/checkpoint.h"
#include "hcudp/dra/preparer.h"
#include "hcudp/dra/slice_publisher.h"
#include "hcudp/export.h"
#include "hcudp/kube_client.h"
#include "hcudp/node.h"
#include "hcudp/node_state.h"
#include "hcudp/status.h"
#include "hcudp/vhcu_manager.h"

namespace hcudp::dra {

enum class DeviceHealthStatus { kUnknown, kHealthy, kUnhealthy };

// One prepared device's health, as kubelet's DRAResourceHealth stream says it.
struct DeviceHealth {
  std::string pool_name;
  std::string device_name;
  DeviceHealthStatus health = DeviceHealthStatus::kUnknown;
  // When it was last checked, Unix seconds (0: unknown; Health() sets it).
  int64_t last_updated_unix_seconds = 0;
  std::string message;  // why, for users

  bool operator==(const DeviceHealth& o) const {
    return pool_name == o.pool_name && device_name == o.device_name && health == o.health &&
           last_updated_unix_seconds == o.last_updated_unix_seconds && message == o.message;
  }
};

// THE verdict on "is this prepared device still there, and healthy", for
// the health stream, Recover and the tick (one fold, issue 28 item 5):
//   Unknown    its card, vHCU or MIG instance cannot be read now;
//   Unhealthy  its card, vHCU or MIG instance is gone (a vHCU id naming
//              another card or, for one we made, another size is gone), or
//              its card is not Healthy;
//   Healthy    otherwise.
// The message names what is unknown, gone or unhealthy.
HCUDP_EXPORT DeviceHealth PreparedDeviceHealth(const PreparedDevice& device,
                                               const NodeInventory& inventory);

struct DraAgentOptions {
  // The preparer's options; on_change is the agent's (it is overwritten).
  // host_root is set to the Node's backend's. cdi_dir is also where
  // the Node's ledger reads Hygon's state: give NodeOptions the same
  // --cdi-spec-dir.
  PreparerOptions preparer;
  // The publisher's; params.node_uid empty: the agent GETs the Node (bounded
  // by node_get_timeout) and publishes without an owner when that fails.
  SlicePublisherOptions slices;
  // host_root is the preparer's.
  VhcuManagerOptions vhcus;
  // Preparer::Tick and VhcuManager::Tick (retries, claims to re-check).
  std::chrono::milliseconds tick_period{2000};
  // Bound of one claim GET (kubelet's own call timeout is 45 s).
  std::chrono::milliseconds claim_get_timeout{10000};
  std::chrono::milliseconds node_get_timeout{3000};
  // The claim GET. Default (empty): KubeClaimFetcher over the client,
  // bounded by claim_get_timeout and ended by Cancel(). Tests pass a double.
  ClaimFetcher fetch;
  // Ticks and the preparer's re-check delays. Not owned; default: the Node's.
  Clock* clock = nullptr;
  // Called (refresh thread, no lock held) when Health() changed.
  std::function<void()> on_health_changed;
  // Called (refresh thread) with each pool computed for the slices: the
  // device names and whether each is healthy (metrics).
  std::function<void(const std::vector<std::pair<std::string, bool>>&)> on_pool;
};

class HCUDP_EXPORT DraAgent {
 public:
  // Builds every part; no thread runs yet. `node` and `client` are not
  // owned and must outlive the agent. InvalidArgument for bad publisher
  // options (node or driver name).
  static StatusOr<std::unique_ptr<DraAgent>> New(Node& node, KubeClient& client,
                                                 DraAgentOptions options);
  ~DraAgent();  // Stop()
  DraAgent(const DraAgent&) = delete;
  DraAgent& operator=(const DraAgent&) = delete;

  // Before Start: Preparer::Recover (may wait for the API server; Cancel()
  // ends its GETs).
  StatusOr<RecoverResult> Recover();
  // After Recover: publishes the first pool and health, then ticks.
  void Start();
  // Ends API calls in flight (Recover's GETs included). Idempotent.
  void Cancel();
  // Cancel, then stops and joins the threads and the publisher. Idempotent.
  void Stop();

  // The node changed (the Node's NodeState listener).
  void OnNodeChanged();
  // kubelet's calls, one claim each (Preparer::Prepare / Unprepare); the
  // pool and health are recomputed after each.
  StatusOr<PrepareAnswer> Prepare(const ClaimRef& claim,
                                  std::optional<Clock::TimePoint> deadline = std::nullopt);
  Status Unprepare(const ClaimRef& claim);
  // kubelet restarted (it deletes the node's slices): publish again.
  void RequestResync();

  // Every prepared device's health, by pool/device name, stamped now.
  std::vector<DeviceHealth> Health() const;
  // The prepared claims (checkpoint state "prepared").
  std::vector<PreparedClaim> Prepared() const;
  PublisherState slices() const;
  // The latest pool computed for the slices (empty plan before Start).
  PoolPlan Pool() const;

  class Impl;

 private:
  explicit DraAgent(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace hcudp::dra

#endif  // HCUDP_DRA_AGENT_H_
