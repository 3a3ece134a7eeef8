// Small, non-throwing file-system helpers for reading node files under a
// host-root (sysfs, /dev, /etc/vdev, /etc/dmi_mig_config). Whole files are
// read with file_util::ReadFile (hcudp_internal/file_util.h).
#ifndef HCUDP_SRC_BACKEND_NODE_FILES_H_
#define HCUDP_SRC_BACKEND_NODE_FILES_H_

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "hcudp/status.h"

namespace hcudp::node_files {

// The parts joined with '/': JoinPath({dir, name, "gpu_id"}).
std::string JoinPath(std::initializer_list<std::string_view> parts);

// Names of the entries of directory `path`, sorted; NotFound when it does not
// exist, another error when it cannot be read.
StatusOr<std::vector<std::string>> ListDir(const std::string& path);
// True if `path` exists (following symlinks, as sysfs needs).
bool Exists(const std::string& path);
bool IsDirectory(const std::string& path);
bool IsRegularFile(const std::string& path);
// Removes a file; OK when it is already gone.
Status RemoveFile(const std::string& path);

}  // namespace hcudp::node_files

#endif  // HCUDP_SRC_BACKEND_NODE_FILES_H_
