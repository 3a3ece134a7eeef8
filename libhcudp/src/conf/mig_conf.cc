// /etc/dmi_mig_config/ci/dev<d>gi<g>ci<c>.conf: see hcudp/mig_conf.h and
// hcu-hardware.md §4.3. The vendor's reader is order based, so the parser
// insists on the documented key order: 13 GI lines, then 14 CI lines.
#include "hcudp/mig_conf.h"

#include <functional>
#include <vector>

#include "conf/text_util.h"

namespace hcudp {
namespace {

constexpr int kValueColumn = 20;  // values start here in files written by hy-smi

Status MigLineError(int line, const std::string& message) {
  return InvalidArgumentError("mig conf: " + text::AtLine(line, message));
}

// One expected line: its key and how to store its value.
struct Field {
  std::string_view key;
  std::function<Status(int line, std::string_view value)> parse;
};

Field IntField(std::string_view key, int* out, int64_t max) {
  return {key, [key, out, max](int line, std::string_view value) {
            std::optional<int64_t> v = text::ParseInt(value);
            if (!v || *v < 0 || *v > max) {
              return MigLineError(line, std::string(key) + ": \"" + std::string(value) +
                                            "\" is not an integer in 0.." + std::to_string(max));
            }
            *out = static_cast<int>(*v);
            return OkStatus();
          }};
}

Field MemField(std::string_view key, uint64_t* out) {
  return {key, [key, out](int line, std::string_view value) {
            std::optional<uint64_t> v = text::ParseUint(value);
            if (!v || *v == 0 || *v > (uint64_t{1} << 40)) {
              return MigLineError(line, std::string(key) + ": \"" + std::string(value) +
                                            "\" is not a positive integer");
            }
            *out = *v;
            return OkStatus();
          }};
}

// A text field kept as written once `valid` accepts it; `want` ends the
// error message ("... is not <want>").
Field CheckedTextField(std::string_view key, bool (*valid)(std::string_view), std::string_view want,
                       std::string* out) {
  return {key, [key, valid, want, out](int line, std::string_view value) {
            if (!valid(value)) {
              return MigLineError(line, std::string(key) + ": \"" + std::string(value) +
                                            "\" is not " + std::string(want));
            }
            *out = std::string(value);
            return OkStatus();
          }};
}

bool IsHex64(std::string_view value) { return text::ParseHex64(value).has_value(); }

Field HexField(std::string_view key, std::string* out) {
  return CheckedTextField(key, IsHex64, "0x<hex, up to 64 bits>", out);
}

Field BdfField(std::string* out) {
  return CheckedTextField("pci", text::IsPciBdf, "a lower-case PCI address dddd:bb:dd.f", out);
}

Field UuidField(std::string* out) {
  return CheckedTextField("mig_uuid", text::IsUuid, "a lower-case 36-character UUID", out);
}

std::vector<Field> ExpectedFields(MigConf* c) {
  constexpr int64_t kSmall = 1 << 16;
  MigGpuInstanceBlock& g = c->gi;
  MigComputeInstanceBlock& i = c->ci;
  return {
      BdfField(&g.pci),
      IntField("id", &g.id, kSmall),
      HexField("pipe_mask", &g.pipe_mask),
      HexField("gpu_slice_mask", &g.gpu_slice_mask),
      HexField("cu_mask", &g.cu_mask_lo),
      HexField("cu_mask", &g.cu_mask_hi),
      IntField("profile_id", &g.profile_id, kSmall),
      IntField("gi_count_max", &g.gi_count_max, kSmall),
      IntField("cu_count", &g.cu_count, kSmall),
      IntField("gpu_slice_count", &g.gpu_slice_count, kSmall),
      MemField("memory_size_MB", &g.memory_size_mb),
      IntField("placement_start", &g.placement_start, kSmall),
      IntField("placement_size", &g.placement_size, kSmall),
      BdfField(&i.pci),
      IntField("gi_id", &i.gi_id, kSmall),
      IntField("id", &i.id, kSmall),
      HexField("pipe_mask", &i.pipe_mask),
      HexField("gpu_slice_mask", &i.gpu_slice_mask),
      HexField("cu_mask", &i.cu_mask_lo),
      HexField("cu_mask", &i.cu_mask_hi),
      IntField("profile_id", &i.profile_id, kSmall),
      IntField("ci_count_max", &i.ci_count_max, kSmall),
      IntField("cu_count", &i.cu_count, kSmall),
      IntField("gpu_slice_count", &i.gpu_slice_count, kSmall),
      IntField("placement_start", &i.placement_start, kSmall),
      IntField("placement_size", &i.placement_size, kSmall),
      UuidField(&i.mig_uuid),
  };
}

std::string Pad(std::string_view key) {
  std::string s = std::string(key) + ":";
  if (s.size() < kValueColumn)
    s.append(kValueColumn - s.size(), ' ');
  else
    s.push_back(' ');
  return s;
}

}  // namespace

StatusOr<MigConf> ParseMigConf(std::string_view content) {
  MigConf conf;
  std::vector<Field> fields = ExpectedFields(&conf);
  size_t next = 0;
  int last_line = 0;
  for (const text::Line& line : text::SplitLines(content)) {
    last_line = line.number;
    if (text::Trim(line.text).empty()) continue;
    std::optional<text::KeyValue> kv = text::SplitKeyValue(line.text);
    if (!kv) return MigLineError(line.number, "expected \"key: value\"");
    if (next == fields.size()) {
      return MigLineError(line.number,
                          "unexpected line after mig_uuid (key \"" + std::string(kv->key) + "\")");
    }
    const Field& want = fields[next];
    if (kv->key != want.key) {
      return MigLineError(line.number, "expected key \"" + std::string(want.key) + "\" of the " +
                                           (next < 13 ? "GPU" : "compute") +
                                           "-instance block, found \"" + std::string(kv->key) +
                                           "\"");
    }
    HCUDP_RETURN_IF_ERROR(want.parse(line.number, kv->value));
    ++next;
  }
  if (next == 0) return InvalidArgumentError("mig conf: file is empty");
  if (next < fields.size()) {
    return MigLineError(last_line,
                        "file ends before key \"" + std::string(fields[next].key) + "\"");
  }
  if (conf.gi.pci != conf.ci.pci) {
    return InvalidArgumentError("mig conf: GI pci " + conf.gi.pci + " differs from CI pci " +
                                conf.ci.pci);
  }
  if (conf.gi.id != conf.ci.gi_id) {
    return InvalidArgumentError("mig conf: CI gi_id " + std::to_string(conf.ci.gi_id) +
                                " differs from GI id " + std::to_string(conf.gi.id));
  }
  return conf;
}

std::string FormatMigConf(const MigConf& conf) {
  const MigGpuInstanceBlock& g = conf.gi;
  const MigComputeInstanceBlock& c = conf.ci;
  std::string out;
  auto put = [&out](std::string_view key, const std::string& value) {
    out += Pad(key) + value + "\n";
  };
  auto num = [](auto v) { return std::to_string(v); };
  put("pci", g.pci);
  put("id", num(g.id));
  put("pipe_mask", g.pipe_mask);
  put("gpu_slice_mask", g.gpu_slice_mask);
  put("cu_mask", g.cu_mask_lo);
  put("cu_mask", g.cu_mask_hi);
  put("profile_id", num(g.profile_id));
  put("gi_count_max", num(g.gi_count_max));
  put("cu_count", num(g.cu_count));
  put("gpu_slice_count", num(g.gpu_slice_count));
  put("memory_size_MB", num(g.memory_size_mb));
  put("placement_start", num(g.placement_start));
  put("placement_size", num(g.placement_size));
  put("pci", c.pci);
  put("gi_id", num(c.gi_id));
  put("id", num(c.id));
  put("pipe_mask", c.pipe_mask);
  put("gpu_slice_mask", c.gpu_slice_mask);
  put("cu_mask", c.cu_mask_lo);
  put("cu_mask", c.cu_mask_hi);
  put("profile_id", num(c.profile_id));
  put("ci_count_max", num(c.ci_count_max));
  put("cu_count", num(c.cu_count));
  put("gpu_slice_count", num(c.gpu_slice_count));
  put("placement_start", num(c.placement_start));
  put("placement_size", num(c.placement_size));
  put("mig_uuid", c.mig_uuid);
  return out;
}

StatusOr<MigConfName> ParseMigConfFileName(std::string_view file_name) {
  auto bad = [&] {
    return InvalidArgumentError("\"" + std::string(file_name) +
                                "\" is not dev<card>gi<gi>ci<ci>.conf");
  };
  // Reads a run of digits (no leading zero unless "0") at `pos`.
  auto number = [&](size_t* pos, int* out) {
    size_t start = *pos;
    while (*pos < file_name.size() && file_name[*pos] >= '0' && file_name[*pos] <= '9') ++*pos;
    std::string_view digits = file_name.substr(start, *pos - start);
    if (digits.empty() || digits.size() > 6 || (digits.size() > 1 && digits[0] == '0')) {
      return false;
    }
    *out = static_cast<int>(*text::ParseInt(digits));
    return true;
  };
  auto literal = [&](size_t* pos, std::string_view lit) {
    if (file_name.substr(*pos, lit.size()) != lit) return false;
    *pos += lit.size();
    return true;
  };
  MigConfName name;
  size_t pos = 0;
  if (!literal(&pos, "dev") || !number(&pos, &name.card) || !literal(&pos, "gi") ||
      !number(&pos, &name.gi) || !literal(&pos, "ci") || !number(&pos, &name.ci) ||
      !literal(&pos, ".conf") || pos != file_name.size()) {
    return bad();
  }
  return name;
}

std::string MigProfileName(int shader_engines, int gi_slices, int ci_slices,
                           uint64_t memory_size_mb) {
  int se_per_slice = shader_engines / 4;
  std::string tail = std::to_string(se_per_slice * gi_slices) + "g." +
                     std::to_string(memory_size_mb / 1024) + "gb";
  if (ci_slices == gi_slices) return tail;
  return std::to_string(se_per_slice * ci_slices) + "c." + tail;
}

}  // namespace hcudp
