// The node label set and the features.d file (hcudp/node_labels.h).
#include <algorithm>
#include <set>
#include <string>

#include "hcudp/hami/rfc3339.h"
#include "hcudp/node_labels.h"

namespace hcudp {
namespace {

constexpr size_t kMaxLabelValue = 63;

// ASCII only, whatever the process's locale (the label grammar's [A-Za-z0-9]).
bool IsAsciiAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
bool IsValueChar(char c) { return IsAsciiAlnum(c) || c == '-' || c == '_' || c == '.'; }

std::string TrimEnds(std::string s) {
  size_t b = 0;
  while (b < s.size() && !IsAsciiAlnum(s[b])) ++b;
  size_t e = s.size();
  while (e > b && !IsAsciiAlnum(s[e - 1])) --e;
  return s.substr(b, e - b);
}

// The one value every card shares, or "" when they differ. A card whose
// value is unknown ("": a card awaiting a reset has no compute-unit count)
// is left out, so that health does not flap the labels.
template <typename F>
std::string Common(const std::vector<Card>& cards, F value) {
  std::string common;
  for (const Card& c : cards) {
    std::string v = value(c);
    if (v.empty()) continue;
    if (common.empty()) {
      common = std::move(v);
    } else if (v != common) {
      return "";
    }
  }
  return common;
}

// "64G": VRAM in GiB rounded up, as k8s-hcu-label-node writes it.
std::string VramText(const Card& c) {
  if (c.memory_bytes == 0) return "";
  return std::to_string((c.memory_bytes + kGiB - 1) / kGiB) + "G";
}

void Put(NodeLabels& labels, const std::string& key, const std::string& raw) {
  std::string value = SanitizeLabelValue(raw);
  if (!value.empty()) labels[key] = value;
}

}  // namespace

StatusOr<NodeLabelMode> ParseNodeLabelMode(std::string_view text) {
  if (text == "off") return NodeLabelMode::kOff;
  if (text == "nfd") return NodeLabelMode::kNfd;
  if (text == "node") return NodeLabelMode::kNode;
  return InvalidArgumentError("node label mode \"" + std::string(text) +
                              "\": accepted values are off, nfd, node");
}

std::string_view NodeLabelModeName(NodeLabelMode mode) {
  switch (mode) {
    case NodeLabelMode::kOff:
      return "off";
    case NodeLabelMode::kNfd:
      return "nfd";
    case NodeLabelMode::kNode:
      return "node";
  }
  return "off";
}

std::string SanitizeLabelValue(std::string_view raw) {
  std::string out;
  for (char c : raw) {
    if (c == ' ' || c == '\t') {
      if (!out.empty() && out.back() != '-') out.push_back('-');
    } else if (IsValueChar(c)) {
      out.push_back(c);
    }
  }
  out = TrimEnds(std::move(out));
  if (out.size() > kMaxLabelValue) out = TrimEnds(out.substr(0, kMaxLabelValue));
  return out;
}

bool IsValidLabelValue(std::string_view value) {
  if (value.empty()) return true;
  if (value.size() > kMaxLabelValue) return false;
  if (!IsAsciiAlnum(value.front()) || !IsAsciiAlnum(value.back())) return false;
  return std::all_of(value.begin(), value.end(), IsValueChar);
}

NodeLabels ComputeNodeLabels(const NodeInventory& inventory, Strategy strategy) {
  NodeLabels labels;
  const std::vector<Card>& cards = inventory.cards;
  if (cards.empty()) return labels;
  labels[kHcuLabel] = "true";
  labels["hygon.com/hcu.count"] = std::to_string(cards.size());
  Put(labels, "hygon.com/hcu.strategy", std::string(StrategyName(strategy)));
  labels["hygon.com/hcu.mig.capable"] = inventory.mig_enabled ? "true" : "false";
  Put(labels, "hygon.com/hcu.driver-version", inventory.driver_version);
  Put(labels, "hygon.com/hcu.name", Common(cards, [](const Card& c) { return c.model; }));
  Put(labels, "hygon.com/hcu.cu-count", Common(cards, [](const Card& c) {
        return c.compute_units > 0 ? std::to_string(c.compute_units) : "";
      }));
  Put(labels, "hygon.com/hcu.vram", Common(cards, VramText));
  Put(labels, "hygon.com/hcu.memory", Common(cards, [](const Card& c) {
        return c.memory_mib() > 0 ? std::to_string(c.memory_mib()) : "";
      }));
  std::set<std::string> models;
  for (const Card& c : cards) {
    std::string m = SanitizeLabelValue(c.model);
    if (!m.empty()) models.insert(m);
  }
  if (models.size() > 1) {
    std::string joined;
    for (const std::string& m : models) joined += (joined.empty() ? "" : ".") + m;
    Put(labels, "hygon.com/hcu.models", joined);
  }
  return labels;
}

const std::vector<std::string>& ManagedNodeLabelKeys() {
  static const std::vector<std::string> keys = {
      "hygon.com/hcu.count",  "hygon.com/hcu.cu-count",    "hygon.com/hcu.driver-version",
      "hygon.com/hcu.memory", "hygon.com/hcu.mig.capable", "hygon.com/hcu.models",
      "hygon.com/hcu.name",   "hygon.com/hcu.strategy",    "hygon.com/hcu.vram",
  };
  return keys;
}

std::string RenderNfdFeatureFile(const NodeLabels& labels, Clock::WallTime expiry) {
  std::string out =
      "# Written by hcu-device-plugin (--node-labels=nfd); rewritten while it runs.\n";
  auto hcu = labels.find(kHcuLabel);
  if (hcu != labels.end()) {
    out += "# Never expires: the plugin's DaemonSet is placed by it.\n";
    out += hcu->first + "=" + hcu->second + "\n";
  }
  out += "# +expiry-time=" +
         hami::FormatRfc3339Utc(std::chrono::time_point_cast<std::chrono::seconds>(expiry)) + "\n";
  for (const auto& [key, value] : labels) {
    if (key == kHcuLabel) continue;
    out += key + "=" + value + "\n";
  }
  return out;
}

}  // namespace hcudp
