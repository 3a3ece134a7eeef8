// Backend: the node as the plugin sees it. Discovery, health and vHCU
// lifecycle go through this interface; HostBackend is the one production
// implementation (node files under host-root + a VendorLib), and the
// simulated node is HostBackend + SimVendorLib, so the same code runs
// everywhere.
//
// Thread-safety: all methods may be called concurrently.
#ifndef HCUDP_BACKEND_H_
#define HCUDP_BACKEND_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hcudp/clock.h"
#include "hcudp/device.h"
#include "hcudp/export.h"
#include "hcudp/options.h"
#include "hcudp/status.h"
#include "hcudp/vendor_lib.h"

namespace hcudp {

// An event the vendor runtime reported about a card (RSMI event
// notification: VM fault, thermal throttle, GPU reset). It says "look now",
// not what the health is: the health source still gives the verdict.
struct BackendEvent {
  int card = -1;  // card index (RSMI); -1 when unknown
  // "VM_FAULT", "THERMAL_THROTTLE", "GPU_PRE_RESET", "GPU_POST_RESET", ...;
  // "EVENTS_RESUMED" (card -1) after failed waits: events may have been lost.
  std::string kind;
  std::string message;
};

class HCUDP_EXPORT Backend {
 public:
  virtual ~Backend();

  // Everything on the node now: cards (with DRI nodes), vHCUs, MIG instances,
  // links, /dev/kfd and /dev/mkfd presence. Cards keep their last known health
  // from QueryHealth()-driven updates only if the caller merges them; Discover
  // itself reports the health source's current verdict when it has one.
  //
  // Internal to the library: callers outside it reach the node through
  // hcudp::Node (hcudp/node.h), whose Look() adds the watcher's memory.
  // A card that discoveries stop finding stays unknown until its absence is
  // confirmed on time (HostBackend: 3 looks over at least 60 s).
  virtual StatusOr<NodeInventory> Discover() = 0;

  // Discover() for a caller asking again about unknown cards (a DRA
  // re-check while a card is unknown): the same answer, but a card it
  // misses is not counted as one more look towards confirming it gone.
  // Default: Discover().
  virtual StatusOr<NodeInventory> Recheck() { return Discover(); }

  // Per-card health verdicts. An error means the query failed: keep the
  // previous health, never mark devices unhealthy because of it.
  virtual StatusOr<std::vector<CardHealthReport>> QueryHealth() = 0;

  // Creates a vHCU on `card` and returns the one the driver made for this
  // call, as discovered afterwards. HostBackend runs create and destroy under
  // the host-wide vHCU lock (hcudp/vhcu_lock.h); Unavailable, naming the
  // holder, when it stays busy.
  virtual StatusOr<Vhcu> CreateVhcu(int card, int compute_units, uint64_t memory_mib) = 0;
  // Stops and destroys vHCU `id`. NotFound if it does not exist; Unavailable
  // when the device is busy (retry later).
  virtual Status DestroyVhcu(int id) = 0;

  // The directory node files are read and written under ("/" on a node).
  virtual const std::string& host_root() const = 0;

  // Absolute paths (files or directories) whose change means the node may
  // have changed; the daemon watches them and re-discovers / re-checks.
  virtual std::vector<std::string> WatchPaths() const = 0;

  // Not OK (the reason, with its fix) once the backend can no longer work
  // until the process restarts: libhydmi lost hymgr / /dev/mkfd for good.
  // Cheap, makes no vendor call. The daemon exits after a grace period.
  virtual Status RestartRequired() const { return OkStatus(); }

  // Starts delivering the runtime's card events to `on_event`, called on a
  // thread of the backend's own (it must not block). Unimplemented when the
  // runtime has no event notification (the caller then relies on polling).
  // Default: Unimplemented.
  virtual Status StartEvents(std::function<void(const BackendEvent&)> on_event);
  // Stops that thread; returns within kEventStopBound. Idempotent.
  virtual void StopEvents() {}
  static constexpr std::chrono::milliseconds kEventStopBound{500};
};

struct HostBackendOptions {
  // Prefix under which node files are read. Default "/".
  std::string host_root = "/";
  // Vendor runtime directory (hy-smi under bin/). Default "/opt/hyhal".
  std::string hyhal_path = "/opt/hyhal";
  // Longest wait for the host-wide vHCU lock in CreateVhcu/DestroyVhcu
  // (immediate when the calling thread already holds it). Default 10 s.
  std::chrono::milliseconds vhcu_lock_timeout{10000};
  // The time a missed card is confirmed gone on (not owned; must outlive
  // the backend). Default: null, Clock::Real().
  Clock* clock = nullptr;
};

// Takes ownership of `vendor`, which must already be Init()-ed.
HCUDP_EXPORT std::unique_ptr<Backend> NewHostBackend(HostBackendOptions options,
                                                     std::unique_ptr<VendorLib> vendor);

// Builds the backend `options` asks for: host (DlopenVendorLib from
// hyhal_path/lib) or sim (SimVendorLib over options.sim_node_path, rendered
// under EffectiveHostRoot(options)). Errors name the flag at fault.
HCUDP_EXPORT StatusOr<std::unique_ptr<Backend>> OpenBackend(const Options& options);
// The same, with the clock missed cards are confirmed gone on (not owned;
// must outlive the backend; null: Clock::Real()).
HCUDP_EXPORT StatusOr<std::unique_ptr<Backend>> OpenBackend(const Options& options, Clock* clock);

// host_root + path, with exactly one '/' between them.
HCUDP_EXPORT std::string HostPath(const std::string& host_root, const std::string& path);

}  // namespace hcudp

#endif  // HCUDP_BACKEND_H_
