// A small claim allocator for tests: it plays the scheduler. Given the
// devices of a node's slices and a ResourceClaim's spec, it writes
// status.allocation (and status.reservedFor) the way kube-scheduler does.
//
// Supported subset (anything else is an error, never silently ignored):
//   requests[].exactly            count (ExactCount; default 1), capacity.requests
//                                 (cores, memory), deviceClassName must be the
//                                 driver's; selectors: none (an error if set);
//   requests[].firstAvailable[]   the first sub-request that fits ("req/sub");
//   constraints[].matchAttribute  all devices of the listed requests (all requests
//                                 when none are listed) share the attribute's
//                                 value (string attributes), found by
//                                 backtracking over the candidates;
//   consumable capacity           on allowMultipleAllocations devices: each result
//                                 gets consumedCapacity {cores, memory, slices: 1}
//                                 and a fresh shareID; capacity left is tracked
//                                 across Allocate calls (memory rounded up to 1Mi);
//                                 a request without capacity on such a device
//                                 consumes all of it (policy default = full);
//                                 each share takes one of the device's `slices`.
// Not supported: CEL selectors, distinctAttribute, allocationMode All, admin
// access, device taints/tolerations, configs.
#ifndef HCUDP_TEST_DRA_PREPARE_DRA_ALLOCATOR_H_
#define HCUDP_TEST_DRA_PREPARE_DRA_ALLOCATOR_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hcudp/status.h"

namespace hcudp::testing {

struct AllocatorDevice {
  std::string name;
  std::map<std::string, std::string> attributes;  // string attributes
  int64_t cores = 0;
  int64_t memory_bytes = 0;
  bool allow_multiple = true;
  int64_t slices = 0;  // capacity "slices": shares per device (0: no limit)
};

// The devices of resource.k8s.io/v1 ResourceSlice objects (JSON) of
// `driver`: name, attributes (string, int, bool, version values as text;
// keys of the driver's domain unqualified, others as written), capacity
// `cores` and `memory`, allowMultipleAllocations. A device with a taint is
// left out (no claim here tolerates one), as the scheduler would.
StatusOr<std::vector<AllocatorDevice>> DevicesFromSlices(const std::vector<std::string>& slices,
                                                         const std::string& driver);

class DraAllocator {
 public:
  DraAllocator(std::string driver, std::string pool, std::vector<AllocatorDevice> devices);

  // `claim_json` is a ResourceClaim (metadata + spec). Returns it with
  // status.allocation and status.reservedFor = [pod `pod_uid`] added.
  // ResourceExhausted when it does not fit, InvalidArgument for what the
  // subset does not cover.
  StatusOr<std::string> Allocate(const std::string& claim_json, const std::string& pod_uid);

  // Gives a claim's capacity back (the claim was deleted).
  void Free(const std::string& allocated_claim_json);

 private:
  struct Left {
    int64_t cores;
    int64_t memory;
    bool whole_taken;
    int shares;
  };
  std::string driver_;
  std::string pool_;
  std::vector<AllocatorDevice> devices_;
  std::vector<Left> left_;
  int next_share_ = 1;
};

}  // namespace hcudp::testing

#endif  // HCUDP_TEST_DRA_PREPARE_DRA_ALLOCATOR_H_
