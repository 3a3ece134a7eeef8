// HAMi codec: the wire formats HAMi mode shares with the HCU scheduler, HAMi,
// hcu-exporter and the Hygon DRA driver (reference/seed-behaviour.md §0,
// §5.2-5.6). Pure functions: no I/O, no clock unless passed in.
//
// Every decoder is strict (it accepts what the vendor plugin and HAMi write,
// nothing looser), names the bad record and field in an InvalidArgument
// message, and never crashes on any input. Every encoder validates that its
// fields cannot corrupt the separators (',', ':', ';', '_') and fails with
// InvalidArgument instead of writing a value the scheduler would misread.
#ifndef HCUDP_HAMI_CODEC_H_
#define HCUDP_HAMI_CODEC_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hcudp/device.h"
#include "hcudp/export.h"
#include "hcudp/status.h"

namespace hcudp::hami {

// ---------------------------------------------------------------- keys ----
// Node annotations.
inline constexpr std::string_view kNodeHandshakeAnnotation = "hami.io/node-handshake-hcu";
inline constexpr std::string_view kNodeRegisterAnnotation = "hami.io/node-hcu-register";
inline constexpr std::string_view kNodeRemainingAnnotation = "hygon.com/node-hcu-register";
inline constexpr std::string_view kNodeLockAnnotation = "hami.io/mutex.lock";
// Pod annotations.
inline constexpr std::string_view kBindPhaseAnnotation = "hami.io/bind-phase";
inline constexpr std::string_view kBindTimeAnnotation = "hami.io/bind-time";
inline constexpr std::string_view kVgpuNodeAnnotation = "hami.io/vgpu-node";
inline constexpr std::string_view kDevicesToAllocateAnnotation = "hami.io/hcu-devices-to-allocate";
inline constexpr std::string_view kDevicesAllocatedAnnotation = "hami.io/hcu-devices-allocated";
inline constexpr std::string_view kContainerIndexAnnotation = "hygon.com/container-index";
// hami.io/bind-phase values.
inline constexpr std::string_view kBindPhaseAllocating = "allocating";
inline constexpr std::string_view kBindPhaseSuccess = "success";
inline constexpr std::string_view kBindPhaseFailed = "failed";
// Host directory of mark files (a host path: prefix it with host-root).
inline constexpr std::string_view kMarkFileDir = "/etc/vdev/dynamic";
// Prefix of HAMi card ids ("HCU-<serial>") and the pod device Type.
inline constexpr std::string_view kCardIdPrefix = "HCU-";
inline constexpr std::string_view kPodDeviceType = "HCU";
// Mode field of the 9-field node record we write, and the one HAMi assumes
// for the 7-field form.
inline constexpr std::string_view kNodeDeviceMode = "hami";
inline constexpr std::string_view kNodeDeviceModeSevenField = "hami-core";

// ------------------------------------------------ node devices (§5.2) ----
// One card in hami.io/node-hcu-register / hygon.com/node-hcu-register:
// "Id,Count,Devmem,Devcore,Type,Numa,Health,Index,Mode:".
struct NodeDevice {
  std::string id;               // "HCU-<serial>"
  int32_t count = 0;            // vHCU slots (split count, or what remains)
  int32_t devmem_mib = 0;       // memory, MiB
  int32_t devcore_percent = 0;  // compute, percent of the card
  std::string type;             // "HCU-K100_AI"
  // NUMA node; -1 when the card has none. int64: the vendor wrote the
  // uint32 numa_node_number, so "no NUMA" may read 4294967295.
  int64_t numa = 0;
  bool healthy = true;
  int index = 0;  // card index (dvInd)
  std::string mode = std::string(kNodeDeviceMode);

