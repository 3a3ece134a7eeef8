#include "kube/api_error.h"

#include <rapidjson/document.h>

#include "hcudp_internal/json_depth.h"

namespace hcudp::kube {

bool IsRetryableHttpStatus(long http_status) {  // NOLINT(runtime/int)
  return http_status == 429 || http_status == 500 || http_status == 502 || http_status == 503 ||
         http_status == 504;
}

bool JsonNestingWithin(std::string_view json, int max_depth) {
  return json_depth::NestingWithin(json, max_depth);
}

Status ApiError(long http_status, std::string_view body, const std::string& what) {  // NOLINT
  std::string reason;
  std::string message;
  rapidjson::Document doc;
  const bool parsed =
      JsonNestingWithin(body) && !doc.Parse(body.data(), body.size()).HasParseError();
  if (parsed && doc.IsObject()) {
    auto m = doc.FindMember("message");
    if (m != doc.MemberEnd() && m->value.IsString()) message = m->value.GetString();
    auto r = doc.FindMember("reason");
    if (r != doc.MemberEnd() && r->value.IsString()) reason = r->value.GetString();
  }
  if (message.empty()) {
    // Not a Status object (a proxy's error page?): keep a short excerpt.
    message = std::string(body.substr(0, 200));
  }
  std::string text = what + ": HTTP " + std::to_string(http_status) +
                     (reason.empty() ? "" : " " + reason) + ": " + message;
  StatusCode code;
  switch (http_status) {
    case 400:
    case 422:
      code = StatusCode::kInvalidArgument;
      break;
    case 401:
      code = StatusCode::kUnauthenticated;
      break;
    case 403:
      code = StatusCode::kPermissionDenied;
      break;
    case 404:
      code = StatusCode::kNotFound;
      break;
    case 409:
      code = reason == "AlreadyExists" ? StatusCode::kAlreadyExists : StatusCode::kAborted;
      break;
    case 410:
      code = StatusCode::kOutOfRange;
      break;
    case 429:
      code = StatusCode::kResourceExhausted;
      break;
    case 500:
      code = StatusCode::kInternal;
      break;
    case 502:
    case 503:
      code = StatusCode::kUnavailable;
      break;
    case 504:
      code = StatusCode::kDeadlineExceeded;
      break;
    default:
      code = http_status >= 500 ? StatusCode::kUnavailable : StatusCode::kUnknown;
  }
  return Status(code, std::move(text));
}

}  // namespace hcudp::kube
