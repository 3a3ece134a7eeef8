// hcuctl's readable form of HAMi values (`hcuctl hami decode` / `encode`):
// any HAMi wire string <-> named fields, built on the library's codec
// (hcudp/hami/*.h). hcuctl is its only user, so it lives here, not in
// libhcudp's API.
#ifndef HCUCTL_HAMI_READABLE_H_
#define HCUCTL_HAMI_READABLE_H_

#include <string>
#include <string_view>
#include <vector>

#include "hcudp/status.h"

namespace hcuctl::hami {

using hcudp::StatusOr;

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
std::string_view EncodingName(Encoding encoding);
StatusOr<Encoding> ParseEncoding(std::string_view name);

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
  const std::string* Find(std::string_view name) const;
};
struct ReadableValue {
  Encoding encoding = Encoding::kNodeDevices;
  std::vector<ReadableRecord> records;
};

// Decodes `value` as `encoding`.
StatusOr<ReadableValue> DecodeReadable(Encoding encoding, std::string_view value);
// Detects the encoding: tries handshake, node lock, mark file name, node
// devices, pod devices, container devices, container index in that order and
// returns the first that decodes. InvalidArgument listing why each failed.
StatusOr<ReadableValue> DecodeAnyReadable(std::string_view value);
// The reverse: records (fields by name, any order; missing optional fields
// take the struct defaults) back to the wire string.
StatusOr<std::string> EncodeReadable(const ReadableValue& value);

}  // namespace hcuctl::hami

#endif  // HCUCTL_HAMI_READABLE_H_
