#include "hcudp/status.h"

#include <boost/test/unit_test.hpp>

namespace hcudp {
namespace {

StatusOr<int> Half(int n) {
  if (n % 2 != 0) return InvalidArgumentError("odd: " + std::to_string(n));
  return n / 2;
}

Status Quarter(int n, int* out) {
  HCUDP_ASSIGN_OR_RETURN(int half, Half(n));
  HCUDP_ASSIGN_OR_RETURN(*out, Half(half));
  return OkStatus();
}

BOOST_AUTO_TEST_SUITE(status)

BOOST_AUTO_TEST_CASE(default_status_is_ok_and_prints_ok) {
  Status s;
  BOOST_TEST(s.ok());
  BOOST_TEST(s.ToString() == "OK");
}

BOOST_AUTO_TEST_CASE(error_carries_code_name_and_message) {
  Status s = NotFoundError("vdev7");
  BOOST_TEST(!s.ok());
  BOOST_TEST(s.ToString() == "NOT_FOUND: vdev7");
  BOOST_TEST(s.WithContext("destroy").ToString() == "NOT_FOUND: destroy: vdev7");
}

BOOST_AUTO_TEST_CASE(codes_match_grpc_numbers) {
  BOOST_TEST(static_cast<int>(StatusCode::kInvalidArgument) == 3);
  BOOST_TEST(static_cast<int>(StatusCode::kFailedPrecondition) == 9);
  BOOST_TEST(static_cast<int>(StatusCode::kUnavailable) == 14);
  BOOST_TEST(StatusCodeName(StatusCode::kUnauthenticated) == "UNAUTHENTICATED");
}

BOOST_AUTO_TEST_CASE(statusor_from_ok_status_becomes_internal_error) {
  StatusOr<int> v = OkStatus();
  BOOST_TEST(!v.ok());
  BOOST_TEST(static_cast<int>(v.status().code()) == static_cast<int>(StatusCode::kInternal));
}

BOOST_AUTO_TEST_CASE(assign_or_return_propagates_first_error) {
  int out = 0;
  BOOST_TEST(Quarter(8, &out).ok());
  BOOST_TEST(out == 2);
  Status s = Quarter(6, &out);
  BOOST_TEST(s.ToString() == "INVALID_ARGUMENT: odd: 3");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