  HCUDP_EXPORT bool operator==(const NodeDevice& o) const;
};

// Records concatenated, each ending in ':'. Health is "true"/"false".
HCUDP_EXPORT StatusOr<std::string> EncodeNodeDevices(const std::vector<NodeDevice>& devices);
// Accepts the 9-field form and HAMi's 7-field form (Id..Health; then index
// is 0 and mode "hami-core", as HAMi decodes it). Health takes Go's
// strconv.ParseBool spellings. Id, Type and Mode must not contain ';' (the
// Id becomes a pod device UUID). The empty string is zero devices.
HCUDP_EXPORT StatusOr<std::vector<NodeDevice>> DecodeNodeDevices(std::string_view value);

// Both node lists built from one inventory, in card-index order.
struct NodeRegistration {
  std::vector<NodeDevice> full;       // hami.io/node-hcu-register
  std::vector<NodeDevice> remaining;  // hygon.com/node-hcu-register
  // One line per card left out of both lists, saying why (no memory, no
  // CUs, no model, no or duplicate serial, a separator in serial/model).
  std::vector<std::string> skipped;
};

// full: Count = split_count, Devmem = trunc(VRAM / MiB), Devcore = 100.
// remaining: Count = split_count - vHCUs on the card (never below 0), Devmem
// = trunc((VRAM - vHCU memory) / MiB), Devcore = trunc(free CU * 100 / CU),
// each never below 0. Whole-card allocations are not subtracted (the
// scheduler tracks them from pod annotations, as with the vendor plugin).
HCUDP_EXPORT NodeRegistration BuildNodeRegistration(const NodeInventory& inventory,
                                                    int split_count);

// ------------------------------------------------- pod devices (§5.3) ----
// One device of one container: "UUID,Type,Usedmem,Usedcores:".
struct ContainerDevice {
  std::string uuid;  // "HCU-<serial>", the node record's Id
  std::string type = std::string(kPodDeviceType);
  int32_t used_mem_mib = 0;        // >= 0
  int32_t used_cores_percent = 0;  // 0..100

