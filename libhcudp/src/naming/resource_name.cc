// Extended-resource name validation, as kubelet's Register applies it
// (v1helper.IsExtendedResourceName; kubelet-contract.md §2).
#include "hcudp/naming.h"

namespace hcudp {
namespace {

constexpr size_t kMaxSubdomainLength = 253;
constexpr size_t kMaxNameLength = 63;

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool IsAlnum(char c) { return IsLowerAlnum(c) || (c >= 'A' && c <= 'Z'); }

// One DNS-1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool IsDns1123Label(std::string_view label) {
  if (label.empty() || !IsLowerAlnum(label.front()) || !IsLowerAlnum(label.back())) return false;
  for (char c : label) {
    if (!IsLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

bool IsDns1123Subdomain(std::string_view s) {
  if (s.empty() || s.size() > kMaxSubdomainLength) return false;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    if (!IsDns1123Label(s.substr(start, dot - start))) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

// The name part of a qualified name: [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?, <= 63.
bool IsQualifiedNamePart(std::string_view s) {
  if (s.empty() || s.size() > kMaxNameLength) return false;
  if (!IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

Status Invalid(std::string_view name, std::string_view why) {
  return InvalidArgumentError("the ResourceName \"" + std::string(name) +
                              "\" is invalid: " + std::string(why));
}

}  // namespace

Status ValidateResourceName(std::string_view full_name) {
  size_t slash = full_name.find('/');
  if (slash == std::string_view::npos) {
    return Invalid(full_name, "an extended resource name needs a domain prefix (\"domain/name\")");
  }
  if (full_name.find("kubernetes.io/") != std::string_view::npos) {
    return Invalid(full_name, "the kubernetes.io/ namespace is reserved for native resources");
  }
  if (full_name.substr(0, 9) == "requests.") {
    return Invalid(full_name, "it must not start with \"requests.\"");
  }
  std::string_view name = full_name.substr(slash + 1);
  if (name.find('/') != std::string_view::npos) {
    return Invalid(full_name, "it must contain exactly one '/'");
  }
  // kubelet checks "requests." + name, so the prefix gets 9 characters fewer.
  std::string prefix = "requests." + std::string(full_name.substr(0, slash));
  if (slash == 0 || !IsDns1123Subdomain(prefix)) {
    return Invalid(full_name, "the prefix must be a DNS-1123 subdomain");
  }
  if (!IsQualifiedNamePart(name)) {
    return Invalid(full_name,
                   "the name must be 1-63 characters of [A-Za-z0-9-_.], starting and ending "
                   "with an alphanumeric character");
  }
  return OkStatus();
}

}  // namespace hcudp
