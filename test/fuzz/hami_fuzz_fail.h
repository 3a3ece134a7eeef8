// Shared by the HAMi fuzzers: report the input that broke a property, then
// abort (a crash to libFuzzer and to the standalone driver alike).
#ifndef HCUDP_TEST_FUZZ_HAMI_FUZZ_FAIL_H_
#define HCUDP_TEST_FUZZ_HAMI_FUZZ_FAIL_H_

#include <cstdio>
#include <cstdlib>
#include <string_view>

[[noreturn]] inline void HamiFuzzFail(std::string_view input, const char* why) {
  std::fprintf(stderr, "property broken: %s\ninput (%zu bytes): ", why, input.size());
  for (unsigned char c : input) {
    if (c >= 0x20 && c < 0x7f) {
      std::fputc(c, stderr);
    } else {
      std::fprintf(stderr, "\\x%02x", c);
    }
  }
  std::fputc('\n', stderr);
  std::abort();
}

#endif  // HCUDP_TEST_FUZZ_HAMI_FUZZ_FAIL_H_