  HCUDP_EXPORT bool operator==(const ContainerDevice& o) const;
};
using ContainerDevices = std::vector<ContainerDevice>;
// One entry per container position of spec.containers; an entry may be
// empty (a container without HCUs).
using PodDevices = std::vector<ContainerDevices>;

// "" for no devices.
HCUDP_EXPORT StatusOr<std::string> EncodeContainerDevices(const ContainerDevices& devices);
// Exactly 4 fields per record; every record ends in ':'; no ';' in a field.
HCUDP_EXPORT StatusOr<ContainerDevices> DecodeContainerDevices(std::string_view value);

// Each container's devices followed by ';' ("A:;" one container, ";A:;" two
// with only the second using HCUs, ";" one empty container, "" none).
HCUDP_EXPORT StatusOr<std::string> EncodePodDevices(const PodDevices& pod);
// Keeps container positions: result[i] is spec.containers[i]'s devices
// (unlike HAMi's decoder, which drops empty containers). A non-empty value
// must end in ';'.
HCUDP_EXPORT StatusOr<PodDevices> DecodePodDevices(std::string_view value);
// HAMi's view of a decoded pod: the empty containers dropped.
HCUDP_EXPORT PodDevices DropEmptyContainers(const PodDevices& pod);

// The vendor's Allocate step 3.3 on hami.io/hcu-devices-to-allocate: decode
// as HAMi does (dropping empty containers), make the first remaining
// container empty, re-encode. So ";A:;B:;" -> ";B:;", "A:;" -> ";".
// Returns `value`'s first non-empty container in `served` when non-null.
// FailedPrecondition when no container has devices left.
HCUDP_EXPORT StatusOr<std::string> VendorEraseFirstContainer(std::string_view value,
                                                             ContainerDevices* served);
// True when some container still has devices (the vendor's "contains HCU"
// test for "more containers pending", done on decoded records).
HCUDP_EXPORT bool HasPendingDevices(const PodDevices& pod);

// ----------------------------------------- pending pod (§5.4 step 1) ----
// hami.io/bind-time: unix seconds, as the scheduler writes it.
HCUDP_EXPORT StatusOr<int64_t> ParseBindTime(std::string_view value);
// The vendor's test of a pod's annotations for "being allocated on
// `node_name`": hami.io/bind-time present, hami.io/bind-phase "allocating",
// hami.io/vgpu-node == node_name. Phase Pending is the caller's check; among
// several matches, pick the oldest ParseBindTime (defect §8.15).
HCUDP_EXPORT bool IsAllocatingOn(const std::map<std::string, std::string>& annotations,
                                 std::string_view node_name);

// ------------------------------------- hygon.com/container-index (§5.4) ----
// Indexes each followed by ',': "0," or "0,2,". "" is the empty list.
HCUDP_EXPORT std::string EncodeContainerIndex(const std::vector<int>& indexes);
HCUDP_EXPORT StatusOr<std::vector<int>> DecodeContainerIndex(std::string_view value);
// The vendor's Allocate step 2: the container positions that use HCUs, from
// hami.io/hcu-devices-allocated. Split on ';'; when there are fewer parts
// than `container_count` the parts are right-aligned (the vendor prepends
// ';'); the positions of the non-empty parts are returned. Records are
// validated as DecodeContainerDevices does.
HCUDP_EXPORT StatusOr<std::vector<int>> ContainerIndexesFromAllocated(std::string_view value,
                                                                      int container_count);

// --------------------------------------------- node lock (§5.5) ----------
// hami.io/mutex.lock = "<RFC3339 time>,<namespace>,<pod name>".
struct NodeLock {
  std::chrono::system_clock::time_point time;  // whole seconds
  std::string time_text;                       // as written, e.g. "...+08:00"
  std::string pod_namespace;
  std::string pod_name;
};

// Time in UTC ("2026-03-01T02:00:00Z"), as Go formats a UTC time.
HCUDP_EXPORT StatusOr<std::string> FormatNodeLock(std::chrono::system_clock::time_point time,
                                                  std::string_view pod_namespace,
                                                  std::string_view pod_name);
// Exactly three comma fields; the time is RFC3339 (offset Z or ±hh:mm,
// optional fraction); namespace and name non-empty.
HCUDP_EXPORT StatusOr<NodeLock> ParseNodeLock(std::string_view value);
// True only when both namespace and name are equal (never a substring test:
// pod "a" does not hold "ab"'s lock, nor "a" in another namespace).
HCUDP_EXPORT bool NodeLockHeldBy(const NodeLock& lock, std::string_view pod_namespace,
                                 std::string_view pod_name);
// RFC3339 with offset Z or ±hh:mm and an optional fraction (dropped); years
// 1900..2200 (what a system_clock holds).
HCUDP_EXPORT StatusOr<std::chrono::system_clock::time_point> ParseRfc3339(std::string_view text);
// "2026-03-01T02:00:00Z" (UTC, whole seconds).
HCUDP_EXPORT std::string FormatRfc3339Utc(std::chrono::system_clock::time_point time);

// --------------------------------------------- handshake (§5.2) ----------
// What hami.io/node-handshake-hcu says. The scheduler only looks for the
// substrings "Requesting" and "Deleted"; anything else counts as reported.
enum class HandshakeState { kReported, kRequesting, kDeleted };

struct Handshake {
  HandshakeState state = HandshakeState::kReported;
  std::string time_text;  // text after "Reported " or "<State>_"
  // Requesting/Deleted: the scheduler's "2006-01-02 15:04:05" read as UTC
  // (the scheduler writes its local time without a zone). Reported: our
  // RFC3339 time. Empty when the text does not parse.
  std::optional<std::chrono::system_clock::time_point> time;
};

// "Reported 2026-11-29T20:42:26Z": a clean UTC time (the vendor wrote Go's
// time.String() with a monotonic suffix; the scheduler does not parse it).
HCUDP_EXPORT std::string FormatHandshakeReported(std::chrono::system_clock::time_point time);
// Classifies as the scheduler does ("Requesting" first, then "Deleted"),
// else requires the "Reported " prefix. Empty or other text: InvalidArgument.
HCUDP_EXPORT StatusOr<Handshake> ParseHandshake(std::string_view value);
HCUDP_EXPORT std::string_view HandshakeStateName(HandshakeState state);

// ------------------------------------------- mark files (§5.6) ----------
inline constexpr int kWholeCardVhcuId = -1;

// /etc/vdev/dynamic/<podUID>_<container>_<dvInd>_<vdevIdx>.
struct MarkFileName {
  std::string pod_uid;
  std::string container;
  int card = 0;                    // dvInd, >= 0
  int vhcu_id = kWholeCardVhcuId;  // vdev index, or -1 for a whole card

