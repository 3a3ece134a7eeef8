// Status and StatusOr<T>: how every libhcudp function reports failure.
//
// The library never throws across its API. Codes are gRPC's canonical codes
// (same numbers), so the daemon maps a Status to grpc::Status one to one:
//   kInvalidArgument    the caller's input is wrong whatever the node state
//                       (bad flag, malformed YAML, unknown device ID);
//   kNotFound           a named thing does not exist (vHCU id, file);
//   kFailedPrecondition the node is not in a state that allows the call
//                       (card full, MIG mode on, driver not live);
//   kResourceExhausted  a capacity limit (no free vHCU slot, CU or memory);
//   kUnavailable        transient; retrying later may succeed;
//   kInternal           a broken invariant or an unexpected library error.
#ifndef HCUDP_STATUS_H_
#define HCUDP_STATUS_H_

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "hcudp/export.h"

namespace hcudp {

enum class StatusCode : int {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};

// "OK", "INVALID_ARGUMENT", ... as gRPC spells them.
HCUDP_EXPORT std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] HCUDP_EXPORT Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message);

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "INVALID_ARGUMENT: field cards[0].bdf: ..." or "OK".
  std::string ToString() const;

  // Returns a copy whose message is "<context>: <message>"; OK stays OK.
  Status WithContext(std::string_view context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status OkStatus() { return Status(); }
HCUDP_EXPORT Status InvalidArgumentError(std::string message);
HCUDP_EXPORT Status NotFoundError(std::string message);
HCUDP_EXPORT Status AlreadyExistsError(std::string message);
HCUDP_EXPORT Status FailedPreconditionError(std::string message);
HCUDP_EXPORT Status ResourceExhaustedError(std::string message);
HCUDP_EXPORT Status UnavailableError(std::string message);
HCUDP_EXPORT Status InternalError(std::string message);
HCUDP_EXPORT Status UnimplementedError(std::string message);
HCUDP_EXPORT Status PermissionDeniedError(std::string message);
HCUDP_EXPORT Status DeadlineExceededError(std::string message);
HCUDP_EXPORT Status AbortedError(std::string message);

// Bad input named by the user (a flag's value, a file it points at, which
// the code reports as InvalidArgument): both programs exit 2 for it at
// start-up, as for a bad flag. A missing vendor runtime (NotFound) is not.
inline bool IsInputError(const Status& status) {
  return status.code() == StatusCode::kInvalidArgument;
}

// Either a T or a non-OK Status; never holds an OK status without a value.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(const T& value) : value_(value) {}              // NOLINT
  StatusOr(T&& value) : value_(std::move(value)) {}        // NOLINT
  StatusOr(Status status) : status_(std::move(status)) {   // NOLINT
    if (status_.ok()) status_ = Status(StatusCode::kInternal, "StatusOr built from OK status");
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  // Precondition: ok().
  const T& value() const& { assert(ok()); return *value_; }
  T& value() & { assert(ok()); return *value_; }
  T&& value() && { assert(ok()); return std::move(*value_); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace hcudp

#define HCUDP_STATUS_CONCAT_INNER_(a, b) a##b
#define HCUDP_STATUS_CONCAT_(a, b) HCUDP_STATUS_CONCAT_INNER_(a, b)

// Returns from the enclosing function when `expr` (a Status) is not OK.
#define HCUDP_RETURN_IF_ERROR(expr)                \
  do {                                             \
    ::hcudp::Status _hcudp_st = (expr);            \
    if (!_hcudp_st.ok()) return _hcudp_st;         \
  } while (0)

// `lhs` = value of `rexpr` (a StatusOr), or return its status.
#define HCUDP_ASSIGN_OR_RETURN(lhs, rexpr) \
  HCUDP_ASSIGN_OR_RETURN_IMPL_(HCUDP_STATUS_CONCAT_(_hcudp_so_, __LINE__), lhs, rexpr)
#define HCUDP_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                                 \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()

#endif  // HCUDP_STATUS_H_
