// DraPlugin: the daemon's kubelet side in DRA mode (DESIGN.md §9). It serves
// DRAPlugin v1 and v1beta1 and DRAResourceHealth v1alpha1 and v1 on
// <plugins-dir>/<driver>/dra.sock, delegating to a DraHandler, and keeps a
// registration socket in kubelet's registry directory so that kubelet's
// plugin watcher finds it and registers the driver.
//
// Registration is kubelet's move (it dials the socket it sees appear, or
// every socket it finds when it starts); DraPlugin's job is that the socket
// is always there, answered, and registered. The manager thread reconciles
// on every wake-up, the same signals as the device-plugin path (§4.2):
//   - inotify on the registry directory and the driver's directory: our
//     registration socket removed (the registry directory wiped) -> served
//     anew, which kubelet sees as a new plugin; dra.sock removed -> served
//     anew (a file someone else put there is left alone, logged);
//   - NotifyRegistrationStatus(false) -> logged; dead registration sockets
//     of the driver are removed (a crashed predecessor's holds our
//     endpoint) and the registration socket is re-created after a backoff
//     of 100 ms doubling to 5 s, which makes kubelet try again;
//   - another registration socket of the driver going away -> ours is
//     re-created: kubelet deregisters by driver and endpoint, so the removal
//     of one that named our endpoint (and was refused) drops us too;
//   - a registration socket kubelet has not answered for 5 s (doubling to
//     60 s) is re-created, in case kubelet missed it;
//   - a 5 s stat backstop, in case inotify missed something.
// A kubelet restart needs nothing from us: the new kubelet registers every
// socket it finds; its NotifyRegistrationStatus(true) calls on_registered,
// where the driver republishes the ResourceSlices kubelet deletes at start.
//
// Start-up (crash-safe): paths are checked against the unix-socket limit; a
// dead dra.sock (a crashed predecessor's) is removed, a live one is an
// error; dead registration sockets of the driver are removed; dra.sock is
// served before the registration socket appears.
//
// Threads: Start() runs the manager thread, an inotify poller thread and
// the health broadcaster; Stop() joins them, removes the registration
// socket first (kubelet deregisters), ends every health stream and stops
// serving within a bound. Backoffs and the backstop run on the given Clock.
#ifndef HCU_DP_DAEMON_DRA_DRA_PLUGIN_H_
#define HCU_DP_DAEMON_DRA_DRA_PLUGIN_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "dra/dra_handler.h"
#include "hcudp/clock.h"
#include "hcudp/options.h"
#include "hcudp/status.h"

namespace hcudp::daemon::dra {

struct DraPluginOptions {
  // --dra-driver-name: ResourceSlice.spec.driver, GetInfo's name.
  std::string driver_name = "dra.hygon.com";
  // --kubelet-plugins-dir: dra.sock lives in <plugins_dir>/<driver_name>/.
  std::string plugins_dir = "/var/lib/kubelet/plugins";
  // --kubelet-registry-dir: kubelet's plugin watcher directory.
  std::string registry_dir = "/var/lib/kubelet/plugins_registry";
  // The per-instance tag in the registration socket's name; "" means this
  // process's InstanceId(). Tests running two instances in one process set
  // it.
  std::string instance_id;
  // Called on the manager thread after every NotifyRegistrationStatus(true)
  // (first registration, kubelet restart, re-registration). May block
  // briefly; must not call Stop().
  std::function<void()> on_registered;
};

// The options the command line gives (--dra-driver-name,
// --kubelet-plugins-dir, --kubelet-registry-dir); on_registered and the
// instance tag are the caller's to set.
DraPluginOptions DraPluginOptionsFrom(const Options& options);

class DraPlugin {
 public:
  static constexpr std::chrono::milliseconds kBackoffMin{100};
  static constexpr std::chrono::milliseconds kBackoffMax{5000};
  static constexpr std::chrono::milliseconds kBackstop{5000};
  static constexpr std::chrono::milliseconds kUnansweredMin{5000};
  static constexpr std::chrono::milliseconds kUnansweredMax{60000};

  // `handler` and `clock` must outlive the plugin.
  DraPlugin(DraPluginOptions options, DraHandler& handler, Clock& clock = Clock::Real());
  ~DraPlugin();  // Stop()
  DraPlugin(const DraPlugin&) = delete;
  DraPlugin& operator=(const DraPlugin&) = delete;

  // Serves and starts registering, as above. InvalidArgument naming the
  // flag for an unusable directory, driver name or a socket path over the
  // unix limit; FailedPrecondition when another process serves dra.sock.
  Status Start();
  // Bounded (about 2 s even with a hung handler). Returns false when a
  // handler call was still running and had to be left behind. Idempotent.
  bool Stop();

  // The driver's device health changed: the health streams are sent the
  // new snapshot. Thread-safe, never blocks.
  void NotifyHealthChanged();

  // <plugins_dir>/<driver>/dra.sock: GetInfo's endpoint.
  std::string service_socket_path() const;
  // <registry_dir>/<driver>-<instance>-reg.sock.
  std::string registration_socket_path() const;

  // kubelet's latest verdict on the current registration socket was
  // "registered". Thread-safe.
  bool registered() const;
  // NotifyRegistrationStatus(true) calls so far. Thread-safe.
  int registrations() const;
  // Open NodeWatchResources streams (both versions). Thread-safe.
  int health_streams() const;
  // For tests and diagnostics: dra.sock servers started (1 + re-serves),
  // and reconcile passes of the manager thread begun. Thread-safe.
  int service_serves() const;
  uint64_t reconcile_passes() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hcudp::daemon::dra

#endif  // HCU_DP_DAEMON_DRA_DRA_PLUGIN_H_
