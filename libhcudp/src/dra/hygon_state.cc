// Hygon's prepared-state file: parse, and rewrite without some claims.
#include "dra/hygon_state.h"

#include <fcntl.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <set>
#include <utility>

#include "hcudp/dra/checkpoint.h"
#include "hcudp_internal/json_depth.h"
#include "hcudp/hami/mark_file.h"

namespace hcudp::dra {
namespace {

using Value = rapidjson::Value;

constexpr int kMaxIndex = 1 << 20;  // card and vdev indices: far above any node
constexpr size_t kMaxName = 253;    // a DNS subdomain, the longest Kubernetes name

// Iterative: nesting depth costs heap, not stack; and a document nested
// deeper than kMaxDepth is refused before it is parsed, so that writing it
// back (recursive) is bounded too. Hygon's file is 4 levels deep.
constexpr unsigned kParseFlags = rapidjson::kParseIterativeFlag;
constexpr int kMaxDepth = 32;

Status BadState(const std::string& field, const std::string& why) {
  return InvalidArgumentError("Hygon prepared state: " + field + ": " + why);
}

bool NameChar(char c, std::string_view extra) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         extra.find(c) != std::string_view::npos;
}

// `s` non-empty, at most kMaxName, of [A-Za-z0-9] and `extra`.
bool IsName(std::string_view s, std::string_view extra) {
  return !s.empty() && s.size() <= kMaxName &&
         std::all_of(s.begin(), s.end(), [&](char c) { return NameChar(c, extra); });
}

Status GetString(const Value& obj, const char* key, const std::string& field, std::string* out) {
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd() || it->value.IsNull()) return OkStatus();
  if (!it->value.IsString()) return BadState(field + "." + key, "must be a string");
  out->assign(it->value.GetString(), it->value.GetStringLength());
  return OkStatus();
}

Status GetName(const Value& obj, const char* key, const std::string& field, std::string_view extra,
               std::string* out) {
  HCUDP_RETURN_IF_ERROR(GetString(obj, key, field, out));
  if (!IsName(*out, extra)) {
    return BadState(field + "." + key, "\"" + out->substr(0, 64) + "\" is not a name (1 to " +
                                      std::to_string(kMaxName) + " of [A-Za-z0-9" +
                                      std::string(extra) + "])");
  }
  return OkStatus();
}

Status GetIndex(const Value& obj, const char* key, const std::string& field, int* out) {
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd()) return BadState(field + "." + key, "required");
  if (!it->value.IsInt() || it->value.GetInt() < 0 || it->value.GetInt() > kMaxIndex) {
    return BadState(field + "." + key, "must be an integer 0.." + std::to_string(kMaxIndex));
  }
  *out = it->value.GetInt();
  return OkStatus();
}

// "<vendor>/<class>=<name>" with CDI's characters.
Status CheckCdiId(const std::string& id, const std::string& field) {
  const size_t slash = id.find('/');
  const size_t eq = id.find('=');
  const bool ok = slash != std::string::npos && eq != std::string::npos && slash < eq &&
                  IsName(std::string_view(id).substr(0, slash), ".-") &&
                  IsName(std::string_view(id).substr(slash + 1, eq - slash - 1), ".-_") &&
                  IsName(std::string_view(id).substr(eq + 1), ".-_:");
  if (!ok) return BadState(field, "\"" + id.substr(0, 64) + "\" is not a CDI device ID");
  return OkStatus();
}