  bool whole_card() const { return vhcu_id == kWholeCardVhcuId; }
  HCUDP_EXPORT bool operator==(const MarkFileName& o) const;
};

// InvalidArgument when a part is empty or contains '_' or '/', card < 0 or
// vhcu_id < -1.
HCUDP_EXPORT StatusOr<std::string> FormatMarkFileName(const MarkFileName& mark);
// Exactly four '_' parts; card a non-negative int; vhcu_id an int >= -1.
HCUDP_EXPORT StatusOr<MarkFileName> ParseMarkFileName(std::string_view file_name);
// Mark file content: local time as Go's "2006-01-02 15:04:05" (the vendor's).
HCUDP_EXPORT std::string FormatMarkFileTime(std::chrono::system_clock::time_point time);

// --------------------------------------------- vHCU size rule (§5.4) ------
// ceil(cores_percent * card_compute_units / 100), at least 1.
HCUDP_EXPORT int VhcuComputeUnits(int cores_percent, int card_compute_units);

// What one device of a container request turns into on this node.
struct DevicePlan {
  int card = 0;  // card index (dvInd)
  std::string card_bdf;
  bool create_vhcu = false;      // false: the container gets the whole card
  int vhcu_compute_units = 0;    // create_vhcu only
  uint64_t vhcu_memory_mib = 0;  // create_vhcu only
};

// The vendor's rule, with defect §8.20 fixed: a vHCU only when exactly one
// device is requested with Usedmem below the card's memory; otherwise every
// card is given whole — and the caller writes a whole-card mark file
// (vhcu_id -1) for every card given whole, so each one is accounted.
// Cards are found by serial (UUID "HCU-<serial>"). InvalidArgument for a
// bad UUID or an empty request; NotFound for an unknown serial;
// FailedPrecondition when two cards share the serial.
HCUDP_EXPORT StatusOr<std::vector<DevicePlan>> PlanContainerDevices(const ContainerDevices& request,
                                                                    const NodeInventory& inventory);

// ----------------------------------------- any value, readably (hcuctl) ----
enum class Encoding {
  kNodeDevices,       // hami.io/node-hcu-register, hygon.com/node-hcu-register
  kPodDevices,        // hami.io/hcu-devices-to-allocate / -allocated
  kContainerDevices,  // one container's part of the above
  kContainerIndex,    // hygon.com/container-index
  kNodeLock,          // hami.io/mutex.lock
  kHandshake,         // hami.io/node-handshake-hcu
  kMarkFileName,      // /etc/vdev/dynamic/<name>
};

// "node-devices", "pod-devices", "container-devices", "container-index",
// "node-lock", "handshake", "mark-file".
HCUDP_EXPORT std::string_view EncodingName(Encoding encoding);
HCUDP_EXPORT StatusOr<Encoding> ParseEncoding(std::string_view name);

// A record as named fields, in a fixed order per encoding, for printing as a
// table row or a JSON/YAML object. Field names per encoding:
//   node-devices:      id count devmem_mib devcore_percent type numa healthy index mode
//   pod-devices:       container uuid type used_mem_mib used_cores_percent
//                      (an empty container is one record with only "container")
//   container-devices: uuid type used_mem_mib used_cores_percent
//   container-index:   index
//   node-lock:         time namespace pod
//   handshake:         state time
//   mark-file:         pod_uid container card vhcu_id
struct ReadableField {
  std::string name;
  std::string value;
};
struct ReadableRecord {
  std::vector<ReadableField> fields;
  // The named field's value, or nullptr.
  HCUDP_EXPORT const std::string* Find(std::string_view name) const;
};
struct ReadableValue {
  Encoding encoding = Encoding::kNodeDevices;
  std::vector<ReadableRecord> records;
};

// Decodes `value` as `encoding`.
HCUDP_EXPORT StatusOr<ReadableValue> DecodeReadable(Encoding encoding, std::string_view value);
// Detects the encoding: tries handshake, node lock, mark file name, node
// devices, pod devices, container devices, container index in that order and
// returns the first that decodes. InvalidArgument listing why each failed.
HCUDP_EXPORT StatusOr<ReadableValue> DecodeAnyReadable(std::string_view value);
// The reverse: records (fields by name, any order; missing optional fields
// take the struct defaults) back to the wire string.
HCUDP_EXPORT StatusOr<std::string> EncodeReadable(const ReadableValue& value);

}  // namespace hcudp::hami

#endif  // HCUDP_HAMI_CODEC_H_
