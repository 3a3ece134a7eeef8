#include "kube/read_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>

namespace hcudp::kube {

StatusOr<std::string> ReadWholeFile(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    int err = errno;
    std::string message = path + ": " + std::strerror(err);
    if (err == ENOENT) return NotFoundError(message);
    if (err == EACCES) return PermissionDeniedError(message);
    return InternalError(message);
  }
  std::string out;
  char buf[8192];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    out.append(buf, static_cast<size_t>(in.gcount()));
    if (out.size() > max_bytes) {
      return InvalidArgumentError(path + ": larger than " + std::to_string(max_bytes) + " bytes");
    }
  }
  if (in.bad()) return InternalError(path + ": read failed");
  return out;
}

}  // namespace hcudp::kube
