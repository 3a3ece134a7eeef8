#include "hcudp/options.h"

#include <algorithm>
#include <cctype>

#include "hcudp/sim_node.h"

namespace hcudp {
namespace {

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

}  // namespace

StatusOr<Strategy> ParseStrategy(std::string_view text) {
  for (Strategy s : {Strategy::kHcu, Strategy::kVhcu, Strategy::kMig, Strategy::kMixed,
                     Strategy::kHami, Strategy::kDra}) {
    if (text == StrategyName(s)) return s;
  }
  return InvalidArgumentError("strategy " + Quote(text) +
                              " is not one of hcu, vhcu, mig, mixed, hami, dra");
}

std::string_view StrategyName(Strategy strategy) {
  switch (strategy) {
    case Strategy::kHcu: return "hcu";
    case Strategy::kVhcu: return "vhcu";
    case Strategy::kMig: return "mig";
    case Strategy::kMixed: return "mixed";
    case Strategy::kHami: return "hami";
    case Strategy::kDra: return "dra";
  }
  return "mixed";
}

StatusOr<NamingPolicy> ParseNamingPolicy(std::string_view text) {
  if (text == "0") return NamingPolicy::kDefault;
  if (text == "1") return NamingPolicy::kModel;
  if (text == "2") return NamingPolicy::kModelMemoryCu;
  return InvalidArgumentError("policy " + Quote(text) + " is not one of 0, 1, 2");
}

StatusOr<BackendKind> ParseBackendKind(std::string_view text) {
  if (text == "host") return BackendKind::kHost;
  if (text == "sim") return BackendKind::kSim;
  return InvalidArgumentError("backend " + Quote(text) + " is not one of host, sim");
}

std::string_view BackendKindName(BackendKind kind) {
  return kind == BackendKind::kSim ? "sim" : "host";
}

StatusOr<DeviceListStrategy> ParseDeviceListStrategy(std::string_view text) {
  for (DeviceListStrategy s :
       {DeviceListStrategy::kDevices, DeviceListStrategy::kCdi, DeviceListStrategy::kBoth}) {
    if (text == DeviceListStrategyName(s)) return s;
  }
  return InvalidArgumentError("device-list-strategy " + Quote(text) +
                              " is not one of devices, cdi, both");
}

std::string_view DeviceListStrategyName(DeviceListStrategy strategy) {
  switch (strategy) {
    case DeviceListStrategy::kDevices: return "devices";
    case DeviceListStrategy::kCdi: return "cdi";
    case DeviceListStrategy::kBoth: return "both";
  }
  return "devices";
}

StatusOr<LogSeverity> ParseLogSeverity(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  std::string upper(text);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  if (upper == "INFO") return LogSeverity::kInfo;
  if (upper == "WARNING" || upper == "WARN") return LogSeverity::kWarning;
  if (upper == "ERROR") return LogSeverity::kError;
  return InvalidArgumentError("log-severity " + Quote(text) +
                              " is not one of INFO, WARNING, ERROR");
}

std::string EffectiveHostRoot(const Options& options) {
  if (!options.host_root.empty()) return options.host_root;
  if (options.backend == BackendKind::kSim) return DefaultSimHostRoot(options.sim_node_path);
  return "/";
}

}  // namespace hcudp
