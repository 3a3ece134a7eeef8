#include "kube/read_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace hcudp::kube {

StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    int err = errno;
    std::string message = path + ": " + std::strerror(err);
    if (err == ENOENT) return NotFoundError(message);
    if (err == EACCES) return PermissionDeniedError(message);
    return InternalError(message);
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return InternalError(path + ": read failed");
  return ss.str();
}

}  // namespace hcudp::kube
