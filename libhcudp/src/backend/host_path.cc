#include "hcudp/backend.h"

namespace hcudp {

Backend::~Backend() = default;

Status Backend::StartEvents(std::function<void(const BackendEvent&)>) {
  return UnimplementedError("this backend reports no card events");
}

std::string HostPath(const std::string& host_root, const std::string& path) {
  std::string_view root = host_root;
  std::string_view rest = path;
  while (!root.empty() && root.back() == '/') root.remove_suffix(1);
  while (!rest.empty() && rest.front() == '/') rest.remove_prefix(1);
  std::string out(root);
  out += '/';
  out += rest;
  return out;
}

}  // namespace hcudp
