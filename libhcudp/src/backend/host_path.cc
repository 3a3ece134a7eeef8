#include "hcudp/backend.h"
#include "hcudp_internal/host_fs.h"

namespace hcudp {

Backend::~Backend() = default;

Status Backend::StartEvents(std::function<void(const BackendEvent&)>) {
  return UnimplementedError("this backend reports no card events");
}

// The public form of the one join (hcudp_internal/host_fs.h): the root as
// given, relative or not, for callers that hold a root string.
std::string HostPath(const std::string& host_root, const std::string& path) {
  return internal::JoinUnder(host_root, path);
}

}  // namespace hcudp
