#include "sim/sim_manifest.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "hcudp_internal/file_util.h"
#include "sim/sim_files.h"

namespace hcudp::sim {
namespace {

std::string ManifestPath(const internal::HostFs& fs) { return StateDir(fs) + "/rendered"; }

}  // namespace

RenderManifest::RenderManifest(const internal::HostFs& fs) : fs_(fs), root_(fs.root()) {
  StatusOr<std::string> text = file_util::ReadFile(ManifestPath(fs_));
  if (!text.ok()) return;
  std::istringstream lines(*text);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.empty()) previous_.insert(line);
  }
}

std::string RenderManifest::Relative(const std::string& path) const {
  if (path.size() > root_.size() + 1 && path.compare(0, root_.size(), root_) == 0 &&
      path[root_.size()] == '/') {
    return path.substr(root_.size() + 1);
  }
  return "";  // not under the host-root: never ours
}

bool RenderManifest::Ours(const std::string& relative) const {
  return !relative.empty() && (previous_.count(relative) != 0 || current_.count(relative) != 0);
}

void RenderManifest::Add(const std::string& path) {
  std::string rel = Relative(path);
  while (!rel.empty()) {
    current_.insert(rel);
    size_t slash = rel.find_last_of('/');
    rel = slash == std::string::npos ? "" : rel.substr(0, slash);
  }
}

Status RenderManifest::RemoveRendered(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return OkStatus();
  const std::string rel = Relative(path);
  if (!Ours(rel)) return OkStatus();
  if (S_ISDIR(st.st_mode)) {
    for (const std::string& name : ListDir(path)) {
      HCUDP_RETURN_IF_ERROR(RemoveRendered(path + "/" + name));
    }
    // A directory that still holds someone else's file stays.
    if (::rmdir(path.c_str()) != 0 && errno != ENOTEMPTY && errno != EEXIST && errno != ENOENT) {
      return InternalError("cannot remove " + path + ": " + std::strerror(errno));
    }
    return OkStatus();
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return InternalError("cannot remove " + path + ": " + std::strerror(errno));
  }
  return OkStatus();
}

Status RenderManifest::Save() {
  std::string text;
  for (const std::string& rel : current_) text += rel + "\n";
  return WriteFileIfChanged(ManifestPath(fs_), text);
}

}  // namespace hcudp::sim
