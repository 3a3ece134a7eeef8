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

#include "hcudp/status.h"

namespace hcudp::daemon::dra {

// A ResourceClaim as kubelet names it in NodePrepareResources.
struct Claim {
  std::string namespace_name;
  std::string uid;
  std::string name;
};

// One prepared device of a claim (DRAPlugin v1 Device).
struct PreparedDevice {
  // Request names of the allocation results this device serves. The wire
  // layer sends only the base name (drops "/<subrequest>"), as kubelet
  // matches container requests by it.
  std::vector<std::string> request_names;
  std::string pool_name;
  std::string device_name;
  // Fully qualified CDI device names, e.g. "dra.hygon.com/hcu=<name>".
  std::vector<std::string> cdi_device_ids;
  // The allocation result's shareID (consumable capacity). Sent on v1 only:
  // v1beta1 has no such field.
  std::optional<std::string> share_id;

  bool operator==(const PreparedDevice& o) const {
    return request_names == o.request_names && pool_name == o.pool_name &&
           device_name == o.device_name && cdi_device_ids == o.cdi_device_ids &&
           share_id == o.share_id;
  }
};

// The outcome for one claim. A non-empty `error` is for what a retry may fix
// (kubelet retries the claim later and ignores `devices`).
struct PrepareResult {
  std::vector<PreparedDevice> devices;
  std::string error;
};

// The gRPC call being served, for handlers that block (API server calls).
struct CallContext {
  // kubelet's deadline for the call (45 s per call since 1.34).
  std::chrono::system_clock::time_point deadline = std::chrono::system_clock::time_point::max();
  // True once kubelet has gone away or the daemon is stopping.
  std::function<bool()> cancelled = [] { return false; };
};

enum class DeviceHealthStatus { kUnknown, kHealthy, kUnhealthy };

// One device's health as the DRAResourceHealth stream reports it.
struct DeviceHealth {
  std::string pool_name;
  std::string device_name;
  DeviceHealthStatus health = DeviceHealthStatus::kUnknown;
  // When the driver last checked the device, Unix seconds (0: unknown).
  int64_t last_updated_unix_seconds = 0;
  // Why (shown to users; the wire layer cuts it at 1024 characters).
  std::string message;

  bool operator==(const DeviceHealth& o) const {
    return pool_name == o.pool_name && device_name == o.device_name && health == o.health &&
           last_updated_unix_seconds == o.last_updated_unix_seconds && message == o.message;
  }
};

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
