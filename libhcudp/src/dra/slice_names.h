// Name grammar of the resource.k8s.io API (dra.md §3.2), checked before a
// slice is built so that a bad name is our error, not the API server's.
#ifndef HCUDP_DRA_SLICE_NAMES_H_
#define HCUDP_DRA_SLICE_NAMES_H_

#include <string>
#include <string_view>

#include "hcudp/status.h"

namespace hcudp::dra {

// `text` in double quotes, cut after 64 characters ("...\" (<n> bytes)"): a
// bad name from outside makes a short message, whatever its length.
std::string QuoteShort(std::string_view text);
// RFC 1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, <= 63. InvalidArgument
// "<what> \"<name>\" ..." otherwise (the name quoted by QuoteShort).
Status CheckDnsLabel(std::string_view name, const std::string& what);
// RFC 1123 subdomain: labels joined by '.', <= max_length (253).
Status CheckDnsSubdomain(std::string_view name, const std::string& what, size_t max_length = 253);
// Semantic Versioning 2.0.0 (what a `version` attribute must hold), <= 64.
bool IsSemver(std::string_view text);

}  // namespace hcudp::dra

#endif  // HCUDP_DRA_SLICE_NAMES_H_
