// Whole-file reads for credentials and certificates.
#ifndef HCUDP_SRC_KUBE_READ_FILE_H_
#define HCUDP_SRC_KUBE_READ_FILE_H_

#include <cstddef>
#include <string>

#include "hcudp/status.h"

namespace hcudp::kube {

// The file's bytes. NotFound when absent, PermissionDenied or Internal on
// other failures, InvalidArgument when longer than `max_bytes` (credentials
// and certificates are small; this also stops a path like /dev/zero). The
// message names the path, never the content.
StatusOr<std::string> ReadWholeFile(const std::string& path, size_t max_bytes = 1 << 20);

}  // namespace hcudp::kube

#endif  // HCUDP_SRC_KUBE_READ_FILE_H_
