// Daemon: wires the backend, node watcher and plugin manager together and
// runs until SIGTERM/SIGINT.
#ifndef HCU_DP_DAEMON_DAEMON_H_
#define HCU_DP_DAEMON_DAEMON_H_

#include "hcudp/options.h"

namespace hcudp::daemon {

// Blocks SIGTERM/SIGINT in the calling thread (so every thread started later
// inherits the mask); call first thing in main, before any thread exists.
void BlockTerminationSignals();

// Serves until SIGTERM/SIGINT (waited for with sigwait on this thread: no
// work in async signal handlers), then stops serving, removes our sockets
// and returns 0. A start-up input error (node file, host root, kubeconfig,
// socket directory) prints one line "hcu-dp-daemon: <flag>: <problem>" and
// returns 2; any other start-up failure returns 1.
int RunDaemon(const Options& options);

}  // namespace hcudp::daemon

#endif  // HCU_DP_DAEMON_DAEMON_H_