Status ParseDevice(const Value& v, const std::string& uid, const std::string& field,
                   HygonDevice* d) {
  if (!v.IsObject()) return BadState(field, "must be an object");
  std::string claim_uid;
  HCUDP_RETURN_IF_ERROR(GetString(v, "claimUID", field, &claim_uid));
  if (claim_uid != uid) {
    return BadState(field + ".claimUID", "\"" + claim_uid.substr(0, 64) + "\" is not the claim's UID");
  }
  HCUDP_RETURN_IF_ERROR(GetName(v, "parentDevice", field, "-", &d->parent_device));
  HCUDP_RETURN_IF_ERROR(GetName(v, "requestName", field, "-/", &d->request));
  HCUDP_RETURN_IF_ERROR(GetName(v, "poolName", field, "-.", &d->pool));
  auto whole = v.FindMember("wholeCard");
  if (whole == v.MemberEnd() || !whole->value.IsBool()) {
    return BadState(field + ".wholeCard", "must be true or false");
  }
  d->whole_card = whole->value.GetBool();
  HCUDP_RETURN_IF_ERROR(GetIndex(v, "dvInd", field, &d->card));
  d->vhcu_id = hami::kWholeCardVhcuId;
  if (!d->whole_card) HCUDP_RETURN_IF_ERROR(GetIndex(v, "vdvInd", field, &d->vhcu_id));
  HCUDP_RETURN_IF_ERROR(GetString(v, "cdiDeviceID", field, &d->cdi_id));
  HCUDP_RETURN_IF_ERROR(CheckCdiId(d->cdi_id, field + ".cdiDeviceID"));
  HCUDP_RETURN_IF_ERROR(GetString(v, "podUID", field, &d->pod_uid));
  if (!d->pod_uid.empty() && !IsName(d->pod_uid, "-")) {
    return BadState(field + ".podUID", "\"" + d->pod_uid.substr(0, 64) + "\" is not a UID");
  }
  HCUDP_RETURN_IF_ERROR(GetString(v, "dynamicMarkFile", field, &d->mark));
  if (d->mark.empty()) return OkStatus();
  // A name in /etc/vdev/dynamic that Unprepare removes: one plain file name
  // naming this very card and vHCU, nothing else.
  StatusOr<hami::MarkFileName> mark = hami::ParseMarkFileName(d->mark);
  if (!mark.ok() || d->mark.size() > kMaxName || d->mark.find('/') != std::string::npos) {
    return BadState(field + ".dynamicMarkFile", "\"" + d->mark.substr(0, 64) + "\" is not a mark file");
  }
  if (mark->card != d->card || mark->vhcu_id != d->vhcu_id) {
    return BadState(field + ".dynamicMarkFile",
               "\"" + d->mark + "\" names card " + std::to_string(mark->card) + " vHCU " +
                   std::to_string(mark->vhcu_id) + ", not the device's card " +
                   std::to_string(d->card) + " vHCU " + std::to_string(d->vhcu_id));
  }
  return OkStatus();
}

Status Parse(std::string_view text, rapidjson::Document* doc) {
  if (!json_depth::NestingWithin(text, kMaxDepth)) {
    return BadState("file", "nested deeper than " + std::to_string(kMaxDepth) + " levels");
  }
  doc->Parse<kParseFlags>(text.data(), text.size());
  return OkStatus();
}

StatusOr<const Value*> PreparedMap(const rapidjson::Document& doc) {
  if (doc.HasParseError()) {
    return BadState("file", std::string("not valid JSON: ") +
                           rapidjson::GetParseError_En(doc.GetParseError()) + " at byte " +
                           std::to_string(doc.GetErrorOffset()));
  }
  if (!doc.IsObject()) return BadState("file", "not a JSON object");
  auto prepared = doc.FindMember("prepared");
  if (prepared == doc.MemberEnd()) return BadState("prepared", "required");
  if (!prepared->value.IsObject() && !prepared->value.IsNull()) {
    return BadState("prepared", "must be an object of claim UIDs");
  }
  return &prepared->value;
}

}  // namespace

StatusOr<std::string> ReadHygonState(const std::string& path, std::chrono::milliseconds deadline) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  // O_NONBLOCK: opening a FIFO does not wait for a writer (nor a device
  // for its carrier); the regular-file check below then refuses it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return NotFoundError(path + ": no such file");
    return UnavailableError(path + ": open: " + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return FailedPreconditionError(path + ": not a regular file; left as it is");
  }
  std::string text;
  char buf[65536];
  for (;;) {
    if (std::chrono::steady_clock::now() >= until) {
      ::close(fd);
      return DeadlineExceededError(path + ": not read within " + std::to_string(deadline.count()) +
                                   " ms");
    }
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return UnavailableError(path + ": read: " + std::strerror(err));
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > kMaxHygonStateBytes) {
      ::close(fd);
      return BadState("file",
                 path + " is larger than " + std::to_string(kMaxHygonStateBytes) + " bytes");
    }
  }
  ::close(fd);
  return text;
}

