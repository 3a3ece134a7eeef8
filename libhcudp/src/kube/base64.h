// Base64 (RFC 4648 standard alphabet): decoding for kubeconfig *-data
// fields, encoding for a proxy's Basic credentials.
#ifndef HCUDP_SRC_KUBE_BASE64_H_
#define HCUDP_SRC_KUBE_BASE64_H_

#include <optional>
#include <string>
#include <string_view>

namespace hcudp::kube {

// Decodes `text`; '=' padding optional, line breaks ignored. nullopt on any
// other character or a dangling bit group.
std::optional<std::string> Base64Decode(std::string_view text);

// Encodes `bytes`, with '=' padding.
std::string Base64Encode(std::string_view bytes);

}  // namespace hcudp::kube

#endif  // HCUDP_SRC_KUBE_BASE64_H_
