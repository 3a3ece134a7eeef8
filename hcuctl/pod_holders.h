// Kubelet's pod-resources as ledger holders (hcudp/ledger.h): the library has
// no gRPC client, so hcuctl gives its Node this source.
#ifndef HCUCTL_POD_HOLDERS_H_
#define HCUCTL_POD_HOLDERS_H_

#include <string>
#include <vector>

#include "hcudp/ledger.h"
#include "hcudp/status.h"

namespace hcuctl {

// The HCU devices kubelet says each pod holds (vdev<N>, a card BDF,
// MIG-<uuid>), asked at `socket` within a second. Unavailable when kubelet
// does not answer (the ledger then notes it).
hcudp::StatusOr<std::vector<hcudp::Holder>> PodResourcesHolders(const std::string& socket);

}  // namespace hcuctl

#endif  // HCUCTL_POD_HOLDERS_H_
