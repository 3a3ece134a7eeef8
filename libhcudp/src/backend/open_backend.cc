// OpenBackend: Options -> the backend they ask for (DESIGN.md §3, §6).
#include "hcudp/backend.h"
#include "hcudp/dlopen_vendor_lib.h"
#include "hcudp/sim_node.h"

namespace hcudp {

StatusOr<std::unique_ptr<Backend>> OpenBackend(const Options& options) {
  return OpenBackend(options, nullptr);
}

StatusOr<std::unique_ptr<Backend>> OpenBackend(const Options& options, Clock* clock) {
  HostBackendOptions backend_options;
  backend_options.clock = clock;
  backend_options.host_root = EffectiveHostRoot(options);
  backend_options.hyhal_path = options.hyhal_path;
  std::unique_ptr<VendorLib> vendor;
  if (options.backend == BackendKind::kSim) {
    if (options.sim_node_path.empty()) {
      return InvalidArgumentError("--sim-node is required with --backend=sim");
    }
    StatusOr<SimNode> node = LoadSimNode(options.sim_node_path);
    if (!node.ok()) return node.status().WithContext("--sim-node");
    auto sim = NewSimVendorLib(options.sim_node_path, backend_options.host_root);
    if (!sim.ok()) return sim.status().WithContext("--sim-node");
    vendor = std::move(*sim);
    Status init = vendor->Init();
    if (!init.ok()) return init.WithContext("--sim-node");
  } else {
    DlopenVendorLibOptions dl;
    dl.hyhal_path = options.hyhal_path;
    dl.host_root = backend_options.host_root;
    auto lib = NewDlopenVendorLib(dl);
    if (!lib.ok()) return lib.status().WithContext("--hyhal-path " + options.hyhal_path);
    vendor = std::move(*lib);
    Status init = vendor->Init();
    if (!init.ok()) return init.WithContext("--backend=host");
  }
  return NewHostBackend(std::move(backend_options), std::move(vendor));
}

}  // namespace hcudp
