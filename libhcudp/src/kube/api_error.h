// Kubernetes API error responses (a metav1.Status body) → hcudp::Status.
#ifndef HCUDP_SRC_KUBE_API_ERROR_H_
#define HCUDP_SRC_KUBE_API_ERROR_H_

#include <string>
#include <string_view>

#include "hcudp/status.h"

namespace hcudp::kube {

// Maps an HTTP error status with its body (ideally a Status object, whose
// message and reason are used) to a Status; see kube_client.h for the table.
// `what` ("GET /api/v1/nodes/n1") prefixes the message.
Status ApiError(long http_status, std::string_view body, const std::string& what);  // NOLINT

// How deep the server's JSON may nest arrays and objects: far beyond any
// Kubernetes object, far below what RapidJSON's recursive parser can take
// before it overflows the stack (a million levels is 1 MB of text).
inline constexpr int kMaxJsonDepth = 512;

// Whether `json` nests arrays and objects at most `max_depth` deep (text in
// strings does not count). Server text is checked with it before parsing.
bool JsonNestingWithin(std::string_view json, int max_depth = kMaxJsonDepth);

// Whether a failed attempt with this HTTP status may be repeated.
bool IsRetryableHttpStatus(long http_status);  // NOLINT(runtime/int)

}  // namespace hcudp::kube

#endif  // HCUDP_SRC_KUBE_API_ERROR_H_
