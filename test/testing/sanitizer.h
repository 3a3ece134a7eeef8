// How many times slower a sanitizer build runs the daemon's start-up work
// than release: 4 under ASan or TSan, 1 otherwise. Only for deadlines that
// bound setup on deliberately huge nodes, never for a bound a test asserts.
#ifndef HCUDP_TEST_TESTING_SANITIZER_H_
#define HCUDP_TEST_TESTING_SANITIZER_H_

namespace hcudp::testing {

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define HCUDP_TEST_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || defined(HCUDP_TEST_SANITIZED)
inline constexpr int kSanitizerSlowdown = 4;
#else
inline constexpr int kSanitizerSlowdown = 1;
#endif

}  // namespace hcudp::testing

#endif  // HCUDP_TEST_TESTING_SANITIZER_H_
