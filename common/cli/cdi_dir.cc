#include "hcudp_cli/cdi_dir.h"

#include "hcudp/backend.h"

namespace hcudp {

StatusOr<std::string> CdiSpecHostPath(const std::string& host_root,
                                      const std::string& cdi_spec_dir) {
  if (cdi_spec_dir.empty() || cdi_spec_dir.front() != '/') {
    return InvalidArgumentError("--cdi-spec-dir: \"" + cdi_spec_dir + "\" is not an absolute path");
  }
  std::string root = host_root;
  while (!root.empty() && root.back() == '/') root.pop_back();
  if (root.empty()) return cdi_spec_dir;
  if (cdi_spec_dir.compare(0, root.size(), root) == 0 &&
      (cdi_spec_dir.size() == root.size() || cdi_spec_dir[root.size()] == '/')) {
    std::string rest = cdi_spec_dir.substr(root.size());
    return rest.empty() ? std::string("/") : rest;
  }
  return cdi_spec_dir;
}

StatusOr<std::string> CdiSpecWriteDir(const std::string& host_root,
                                      const std::string& cdi_spec_dir) {
  HCUDP_ASSIGN_OR_RETURN(std::string host_path, CdiSpecHostPath(host_root, cdi_spec_dir));
  return HostPath(host_root, host_path);
}

}  // namespace hcudp
