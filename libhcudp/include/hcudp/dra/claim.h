// DRA ResourceClaims (resource.k8s.io/v1, reference/dra.md §3.5–3.6): the
// parts a node plugin reads, parsed from the API's JSON. Only the allocation
// results of one driver are kept. Bad JSON or a field of the wrong shape is an
// InvalidArgument naming the field ("status.allocation.devices.results[1].
// consumedCapacity.memory: ..."), never a crash.
#ifndef HCUDP_DRA_CLAIM_H_
#define HCUDP_DRA_CLAIM_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hcudp/export.h"
#include "hcudp/kube_client.h"
#include "hcudp/status.h"

namespace hcudp::dra {

inline constexpr std::string_view kDefaultDriverName = "dra.hygon.com";
inline constexpr std::string_view kResourceApiPrefix = "/apis/resource.k8s.io/v1";

// What kubelet passes per claim to NodePrepare/NodeUnprepareResources.
struct ClaimRef {
  std::string namespace_name;
  std::string name;
  std::string uid;
};

// Whether a claim reference from kubelet follows the Kubernetes name rules,
// checked before it is used in an API path, a file name or a message:
// namespace a DNS-1123 label, name a DNS-1123 subdomain (at most 253), UID
// as CheckClaimUid. InvalidArgument naming the field; the bad value is
// quoted cut to 64 characters, so a huge name makes a short error.
HCUDP_EXPORT Status CheckClaimRef(const ClaimRef& ref);

// /apis/resource.k8s.io/v1/namespaces/<ns>/resourceclaims/<name>.
HCUDP_EXPORT ResourcePath ResourceClaimPath(std::string namespace_name, std::string name);

// Consumable capacity amounts (consumedCapacity, or a request's
// capacity.requests) in the units of DESIGN §9: cores in CUs, memory in bytes.
struct CapacityAmounts {
  std::optional<int64_t> cores;
  std::optional<int64_t> memory_bytes;
  bool empty() const { return !cores && !memory_bytes; }
};

// One entry of status.allocation.devices.results of this driver.
// A request name without "/<sub-request>" ("hcu/sub" -> "hcu"): what
// kubelet matches a container's request by.
HCUDP_EXPORT std::string BaseRequestName(std::string_view request);

struct AllocatedDevice {
  std::string request;  // "hcu", or "hcu/sub" for a prioritized-list sub-request
  std::string pool;
  std::string device;
  std::string share_id;  // empty when the result has none
  bool admin_access = false;
  bool has_consumed_capacity = false;  // consumedCapacity present (may be empty)
  CapacityAmounts consumed;
  // The claim spec's capacity.requests of this (sub-)request; used only when
  // the cluster gives no consumedCapacity (DESIGN §9 fallback).
  CapacityAmounts requested;

  // The request name without "/<sub-request>": what kubelet matches.
  std::string BaseRequest() const;
};

struct ParsedClaim {
  std::string namespace_name;
  std::string name;
  std::string uid;
  bool allocated = false;  // status.allocation present
  // The first status.reservedFor entry that is a pod (resource "pods", core
  // group); empty when none.
  std::string pod_uid;
  std::vector<AllocatedDevice> results;  // only `driver`'s, in the API's order
};

// Parses a ResourceClaim object. Results of other drivers are skipped
// (their fields are not checked).
HCUDP_EXPORT StatusOr<ParsedClaim> ParseResourceClaim(std::string_view json,
                                                      std::string_view driver);

// A Kubernetes quantity ("60", "20Gi", "1.5k", "500m", "1e3") as an integer,
// rounded up (as resource.Quantity.Value()). InvalidArgument for bad syntax,
// negative values or values beyond int64.
HCUDP_EXPORT StatusOr<int64_t> ParseQuantity(std::string_view text);

}  // namespace hcudp::dra

#endif  // HCUDP_DRA_CLAIM_H_
