// Internal: the CDI specs of DRA mode (DESIGN §9, reference/dra.md §5).
//   <cdi-dir>/<driver>-hcu.json         kind <driver>/hcu: every card, device
//                                       name = the slice's card name;
//   <cdi-dir>/<driver>-vhcu_<uid>.json  kind <driver>/vhcu: the vHCUs and MIG
//                                       instances of one prepared claim, named
//                                       <uid>-vdev<N> / <uid>-<device> (claim
//                                       UID in the name: never reused).
// cdiVersion: the lowest the spec's content needs (cdi/cdi_edits.h,
// CdiMinimumVersion); 0.5.0 for deviceNodes[].hostPath and device names
// starting with a digit (claim UIDs), which runtimes back to containerd 1.7
// and podman 4.3 accept.
#ifndef HCUDP_SRC_DRA_DRA_CDI_SPEC_H_
#define HCUDP_SRC_DRA_DRA_CDI_SPEC_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "hcudp/allocation.h"
#include "hcudp/device.h"
#include "hcudp/dra/checkpoint.h"
#include "hcudp/status.h"

namespace hcudp::dra {

std::string CardCdiKind(const std::string& driver);  // "<driver>/hcu"
std::string VhcuCdiKind(const std::string& driver);  // "<driver>/vhcu"
std::string WholeCardSpecFileName(const std::string& driver);
std::string ClaimSpecFileName(const std::string& driver, const std::string& claim_uid);
// The CDI device name of a claim's vHCU or MIG device.
std::string ClaimCdiDeviceName(const std::string& claim_uid, const PreparedDevice& device);

// The whole-card spec, one entry per device name (the card's BDF):
//   - every card of `inventory`;
//   - then every unknown card of it whose last known identity (BDF, DRI
//     nodes) is read and whose name is not written yet, built from that
//     identity alone: another card answering at its old index (a card
//     missed renumbers the ones after it) never stands in for it;
//   - then each entry of `kept` (device name -> the JSON object of an
//     earlier spec's entry) whose name is not written yet: a card a
//     prepared claim holds, missed or unknown now, keeps its entry so the
//     running pod's CDI id still resolves (unknown is not absent).
// Cards whose edits cannot be built are named in `skipped` and left out.
std::string BuildWholeCardSpec(const std::string& driver, const NodeInventory& inventory,
                               const AllocationBuilder& builder, std::vector<std::string>* skipped,
                               const std::map<std::string, std::string>& kept = {});
// The entries of a whole-card spec as written (`spec_json`): device name ->
// its JSON object. Empty when it does not parse (nothing to keep from it).
std::map<std::string, std::string> WholeCardSpecEntries(std::string_view spec_json);
// The claim spec for its kVhcu, kMig and kDynamicVhcu devices. Empty string
// when the claim has none. FailedPrecondition when a device's edits cannot be
// built (conf file missing, no DRI nodes).
StatusOr<std::string> BuildClaimSpec(const std::string& driver, const PreparedClaim& claim,
                                     const NodeInventory& inventory,
                                     const AllocationBuilder& builder);

// Atomic, file and directory fsync-ed; creates `dir`.
Status WriteSpecFile(const std::string& dir, const std::string& file_name, const std::string& json);

}  // namespace hcudp::dra

#endif  // HCUDP_SRC_DRA_DRA_CDI_SPEC_H_
