// The version of libhcudp and its binaries, from `git describe --tags --dirty`
// at build time ("v0.1.0-untagged-<hash>" when the tree carries no tag).
#ifndef HCUDP_VERSION_H_
#define HCUDP_VERSION_H_

#include "hcudp/export.h"

namespace hcudp {
HCUDP_EXPORT const char* Version();
}  // namespace hcudp

#endif  // HCUDP_VERSION_H_
