// DraHandler: what the DRA wire layer (DraPlugin) asks of the driver. The
// wire layer speaks kubelet's protocols (registration, DRAPlugin v1 and
// v1beta1, DRAResourceHealth v1alpha1 and v1) and translates every call into
// the plain types below, in the v1 shape; the driver behind it (the claim
// preparer, the checkpoint, the health pipeline) implements this interface.
//
// Thread-safety: every method may be called from several gRPC threads at
// once; an implementation synchronises itself.
#ifndef HCU_DP_DAEMON_DRA_DRA_HANDLER_H_
#define HCU_DP_DAEMON_DRA_DRA_HANDLER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hcudp/dra/agent.h"
#include "hcudp/status.h"

namespace hcudp::daemon::dra {

// A ResourceClaim as kubelet names it in NodePrepareResources.
using Claim = ::hcudp::dra::ClaimRef;

// One prepared device of a claim (DRAPlugin v1 Device) and a claim's
// outcome: the library's answers (hcudp/dra/preparer.h). The wire layer
// sends only the base request name (drops "/<subrequest>"), and the shareID
// on v1 only. A non-empty `error` is for what a retry may fix.
using PreparedDevice = ::hcudp::dra::PreparedDeviceAnswer;
using PrepareResult = ::hcudp::dra::PrepareAnswer;

// The gRPC call being served, for handlers that block (API server calls).
struct CallContext {
  // kubelet's deadline for the call (45 s per call since 1.34).
  std::chrono::system_clock::time_point deadline = std::chrono::system_clock::time_point::max();
  // True once kubelet has gone away or the daemon is stopping.
  std::function<bool()> cancelled = [] { return false; };
};

// One device's health as the DRAResourceHealth stream reports it: the
// library's verdict (hcudp/dra/agent.h).
using DeviceHealthStatus = ::hcudp::dra::DeviceHealthStatus;
using DeviceHealth = ::hcudp::dra::DeviceHealth;

class DraHandler {
 public:
  virtual ~DraHandler() = default;

  // Prepares `claims` (distinct UIDs, never empty ones). Returns one result
  // per claim UID; a claim missing from the map is answered with an error
  // by the wire layer, results for UIDs not asked for are dropped. A non-OK
  // Status fails the whole call (a gRPC error: kubelet retries every claim)
  // and is for what concerns the call as a whole.
  virtual StatusOr<std::map<std::string, PrepareResult>> Prepare(const std::vector<Claim>& claims,
                                                                 const CallContext& call) = 0;

  // Undoes Prepare for `claims`: per claim UID, "" for done (also when there
  // was nothing to undo) or an error for kubelet to retry.
  virtual StatusOr<std::map<std::string, std::string>> Unprepare(const std::vector<Claim>& claims,
                                                                 const CallContext& call) = 0;

  // The health of every prepared device now: the complete list. Must be
  // fast and never block on I/O (it runs whenever the health changes, when
  // a stream opens, and every few seconds to keep kubelet's view fresh).
  // After a change, the driver calls DraPlugin::NotifyHealthChanged().
  virtual std::vector<DeviceHealth> HealthSnapshot() = 0;
};

}  // namespace hcudp::daemon::dra

#endif  // HCU_DP_DAEMON_DRA_DRA_HANDLER_H_
