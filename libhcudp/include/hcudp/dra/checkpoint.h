// The DRA checkpoint: what this node prepared, per claim, so that Unprepare
// (which gets only namespace/name/UID) and a restarted daemon know it.
//
// One JSON file per claim, <host-root>/var/lib/hcu-device-plugin/dra/
// <claimUID>.json (dir 0755, files 0644), written with WriteFileAtomic and
// fsync of the file and the directory. Each records the Linux boot ID it was
// written under (/proc/sys/kernel/random/boot_id under host-root), so a
// restart can tell a reboot (CDI specs in tmpfs lost, vHCUs maybe gone) from a
// daemon restart.
//
// A claim is "preparing" from before the first vHCU is created until every
// CDI spec and mark is written, then "prepared"; an Unprepare makes it
// "preparing" again before it releases the first device. A "preparing" entry
// found at start belongs to a Prepare that never answered or an Unprepare
// that did not finish: it is rolled back, and a Prepare never answers from it.
#ifndef HCUDP_DRA_CHECKPOINT_H_
#define HCUDP_DRA_CHECKPOINT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hcudp/export.h"
#include "hcudp/status.h"

namespace hcudp::dra {

inline constexpr std::string_view kCheckpointDir = "/var/lib/hcu-device-plugin/dra";
inline constexpr std::string_view kBootIdPath = "/proc/sys/kernel/random/boot_id";

enum class PreparedKind {
  kCard,         // a whole card
  kVhcu,         // a pre-split vHCU (a device of its own in the slice)
  kMig,          // a MIG instance
  kDynamicVhcu,  // a vHCU this driver created from consumedCapacity
};
// "card", "vhcu", "mig", "dynamic-vhcu".
HCUDP_EXPORT std::string_view PreparedKindName(PreparedKind kind);

struct PreparedDevice {
  std::string request;  // as in the allocation result ("hcu" or "hcu/sub")
  std::string pool;
  std::string device;    // the slice's device name
  std::string share_id;  // empty: none
  PreparedKind kind = PreparedKind::kCard;
  int card = -1;  // card index (the parent, for vHCU and MIG)
  std::string card_bdf;
  int vhcu_id = -1;       // kVhcu, kDynamicVhcu (-1 until created)
  std::string mig_uuid;   // kMig
  int compute_units = 0;  // kDynamicVhcu: the size asked for
  uint64_t memory_mib = 0;
  // Mark file name in /etc/vdev/dynamic (kCard and kDynamicVhcu), empty when
  // none was written yet.
  std::string mark;
  std::vector<std::string> cdi_ids;  // fully qualified
};

enum class ClaimState { kPreparing, kPrepared };

struct PreparedClaim {
  std::string uid;
  std::string namespace_name;
  std::string name;
  // The owner of its marks: the pod from status.reservedFor, else the claim UID.
  std::string owner;
  std::string boot_id;
  ClaimState state = ClaimState::kPreparing;
  std::vector<PreparedDevice> devices;
};

// The largest checkpoint entry read (an entry is a few KB).
inline constexpr size_t kMaxCheckpointEntryBytes = size_t{1} << 20;
// Set-aside entries: <claimUID>.json renamed by an Unprepare that could not
// decode it (see CheckpointStore::SetAside).
inline constexpr std::string_view kSetAsideSuffix = ".undecodable";

// The JSON of one checkpoint file, and back. Decode checks every field
// (InvalidArgument naming it); text larger than kMaxCheckpointEntryBytes or
// nesting arrays/objects deeper than the kube client allows (512 levels) is
// refused before it is parsed, so no entry can exhaust the stack.
HCUDP_EXPORT std::string EncodePreparedClaim(const PreparedClaim& claim);
HCUDP_EXPORT StatusOr<PreparedClaim> DecodePreparedClaim(std::string_view json);

// The checkpoint files under one host root: the one reader of the daemon,
// the library and hcuctl.
class HCUDP_EXPORT CheckpointStore {
 public:
  explicit CheckpointStore(std::string host_root);

  // <host-root>/var/lib/hcu-device-plugin/dra.
  const std::string& dir() const { return dir_; }

  // Every entry, sorted by claim UID. Entries that are not regular files
  // (FIFO, directory, symbolic link, device: never opened for reading, so a
  // FIFO cannot block), cannot be read, or do not decode are named in `bad`
  // ("<path>: <why>") and skipped, left in place, never fatal: one corrupt
  // file must not stop the daemon. Entries set aside by SetAside are named in
  // `bad` too. A missing directory is empty.
  StatusOr<std::vector<PreparedClaim>> ReadAll(std::vector<std::string>* bad) const;
  // NotFound when the claim has no entry; FailedPrecondition when the entry
  // is not a regular file; InvalidArgument when it does not decode (see
  // IsUndecodableEntry); other codes for I/O errors. Messages name the path.
  StatusOr<PreparedClaim> Read(const std::string& uid) const;
  // Renames the claim's entry (whatever its type) to
  // <uid>.json.undecodable, durably: kept for an admin, no longer the
  // claim's entry (a Prepare of the claim starts afresh). Returns the new
  // path.
  StatusOr<std::string> SetAside(const std::string& uid) const;
  // Durable (file and directory fsync-ed) before it returns.
  Status Write(const PreparedClaim& claim) const;
  // Durable; a missing entry is OK.
  Status Remove(const std::string& uid) const;

 private:
  std::string host_root_;
  std::string dir_;
};

// Whether a Read error means the entry is there but will never decode (not
// a regular file, corrupt, too large or deep, a newer format): retrying
// cannot help, unlike an I/O error.
HCUDP_EXPORT bool IsUndecodableEntry(const Status& read_error);

// The boot ID under host_root (trimmed); NotFound when the file is absent.
HCUDP_EXPORT StatusOr<std::string> ReadBootId(const std::string& host_root);

// A claim UID usable as a file name: [A-Za-z0-9-], 1..128 characters.
HCUDP_EXPORT Status CheckClaimUid(std::string_view uid);

}  // namespace hcudp::dra

#endif  // HCUDP_DRA_CHECKPOINT_H_