StatusOr<std::vector<HygonClaim>> ParseHygonState(std::string_view text) {
  std::vector<HygonClaim> out;
  if (text.empty()) return out;
  if (text.size() > kMaxHygonStateBytes) {
    return BadState("file", std::to_string(text.size()) + " bytes, more than the " +
                           std::to_string(kMaxHygonStateBytes) + " accepted");
  }
  rapidjson::Document doc;
  HCUDP_RETURN_IF_ERROR(Parse(text, &doc));
  HCUDP_ASSIGN_OR_RETURN(const Value* prepared, PreparedMap(doc));
  if (prepared->IsNull()) return out;
  if (prepared->MemberCount() > kMaxHygonClaims) {
    return BadState("prepared", std::to_string(prepared->MemberCount()) + " claims, more than the " +
                               std::to_string(kMaxHygonClaims) + " accepted");
  }
  // vdvInd → where each record of it is: (claim's place in `out`, field).
  std::map<int, std::vector<std::pair<size_t, std::string>>> vhcu_records;
  std::set<std::string> uids;
  for (auto m = prepared->MemberBegin(); m != prepared->MemberEnd(); ++m) {
    HygonClaim claim;
    claim.uid.assign(m->name.GetString(), m->name.GetStringLength());
    const std::string field = "prepared[\"" + claim.uid.substr(0, 64) + "\"]";
    if (Status st = CheckClaimUid(claim.uid); !st.ok()) return BadState(field, st.message());
    if (!uids.insert(claim.uid).second) return BadState(field, "listed twice");
    const Value& list = m->value;
    if (!list.IsNull() && !list.IsArray()) return BadState(field, "must be a list of devices");
    if (list.IsArray() && list.Size() > kMaxHygonDevicesPerClaim) {
      return BadState(field, std::to_string(list.Size()) + " devices, more than the " +
                            std::to_string(kMaxHygonDevicesPerClaim) + " accepted");
    }
    for (rapidjson::SizeType i = 0; list.IsArray() && i < list.Size(); ++i) {
      const std::string dfield = field + "[" + std::to_string(i) + "]";
      HygonDevice d;
      HCUDP_RETURN_IF_ERROR(ParseDevice(list[i], claim.uid, dfield, &d));
      if (!d.whole_card) vhcu_records[d.vhcu_id].emplace_back(out.size(), dfield);
      claim.devices.push_back(std::move(d));
    }
    out.push_back(std::move(claim));
  }
  // A vHCU recorded more than once: every claim that records it is
  // rejected, naming another record; the others stay adoptable.
  for (const auto& [vhcu_id, records] : vhcu_records) {
    if (records.size() < 2) continue;
    for (size_t i = 0; i < records.size(); ++i) {
      const auto& [claim, field] = records[i];
      const std::string& other = records[i == 0 ? 1 : 0].second;
      if (!out[claim].rejected.empty()) continue;
      out[claim].rejected = "Hygon prepared state: " + field + ".vdvInd: vHCU " +
                            std::to_string(vhcu_id) + " is also recorded at " + other;
    }
  }
  std::sort(out.begin(), out.end(),
            [](const HygonClaim& a, const HygonClaim& b) { return a.uid < b.uid; });
  return out;
}

StatusOr<std::string> RemoveHygonClaims(std::string_view text,
                                        const std::vector<std::string>& uids) {
  rapidjson::Document doc;
  HCUDP_RETURN_IF_ERROR(Parse(text, &doc));
  HCUDP_RETURN_IF_ERROR(PreparedMap(doc).status());
  Value& prepared = doc["prepared"];
  if (prepared.IsNull()) prepared.SetObject();
  for (const std::string& uid : uids) {
    const Value key(rapidjson::StringRef(uid.c_str(), uid.size()));
    for (auto it = prepared.FindMember(key); it != prepared.MemberEnd();
         it = prepared.FindMember(key)) {
      prepared.EraseMember(it);  // in place: the others keep their order
    }
  }
  // As Hygon's driver writes it (Go's MarshalIndent with two spaces).
  rapidjson::StringBuffer buffer;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buffer);
  w.SetIndent(' ', 2);
  doc.Accept(w);
  return std::string(buffer.GetString(), buffer.GetSize());
}

std::string CdiDeviceNameOf(std::string_view cdi_id) {
  const size_t eq = cdi_id.find('=');
  return eq == std::string_view::npos ? std::string() : std::string(cdi_id.substr(eq + 1));
}

}  // namespace hcudp::dra
