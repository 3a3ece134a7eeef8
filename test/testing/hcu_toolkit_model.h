// A test oracle: which cards Hygon's container runtime (hcu-container-toolkit,
// often the node's default runtime) injects into a container, from the
// container's environment, by its documented rule (reference/hcu-hardware.md
// §2.6, DESIGN §4.5):
//   HCU_VISIBLE_DEVICES (else NVIDIA_VISIBLE_DEVICES) = void -> nothing;
//     none -> no card; all -> every card; a list -> those cards;
//   neither set -> every card if the image sets ROCM_VERSION (DTK images
//     do), else nothing.
// An empty value counts as unset. Tests apply it to what our code gives a
// container: every edit must leave the toolkit injecting nothing.
#ifndef HCUDP_TEST_TESTING_HCU_TOOLKIT_MODEL_H_
#define HCUDP_TEST_TESTING_HCU_TOOLKIT_MODEL_H_

#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace hcudp::testing {

enum class ToolkitInjects { kNothing, kNoCard, kAllCards, kListedCards };

inline const char* ToolkitInjectsName(ToolkitInjects v) {
  switch (v) {
    case ToolkitInjects::kNothing:
      return "nothing";
    case ToolkitInjects::kNoCard:
      return "no card";
    case ToolkitInjects::kAllCards:
      return "all cards";
    case ToolkitInjects::kListedCards:
      return "listed cards";
  }
  return "?";
}

inline std::ostream& operator<<(std::ostream& os, ToolkitInjects v) {
  return os << ToolkitInjectsName(v);
}

inline ToolkitInjects HcuToolkitDecision(const std::map<std::string, std::string>& env) {
  auto value = [&env](const char* key) -> const std::string* {
    auto it = env.find(key);
    return it == env.end() || it->second.empty() ? nullptr : &it->second;
  };
  const std::string* visible = value("HCU_VISIBLE_DEVICES");
  if (visible == nullptr) visible = value("NVIDIA_VISIBLE_DEVICES");
  if (visible == nullptr) {
    return value("ROCM_VERSION") != nullptr ? ToolkitInjects::kAllCards : ToolkitInjects::kNothing;
  }
  if (*visible == "void") return ToolkitInjects::kNothing;
  if (*visible == "none") return ToolkitInjects::kNoCard;
  if (*visible == "all") return ToolkitInjects::kAllCards;
  return ToolkitInjects::kListedCards;
}

// A DTK image's environment with `edits` applied in order (later wins), as
// the runtime assembles the container's environment.
inline std::map<std::string, std::string> DtkContainerEnv(
    const std::vector<std::pair<std::string, std::string>>& edits) {
  std::map<std::string, std::string> env = {{"ROCM_VERSION", "6.3.0"},
                                            {"PATH", "/usr/local/bin:/usr/bin"}};
  for (const auto& [k, v] : edits) env[k] = v;
  return env;
}

}  // namespace hcudp::testing

#endif  // HCUDP_TEST_TESTING_HCU_TOOLKIT_MODEL_H_
