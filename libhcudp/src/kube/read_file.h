// Whole-file reads for credentials and certificates.
#ifndef HCUDP_SRC_KUBE_READ_FILE_H_
#define HCUDP_SRC_KUBE_READ_FILE_H_

#include <string>

#include "hcudp/status.h"

namespace hcudp::kube {

// The file's bytes. NotFound when absent, PermissionDenied or Internal on
// other failures; the message names the path, never the content.
StatusOr<std::string> ReadWholeFile(const std::string& path);

}  // namespace hcudp::kube

#endif  // HCUDP_SRC_KUBE_READ_FILE_H_
