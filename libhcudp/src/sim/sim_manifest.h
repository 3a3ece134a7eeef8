// RenderManifest: what RenderSimNode wrote under a host-root, kept in
// <host-root>/.hcudp-sim/rendered (one path relative to the host-root per
// line), so that a later render removes only what the sim itself rendered.
// Files an admin or another tool put next to them (a foreign CI conf under
// etc/dmi_mig_config, say) are never removed.
#ifndef HCUDP_SRC_SIM_SIM_MANIFEST_H_
#define HCUDP_SRC_SIM_SIM_MANIFEST_H_

#include <set>
#include <string>

#include "hcudp/status.h"
#include "hcudp_internal/host_fs.h"

namespace hcudp::sim {

class RenderManifest {
 public:
  // Loads the previous render's manifest (none: nothing is ours yet).
  explicit RenderManifest(const internal::HostFs& fs);

  // Records `path` (absolute, under the host-root), written by this render,
  // and its parent directories below the host-root.
  void Add(const std::string& path);
  // Removes what the sim rendered at or below `path`: recorded files, then
  // recorded directories once empty. Anything else stays. OK when absent.
  Status RemoveRendered(const std::string& path);
  // Writes this render's manifest for the next render.
  Status Save();

 private:
  bool Ours(const std::string& relative) const;
  std::string Relative(const std::string& path) const;

  const internal::HostFs fs_;
  const std::string root_;  // fs_.root()
  std::set<std::string> previous_;  // relative paths
  std::set<std::string> current_;   // relative paths
};

}  // namespace hcudp::sim

#endif  // HCUDP_SRC_SIM_SIM_MANIFEST_H_
