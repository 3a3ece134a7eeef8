// The flags that say how to reach the node (backend, host-root, vendor
// runtime, kubelet sockets, kubeconfig), shared by hcu-dp-daemon and hcuctl so
// both read the same names and environment variables (DESIGN.md §3, §7): the
// flag -> hcudp::Options mapping, which lives with the frontends.
#ifndef HCUDP_CLI_OPTION_FLAGS_H_
#define HCUDP_CLI_OPTION_FLAGS_H_

#include <string>

#include "hcudp/options.h"
#include "hcudp/status.h"
#include "hcudp_cli/flags.h"

namespace hcudp {

// Registers --backend, --sim-node, --host-root, --hyhal-path,
// --device-plugin-path, --pod-resources-socket and --kubeconfig (with their
// environment variables) writing into `*options`, which must outlive `flags`.
void AddNodeAccessFlags(FlagSet& flags, Options* options);

// --device-split-count writing into `*target`: at least 1, and a value
// above kMaxDeviceSplitCount refused with the reason (CheckDeviceSplitCount,
// hcudp/naming.h). The daemon and `hcuctl names` both register it.
Flag DeviceSplitCountFlag(std::string env, std::string help, int* target);

// Cross-flag checks after parsing: --backend=sim needs --sim-node; host-root
// must be absolute. InvalidArgument names the flag.
Status ValidateNodeAccessOptions(const Options& options);

}  // namespace hcudp

#endif  // HCUDP_CLI_OPTION_FLAGS_H_
