// /etc/vdev/vdev<N>.conf: see hcudp/vdev_conf.h and hcu-hardware.md §3.3.
#include "hcudp/vdev_conf.h"

#include <bitset>
#include <cinttypes>
#include <cstdio>
#include <map>

#include "conf/text_util.h"

namespace hcudp {
namespace {

constexpr std::string_view kKeys[] = {"PciBusId",  "cu_mask", "cu_count", "mem",
                                      "device_id", "vdev_id", "pipe_id",  "enable"};

bool IsKnownKey(std::string_view key) {
  for (std::string_view k : kKeys) {
    if (k == key) return true;
  }
  return false;
}

Status VdevLineError(int line, const std::string& message) {
  return InvalidArgumentError("vdev conf: " + text::AtLine(line, message));
}

// A non-negative decimal that fits `int` and is at most `max`.
Status ParseBoundedInt(int line, std::string_view key, std::string_view value, int64_t max,
                       int* out) {
  std::optional<int64_t> v = text::ParseInt(value);
  if (!v || *v < 0 || *v > max) {
    return VdevLineError(line, std::string(key) + ": \"" + std::string(value) +
                                   "\" is not an integer in 0.." + std::to_string(max));
  }
  *out = static_cast<int>(*v);
  return OkStatus();
}

Status ParseMem(int line, std::string_view value, uint64_t* mib) {
  constexpr std::string_view kUnit = " MiB";
  std::optional<uint64_t> v;
  if (value.size() > kUnit.size() && value.substr(value.size() - kUnit.size()) == kUnit) {
    v = text::ParseUint(value.substr(0, value.size() - kUnit.size()));
  }
  if (!v || *v == 0 || *v > (uint64_t{1} << 40)) {
    return VdevLineError(
        line, "mem: \"" + std::string(value) + "\" is not \"<n> MiB\" with n a positive integer");
  }
  *mib = *v;
  return OkStatus();
}

Status ApplyKey(int line, std::string_view key, std::string_view value, int mask_index,
                VdevConf* conf) {
  if (key == "PciBusId") {
    if (!text::IsPciBdf(value)) {
      return VdevLineError(line, "PciBusId: \"" + std::string(value) +
                                     "\" is not a lower-case PCI address dddd:bb:dd.f");
    }
    conf->pci_bus_id = std::string(value);
    return OkStatus();
  }
  if (key == "cu_mask") {
    std::optional<uint64_t> mask = text::ParseHex64(value);
    if (!mask) {
      return VdevLineError(line, "cu_mask: \"" + std::string(value) + "\" is not 0x<hex, 64 bits>");
    }
    (mask_index == 0 ? conf->cu_mask_lo : conf->cu_mask_hi) = *mask;
    return OkStatus();
  }
  if (key == "mem") return ParseMem(line, value, &conf->mem_mib);
  if (key == "cu_count") return ParseBoundedInt(line, key, value, kMaxCuMaskBits, &conf->cu_count);
  if (key == "device_id") return ParseBoundedInt(line, key, value, 1023, &conf->device_id);
  if (key == "vdev_id") return ParseBoundedInt(line, key, value, 1 << 20, &conf->vdev_id);
  if (key == "pipe_id") return ParseBoundedInt(line, key, value, kMaxPipeId, &conf->pipe_id);
  return ParseBoundedInt(line, key, value, 1, &conf->enable);  // "enable"
}

}  // namespace

StatusOr<VdevConf> ParseVdevConf(std::string_view content) {
  VdevConf conf;
  std::map<std::string_view, int> seen;  // key -> occurrences
  int last_line = 0;
  for (const text::Line& line : text::SplitLines(content)) {
    last_line = line.number;
    if (text::Trim(line.text).empty()) continue;
    std::optional<text::KeyValue> kv = text::SplitKeyValue(line.text);
    if (!kv) return VdevLineError(line.number, "expected \"key: value\"");
    if (!IsKnownKey(kv->key)) {
      return VdevLineError(line.number, "unknown key \"" + std::string(kv->key) + "\"");
    }
    int& count = seen[kv->key];
    int allowed = kv->key == "cu_mask" ? 2 : 1;
    if (count >= allowed) {
      return VdevLineError(line.number, "duplicate key \"" + std::string(kv->key) + "\"");
    }
    HCUDP_RETURN_IF_ERROR(ApplyKey(line.number, kv->key, kv->value, count, &conf));
    ++count;
  }
  if (seen.empty()) return InvalidArgumentError("vdev conf: file is empty");
  for (std::string_view key : kKeys) {
    int want = key == "cu_mask" ? 2 : 1;
    if (seen[key] != want) {
      return VdevLineError(last_line, "missing key \"" + std::string(key) + "\"" +
                                          (want == 2 ? " (two cu_mask lines are required)" : ""));
    }
  }
  int popcount = static_cast<int>(std::bitset<64>(conf.cu_mask_lo).count() +
                                  std::bitset<64>(conf.cu_mask_hi).count());
  if (popcount != conf.cu_count) {
    return InvalidArgumentError("vdev conf: cu_count " + std::to_string(conf.cu_count) +
                                " does not match the " + std::to_string(popcount) +
                                " bits set in the cu_mask lines");
  }
  return conf;
}

std::string FormatVdevConf(const VdevConf& conf) {
  char masks[96];
  std::snprintf(masks, sizeof masks, "cu_mask: 0x%016" PRIx64 "\ncu_mask: 0x%016" PRIx64 "\n",
                conf.cu_mask_lo, conf.cu_mask_hi);
  return "PciBusId: " + conf.pci_bus_id + "\n" + masks +
         "cu_count: " + std::to_string(conf.cu_count) + "\n" +
         "mem: " + std::to_string(conf.mem_mib) + " MiB\n" +
         "device_id: " + std::to_string(conf.device_id) + "\n" +
         "vdev_id: " + std::to_string(conf.vdev_id) + "\n" +
         "pipe_id: " + std::to_string(conf.pipe_id) + "\n" +
         "enable: " + std::to_string(conf.enable) + "\n";
}

Status CheckVdevConfName(const VdevConf& conf, int file_index) {
  if (conf.vdev_id == file_index) return OkStatus();
  return InvalidArgumentError("vdev" + std::to_string(file_index) + ".conf has vdev_id " +
                              std::to_string(conf.vdev_id) +
                              " (must equal the number in the file name)");
}

Status CheckPipeIdsUnique(const std::vector<VdevConf>& confs) {
  std::map<std::pair<std::string, int>, int> owner;  // (card BDF, pipe) -> vdev_id
  for (const VdevConf& c : confs) {
    auto [it, inserted] = owner.emplace(std::make_pair(c.pci_bus_id, c.pipe_id), c.vdev_id);
    if (!inserted) {
      return InvalidArgumentError("vdev" + std::to_string(c.vdev_id) + " and vdev" +
                                  std::to_string(it->second) + " share pipe_id " +
                                  std::to_string(c.pipe_id) + " on card " + c.pci_bus_id);
    }
  }
  return OkStatus();
}

StatusOr<int> ParseVdevConfFileName(std::string_view file_name) {
  constexpr std::string_view kPrefix = "vdev";
  constexpr std::string_view kSuffix = ".conf";
  auto bad = [&] {
    return InvalidArgumentError("\"" + std::string(file_name) + "\" is not vdev<N>.conf");
  };
  if (file_name.size() <= kPrefix.size() + kSuffix.size() ||
      file_name.substr(0, kPrefix.size()) != kPrefix ||
      file_name.substr(file_name.size() - kSuffix.size()) != kSuffix) {
    return bad();
  }
  std::string_view digits =
      file_name.substr(kPrefix.size(), file_name.size() - kPrefix.size() - kSuffix.size());
  if (digits.size() > 1 && digits.front() == '0') return bad();  // vdev01.conf
  std::optional<int64_t> n = text::ParseInt(digits);
  if (!n || *n < 0 || *n > (1 << 20)) return bad();
  return static_cast<int>(*n);
}

}  // namespace hcudp
