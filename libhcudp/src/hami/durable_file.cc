#include "hami/durable_file.h"

#include <sys/stat.h>

namespace hcudp::internal {

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace hcudp::internal
