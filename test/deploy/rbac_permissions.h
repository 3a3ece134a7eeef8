// The permission kube-apiserver's authorizer checks for a request the fake
// API server logged, and the grants of a manifests/rbac-verbs*.txt file, in
// one naming: <plural>[/<subresource>][.<group>] (core group: no group) and
// the verb. Shared by the DRA RBAC tests.
#ifndef HCUDP_TEST_DEPLOY_RBAC_PERMISSIONS_H_
#define HCUDP_TEST_DEPLOY_RBAC_PERMISSIONS_H_

#include <set>
#include <string>
#include <utility>

#include "fake_apiserver/fake_apiserver_process.h"

namespace hcudp::testing {

using Permission = std::pair<std::string, std::string>;  // resource[.group], verb

// As the authorizer's request info: group, resource, subresource, name, verb
// (GET of a name: get; of a collection: list, or watch; DELETE of a
// collection: deletecollection). Unknown paths come back as "?<path>".
Permission PermissionOf(const FakeRequest& r);

// The "resource verb" lines of a source-tree file (relative path), '#'
// comments ignored.
std::set<Permission> GrantsOf(const std::string& relative_path);

}  // namespace hcudp::testing

#endif  // HCUDP_TEST_DEPLOY_RBAC_PERMISSIONS_H_
