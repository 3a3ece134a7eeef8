// The DRA checkpoint files: encode, decode, read, write, remove.
#include <dirent.h>
#include <fcntl.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "dra/slice_names.h"
#include "hcudp/backend.h"
#include "hcudp/dra/checkpoint.h"
#include "hcudp_internal/file_util.h"
#include "hcudp_internal/host_fs.h"
#include "kube/api_error.h"

namespace hcudp::dra {
namespace {

constexpr int kFormatVersion = 1;
constexpr mode_t kDirMode = 0755;
constexpr mode_t kFileMode = 0644;
constexpr std::string_view kSuffix = ".json";

using Value = rapidjson::Value;
using PrettyJsonWriter = rapidjson::PrettyWriter<rapidjson::StringBuffer>;

void Str(PrettyJsonWriter& w, const char* key, const std::string& value) {
  w.Key(key);
  w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
}

Status Bad(const std::string& field, const char* why) {
  return InvalidArgumentError("checkpoint field " + field + ": " + why);
}

Status GetStr(const Value& obj, const char* key, const std::string& field, std::string* out,
              bool required = false) {
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd()) return required ? Bad(field, "required") : OkStatus();
  if (!it->value.IsString()) return Bad(field, "must be a string");
  out->assign(it->value.GetString(), it->value.GetStringLength());
  if (required && out->empty()) return Bad(field, "required");
  return OkStatus();
}

Status GetInt(const Value& obj, const char* key, const std::string& field, int64_t min,
              int64_t* out) {
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd()) return OkStatus();
  if (!it->value.IsInt64() || it->value.GetInt64() < min) return Bad(field, "must be an integer");
  *out = it->value.GetInt64();
  return OkStatus();
}

StatusOr<PreparedKind> ParseKind(const std::string& text) {
  for (PreparedKind k :
       {PreparedKind::kCard, PreparedKind::kVhcu, PreparedKind::kMig, PreparedKind::kDynamicVhcu}) {
    if (PreparedKindName(k) == text) return k;
  }
  return InvalidArgumentError("unknown kind");
}

Status DecodeDevice(const Value& v, const std::string& field, PreparedDevice* d) {
  if (!v.IsObject()) return Bad(field, "must be an object");
  HCUDP_RETURN_IF_ERROR(GetStr(v, "request", field + ".request", &d->request, true));
  HCUDP_RETURN_IF_ERROR(GetStr(v, "pool", field + ".pool", &d->pool, true));
  HCUDP_RETURN_IF_ERROR(GetStr(v, "device", field + ".device", &d->device, true));
  HCUDP_RETURN_IF_ERROR(GetStr(v, "shareID", field + ".shareID", &d->share_id));
  std::string kind;
  HCUDP_RETURN_IF_ERROR(GetStr(v, "kind", field + ".kind", &kind, true));
  StatusOr<PreparedKind> k = ParseKind(kind);
  if (!k.ok()) return Bad(field + ".kind", "unknown kind");
  d->kind = *k;
  int64_t n = -1;
  HCUDP_RETURN_IF_ERROR(GetInt(v, "card", field + ".card", -1, &n));
  d->card = static_cast<int>(std::min<int64_t>(n, 1 << 20));
  HCUDP_RETURN_IF_ERROR(GetStr(v, "cardBDF", field + ".cardBDF", &d->card_bdf));
  n = -1;
  HCUDP_RETURN_IF_ERROR(GetInt(v, "vhcuID", field + ".vhcuID", -1, &n));
  d->vhcu_id = static_cast<int>(std::min<int64_t>(n, 1 << 20));
  HCUDP_RETURN_IF_ERROR(GetStr(v, "migUUID", field + ".migUUID", &d->mig_uuid));
  n = 0;
  HCUDP_RETURN_IF_ERROR(GetInt(v, "computeUnits", field + ".computeUnits", 0, &n));
  d->compute_units = static_cast<int>(std::min<int64_t>(n, 1 << 20));
  n = 0;
  HCUDP_RETURN_IF_ERROR(GetInt(v, "memoryMiB", field + ".memoryMiB", 0, &n));
  d->memory_mib = static_cast<uint64_t>(n);
  HCUDP_RETURN_IF_ERROR(GetStr(v, "mark", field + ".mark", &d->mark));
  auto ids = v.FindMember("cdiDeviceIDs");
  if (ids != v.MemberEnd()) {
    if (!ids->value.IsArray()) return Bad(field + ".cdiDeviceIDs", "must be a list");
    for (const Value& id : ids->value.GetArray()) {
      if (!id.IsString()) return Bad(field + ".cdiDeviceIDs", "must hold strings");
      d->cdi_ids.emplace_back(id.GetString(), id.GetStringLength());
    }
  }
  return OkStatus();
}

