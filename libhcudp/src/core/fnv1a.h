// 64-bit FNV-1a: a stable hash, the same in every process and build, for
// names and ids derived from text (simulated card ids, the sim's host-root
// names, plugin socket tags). Not for anything adversarial.
#ifndef HCUDP_SRC_CORE_FNV1A_H_
#define HCUDP_SRC_CORE_FNV1A_H_

#include <cstdint>
#include <string_view>

namespace hcudp {

inline uint64_t Fnv1a64(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace hcudp

#endif  // HCUDP_SRC_CORE_FNV1A_H_
