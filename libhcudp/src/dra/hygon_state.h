// Internal: the prepared-state file of Hygon's k8s-hcu-dra-driver v1.0
// (reference/dra.md §6.1), read at start so that a node moves from that
// driver to this daemon without draining (DESIGN §9 "Migration",
// doc/dra.md "Migrating from Hygon's DRA driver").
//
// <CDI_ROOT>/hcu-dra-driver-prepared-state.state (CDI_ROOT is our
// --cdi-spec-dir), JSON:
//   {"prepared": {"<claim UID>": [<device>, ...], ...}}
// and each device an object of claimUID, parentDevice, requestName,
// poolName, wholeCard, vdvInd, pciBusNumber, cdiName, cdiDeviceID,
// dynamicMarkFile, podUID, containerName, dvInd.
//
// The parser is strict about every field it uses (type, range, the
// characters of names that become file names, CDI IDs and checkpoint
// entries) and tolerant of fields it does not know, so a later driver
// version that adds one still migrates. Bounded: at most kMaxHygonStateBytes,
// kMaxHygonClaims claims, kMaxHygonDevicesPerClaim devices each, and an
// iterative JSON parse (deep nesting cannot exhaust the stack).
#ifndef HCUDP_SRC_DRA_HYGON_STATE_H_
#define HCUDP_SRC_DRA_HYGON_STATE_H_

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "hcudp/status.h"

namespace hcudp::dra {

inline constexpr std::string_view kHygonStateFileName = "hcu-dra-driver-prepared-state.state";
// Hygon's CDI spec files in the same directory: every card, and one per vHCU
// (hcu-dra-driver-vdevice-<cdi name>.yaml).
inline constexpr std::string_view kHygonCardSpecFileName = "hcu-dra-driver-device.yaml";
inline constexpr std::string_view kHygonVhcuSpecPrefix = "hcu-dra-driver-vdevice-";
inline constexpr std::string_view kHygonSpecSuffix = ".yaml";
// What checkpoint entries of adopted claims record as PreparedClaim::adopted_from.
inline constexpr std::string_view kHygonDriverId = "k8s-hcu-dra-driver";

inline constexpr size_t kMaxHygonStateBytes = 4 << 20;
inline constexpr size_t kMaxHygonClaims = 4096;
inline constexpr size_t kMaxHygonDevicesPerClaim = 64;

// One device of a claim as Hygon's driver recorded it.
struct HygonDevice {
  std::string parent_device;  // the slice's card device, hcu-<bdf with '-'>
  std::string request;        // the allocation result's request
  std::string pool;
  bool whole_card = false;
  int vhcu_id = -1;    // vdvInd; -1 for a whole card
  int card = 0;        // dvInd, the card index
  std::string cdi_id;  // cdiDeviceID, fully qualified (vendor/class=name)
  std::string mark;    // dynamicMarkFile, a name in /etc/vdev/dynamic; may be empty
  std::string pod_uid;
};

struct HygonClaim {
  std::string uid;
  std::vector<HygonDevice> devices;  // empty when Hygon recorded none
  // Non-empty: this claim is not to be adopted, and why (a vHCU index that
  // another claim, or this one twice, also records). Its devices are still
  // Hygon's: left as they are, and the claim stays in Hygon's file.
  std::string rejected;
};

// How long reading the state file may take (a disk that stalls).
inline constexpr std::chrono::milliseconds kHygonStateReadDeadline{2000};

// The state file's text, read only as a regular file: opened without
// blocking (a FIFO or device at the path is FailedPrecondition "not a
// regular file", never a wait for a writer) and read within `deadline`
// (DeadlineExceeded). NotFound when there is none; InvalidArgument over
// kMaxHygonStateBytes.
StatusOr<std::string> ReadHygonState(const std::string& path,
                                     std::chrono::milliseconds deadline = kHygonStateReadDeadline);

// The claims of one state file, sorted by UID. An empty text is no claims
// (as Hygon's driver reads it). InvalidArgument naming the field otherwise
// (`prepared["<uid>"][<i>].<field>: <why>`). A vHCU index recorded twice
// (Hygon's driver leaves such duplicates, and expects them) fails only the
// claims that record it: they come back with `rejected` set.
StatusOr<std::vector<HygonClaim>> ParseHygonState(std::string_view text);

// The text of `text` without the claims in `uids` (for a rollback, the file
// keeps listing the adopted claims still prepared and nothing else). Other
// claims are kept as they were, field for field. InvalidArgument when `text`
// is not a state file.
StatusOr<std::string> RemoveHygonClaims(std::string_view text,
                                        const std::vector<std::string>& uids);

// The name part of a CDI ID ("dra.hygon.com/vhcu=vdev3" → "vdev3").
std::string CdiDeviceNameOf(std::string_view cdi_id);

}  // namespace hcudp::dra

#endif  // HCUDP_SRC_DRA_HYGON_STATE_H_