Status ErrnoStatus(const char* what, const std::string& path, int err) {
  std::string message = std::string(what) + " " + path + ": " + std::strerror(err);
  if (err == ENOENT) return NotFoundError(std::move(message));
  if (err == EACCES || err == EPERM) return PermissionDeniedError(std::move(message));
  return InternalError(std::move(message));
}

// The text of one entry: only a regular file is ever read (a FIFO would
// block the reader, a symlink to /dev/zero never ends; file_util's one home
// for that read).
StatusOr<std::string> ReadEntry(const std::string& path) {
  return file_util::ReadRegularFile(path, kMaxCheckpointEntryBytes);
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() > suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Every name in `dir` whatever its type (file_util::ListFileNames lists
// regular files only, and an entry that is not one must be named), sorted.
StatusOr<std::vector<std::string>> ListAllNames(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    if (errno == ENOENT) return names;
    return ErrnoStatus("list", dir, errno);
  }
  while (struct dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

std::string_view PreparedKindName(PreparedKind kind) {
  switch (kind) {
    case PreparedKind::kCard:
      return "card";
    case PreparedKind::kVhcu:
      return "vhcu";
    case PreparedKind::kMig:
      return "mig";
    case PreparedKind::kDynamicVhcu:
      return "dynamic-vhcu";
  }
  return "card";
}

Status CheckClaimUid(std::string_view uid) {
  if (uid.empty() || uid.size() > 128)
    return InvalidArgumentError("claim UID: 1 to 128 characters");
  for (char c : uid) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
    if (!ok)
      return InvalidArgumentError("claim UID \"" + std::string(uid) + "\": only [A-Za-z0-9-]");
  }
  return OkStatus();
}

std::string EncodePreparedClaim(const PreparedClaim& claim) {
  rapidjson::StringBuffer buffer;
  PrettyJsonWriter w(buffer);
  w.SetIndent(' ', 2);
  w.StartObject();
  w.Key("version");
  w.Int(kFormatVersion);
  Str(w, "uid", claim.uid);
  Str(w, "namespace", claim.namespace_name);
  Str(w, "name", claim.name);
  Str(w, "owner", claim.owner);
  Str(w, "bootID", claim.boot_id);
  Str(w, "state", claim.state == ClaimState::kPrepared ? "prepared" : "preparing");
  if (!claim.adopted_from.empty()) Str(w, "adoptedFrom", claim.adopted_from);
  w.Key("devices");
  w.StartArray();
  for (const PreparedDevice& d : claim.devices) {
    w.StartObject();
    Str(w, "request", d.request);
    Str(w, "pool", d.pool);
    Str(w, "device", d.device);
    if (!d.share_id.empty()) Str(w, "shareID", d.share_id);
    Str(w, "kind", std::string(PreparedKindName(d.kind)));
    w.Key("card");
    w.Int(d.card);
    Str(w, "cardBDF", d.card_bdf);
    w.Key("vhcuID");
    w.Int(d.vhcu_id);
    if (!d.mig_uuid.empty()) Str(w, "migUUID", d.mig_uuid);
    w.Key("computeUnits");
    w.Int(d.compute_units);
    w.Key("memoryMiB");
    w.Uint64(d.memory_mib);
    if (!d.mark.empty()) Str(w, "mark", d.mark);
    w.Key("cdiDeviceIDs");
    w.StartArray();
    for (const std::string& id : d.cdi_ids) {
      w.String(id.c_str(), static_cast<rapidjson::SizeType>(id.size()));
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

StatusOr<PreparedClaim> DecodePreparedClaim(std::string_view json) {
  if (json.size() > kMaxCheckpointEntryBytes) {
    return InvalidArgumentError("checkpoint: larger than " +
                                std::to_string(kMaxCheckpointEntryBytes) + " bytes");
  }
  // RapidJSON's parser recurses per level: the kube client's bound first.
  if (!kube::JsonNestingWithin(json)) {
    return InvalidArgumentError("checkpoint: nests deeper than " +
                                std::to_string(kube::kMaxJsonDepth) + " levels");
  }
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError()) {
    return InvalidArgumentError(std::string("checkpoint: not valid JSON: ") +
                                rapidjson::GetParseError_En(doc.GetParseError()));
  }
  if (!doc.IsObject()) return InvalidArgumentError("checkpoint: not a JSON object");
  int64_t version = 0;
  HCUDP_RETURN_IF_ERROR(GetInt(doc, "version", "version", 0, &version));
  if (version > kFormatVersion) {
    return InvalidArgumentError("checkpoint field version: " + std::to_string(version) +
                                " is newer than this release's " + std::to_string(kFormatVersion) +
                                " (written by a newer release?)");
  }
  if (version != kFormatVersion) return Bad("version", "must be 1");
  PreparedClaim claim;
  HCUDP_RETURN_IF_ERROR(GetStr(doc, "uid", "uid", &claim.uid, true));
  HCUDP_RETURN_IF_ERROR(CheckClaimUid(claim.uid));
  HCUDP_RETURN_IF_ERROR(GetStr(doc, "namespace", "namespace", &claim.namespace_name));
  HCUDP_RETURN_IF_ERROR(GetStr(doc, "adoptedFrom", "adoptedFrom", &claim.adopted_from));
  // An adopted claim's name is learnt from kubelet's first call that names it.
  HCUDP_RETURN_IF_ERROR(
      GetStr(doc, "name", "name", &claim.name, /*required=*/claim.adopted_from.empty()));
  // What Recover GETs and logs follows the rules kubelet's names follow; a
  // part an entry may lack (an adopted claim's, say) is checked once known.
  if (!claim.namespace_name.empty()) {
    HCUDP_RETURN_IF_ERROR(CheckDnsLabel(claim.namespace_name, "claim namespace"));
  }
  if (!claim.name.empty()) HCUDP_RETURN_IF_ERROR(CheckDnsSubdomain(claim.name, "claim name"));
  HCUDP_RETURN_IF_ERROR(GetStr(doc, "owner", "owner", &claim.owner, true));
  HCUDP_RETURN_IF_ERROR(GetStr(doc, "bootID", "bootID", &claim.boot_id));
  std::string state;
  HCUDP_RETURN_IF_ERROR(GetStr(doc, "state", "state", &state, true));
  if (state == "prepared") {
    claim.state = ClaimState::kPrepared;
  } else if (state == "preparing") {
    claim.state = ClaimState::kPreparing;
  } else {
    return Bad("state", "must be prepared or preparing");
  }
  auto devices = doc.FindMember("devices");
  if (devices == doc.MemberEnd() || !devices->value.IsArray())
    return Bad("devices", "must be a list");
  for (rapidjson::SizeType i = 0; i < devices->value.Size(); ++i) {
    PreparedDevice d;
    HCUDP_RETURN_IF_ERROR(
        DecodeDevice(devices->value[i], "devices[" + std::to_string(i) + "]", &d));
    claim.devices.push_back(std::move(d));
  }
  return claim;
}

CheckpointStore::CheckpointStore(std::string host_root)
    : host_root_(std::move(host_root)),
      dir_(::hcudp::internal::HostFs(host_root_).DraCheckpointDir()) {}

StatusOr<std::vector<PreparedClaim>> CheckpointStore::ReadAll(std::vector<std::string>* bad) const {
  HCUDP_ASSIGN_OR_RETURN(std::vector<std::string> names, ListAllNames(dir_));
  std::vector<PreparedClaim> out;
  for (const std::string& name : names) {
    const std::string path = dir_ + "/" + name;
    if (name.front() == '.') continue;  // temp files of an interrupted write
    if (EndsWith(name, std::string(kSuffix) + std::string(kSetAsideSuffix))) {
      if (bad != nullptr) {
        bad->push_back(path + ": set aside by an Unprepare that could not decode it");
      }
      continue;
    }
    if (!EndsWith(name, kSuffix)) continue;  // strangers
    StatusOr<std::string> text = ReadEntry(path);
    StatusOr<PreparedClaim> claim =
        text.ok() ? DecodePreparedClaim(*text) : StatusOr<PreparedClaim>(text.status());
    if (claim.ok() && claim->uid + std::string(kSuffix) != name) {
      claim = InvalidArgumentError("uid " + claim->uid + " does not match the file name");
    }
    if (!claim.ok()) {
      if (bad != nullptr) {
        const std::string& why = claim.status().message();
        // ReadEntry's messages name the path already.
        bad->push_back(why.rfind(path, 0) == 0 ? why : path + ": " + why);
      }
      continue;
    }
    out.push_back(std::move(*claim));
  }
  return out;
}

StatusOr<PreparedClaim> CheckpointStore::Read(const std::string& uid) const {
  HCUDP_RETURN_IF_ERROR(CheckClaimUid(uid));
  const std::string path = dir_ + "/" + uid + std::string(kSuffix);
  HCUDP_ASSIGN_OR_RETURN(std::string text, ReadEntry(path));
  StatusOr<PreparedClaim> claim = DecodePreparedClaim(text);
  if (!claim.ok()) return claim.status().WithContext(path);
  if (claim->uid != uid)
    return InvalidArgumentError(path + ": uid " + claim->uid + " does not match the file name");
  return claim;
}

StatusOr<std::string> CheckpointStore::SetAside(const std::string& uid) const {
  HCUDP_RETURN_IF_ERROR(CheckClaimUid(uid));
  const std::string path = dir_ + "/" + uid + std::string(kSuffix);
  const std::string aside = path + std::string(kSetAsideSuffix);
  if (::rename(path.c_str(), aside.c_str()) != 0) return ErrnoStatus("rename", path, errno);
  HCUDP_RETURN_IF_ERROR(file_util::SyncDirectory(dir_));
  return aside;
}

Status CheckpointStore::Write(const PreparedClaim& claim) const {
  HCUDP_RETURN_IF_ERROR(CheckClaimUid(claim.uid));
  HCUDP_RETURN_IF_ERROR(
      file_util::MakeDirs(dir_, kDirMode, file_util::Durability::kSyncFileAndDirectory));
  return file_util::WriteFileAtomic(dir_ + "/" + claim.uid + std::string(kSuffix),
                                    EncodePreparedClaim(claim), kFileMode,
                                    file_util::Durability::kSyncFileAndDirectory);
}

Status CheckpointStore::Remove(const std::string& uid) const {
  HCUDP_RETURN_IF_ERROR(CheckClaimUid(uid));
  return file_util::RemoveFile(dir_ + "/" + uid + std::string(kSuffix),
                               file_util::Durability::kSyncFileAndDirectory);
}

bool IsUndecodableEntry(const Status& read_error) {
  return read_error.code() == StatusCode::kInvalidArgument ||
         read_error.code() == StatusCode::kFailedPrecondition;
}

StatusOr<std::string> ReadBootId(const std::string& host_root) {
  HCUDP_ASSIGN_OR_RETURN(std::string text,
                         file_util::ReadFile(::hcudp::internal::HostFs(host_root).BootId(), 4096));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

}  // namespace hcudp::dra
