#include "rbac_permissions.h"

#include <cstddef>
#include <sstream>
#include <vector>

#include "testing/testutil.h"

namespace hcudp::testing {
namespace {

std::vector<std::string> Split(const std::string& path) {
  std::vector<std::string> parts;
  std::istringstream in(path);
  for (std::string p; std::getline(in, p, '/');) {
    if (!p.empty()) parts.push_back(p);
  }
  return parts;
}

}  // namespace

Permission PermissionOf(const FakeRequest& r) {
  std::vector<std::string> p = Split(r.path);
  std::string group;
  size_t at = 0;
  if (p.size() >= 2 && p[0] == "api") {
    at = 2;  // /api/v1/...
  } else if (p.size() >= 3 && p[0] == "apis") {
    group = p[1];
    at = 3;  // /apis/<group>/<version>/...
  } else {
    return {"?" + r.path, r.method};
  }
  std::vector<std::string> rest(p.begin() + static_cast<std::ptrdiff_t>(at), p.end());
  if (rest.size() >= 3 && rest[0] == "namespaces") rest.erase(rest.begin(), rest.begin() + 2);
  if (rest.empty()) return {"?" + r.path, r.method};
  std::string resource = rest[0];
  const bool named = rest.size() >= 2;
  if (rest.size() >= 3) resource += "/" + rest[2];
  if (!group.empty()) resource += "." + group;
  std::string verb = "?" + r.method;
  if (r.method == "GET") verb = named ? "get" : (r.watch ? "watch" : "list");
  if (r.method == "POST") verb = "create";
  if (r.method == "PUT") verb = "update";
  if (r.method == "PATCH") verb = "patch";
  if (r.method == "DELETE") verb = named ? "delete" : "deletecollection";
  return {resource, verb};
}

std::set<Permission> GrantsOf(const std::string& relative_path) {
  std::set<Permission> out;
  std::istringstream in(ReadFile(SourcePath(relative_path)));
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line.substr(0, line.find('#')));
    std::string resource, verb;
    if (words >> resource >> verb) out.insert({resource, verb});
  }
  return out;
}

}  // namespace hcudp::testing
