// ParseSimNode: the SimNode schema of DESIGN.md §6, strictly. Each section
// has a reader that checks types and ranges; cross-references (a vHCU's card,
// per-card capacity, MIG profiles) are checked where the referring entry is
// read so the error can point at its line.
#include <yaml-cpp/yaml.h>

#include <map>
#include <set>
#include <string>

#include "conf/text_util.h"
#include "hcudp/sim_node.h"
#include "hcudp/vdev_conf.h"
#include "sim/sim_profile.h"
#include "sim/yaml_reader.h"

namespace hcudp {
namespace {

using sim::FieldError;
using sim::YamlMap;

constexpr char kApiVersion[] = "hcudp.hygon.com/v1";
constexpr char kKind[] = "SimNode";
constexpr int64_t kMaxMinor = 1 << 20;
constexpr uint64_t kMaxMemoryMib = uint64_t{1} << 30;  // 1 PiB: a typo, not a card
constexpr int kMaxVhcuId = 1 << 16;

std::string Item(const std::string& list, size_t i) { return list + "[" + std::to_string(i) + "]"; }

// pcieRoot: "pci<domain>:<bus>" in lower-case hex, of the card's own domain
// and a bus at or below the card's (buses behind a root complex are numbered
// after it). Absent: one root complex per domain, pci<domain>:00.
Status ReadPcieRoot(const YAML::Node& node, const YamlMap& m, SimCard* card) {
  const std::string domain = card->bdf.substr(0, 4);
  if (!m.Has("pcieRoot")) {
    card->pcie_root = "pci" + domain + ":00";
    return OkStatus();
  }
  HCUDP_RETURN_IF_ERROR(m.String("pcieRoot", &card->pcie_root));
  const std::string& root = card->pcie_root;
  auto hex = [](const std::string& s) {
    return !s.empty() && s.find_first_not_of("0123456789abcdef") == std::string::npos;
  };
  if (root.size() != 10 || root.compare(0, 3, "pci") != 0 || root[7] != ':' ||
      !hex(root.substr(3, 4)) || !hex(root.substr(8, 2))) {
    return FieldError(m.PathOf("pcieRoot"), node["pcieRoot"],
                      "\"" + root + "\" is not a root complex written pci<domain>:<bus> " +
                          "(lower-case hex, e.g. pci0000:00)");
  }
  if (root.substr(3, 4) != domain || root.substr(8, 2) > card->bdf.substr(5, 2)) {
    return FieldError(m.PathOf("pcieRoot"), node["pcieRoot"],
                      "\"" + root + "\" cannot hold card " + card->bdf +
                          ": a root complex holds buses of its own domain from its bus on");
  }
  return OkStatus();
}

Status ReadCard(const YAML::Node& node, const std::string& path, SimCard* card) {
  HCUDP_ASSIGN_OR_RETURN(
      YamlMap m,
      YamlMap::Open(node, path,
                    {"index", "bdf", "model", "pciDeviceId", "serial", "computeUnits", "memoryMiB",
                     "numaNode", "cardMinor", "renderMinor", "health", "pcieRoot"}));
  HCUDP_RETURN_IF_ERROR(m.Int("index", 0, 1023, &card->index));
  HCUDP_RETURN_IF_ERROR(m.String("bdf", &card->bdf));
  if (!text::IsPciBdf(card->bdf)) {
    return FieldError(m.PathOf("bdf"), node["bdf"],
                      "\"" + card->bdf + "\" is not a lower-case PCI address dddd:bb:dd.f");
  }
  HCUDP_RETURN_IF_ERROR(m.String("model", &card->model));
  std::string device_id;
  HCUDP_RETURN_IF_ERROR(m.String("pciDeviceId", &device_id));
  std::optional<uint64_t> id = text::ParseHex64(device_id);
  if (device_id.size() != 6 || device_id[1] != 'x' || !id) {
    return FieldError(m.PathOf("pciDeviceId"), node["pciDeviceId"],
                      "\"" + device_id + "\" is not a 16-bit id written 0x<4 hex digits>");
  }
  card->pci_device_id = static_cast<uint16_t>(*id);
  HCUDP_RETURN_IF_ERROR(m.String("serial", &card->serial));
  HCUDP_RETURN_IF_ERROR(m.Int("computeUnits", 1, kMaxCuMaskBits, &card->compute_units));
  HCUDP_RETURN_IF_ERROR(m.Uint("memoryMiB", 1, kMaxMemoryMib, &card->memory_mib));
  HCUDP_RETURN_IF_ERROR(m.Int("numaNode", -1, 1023, &card->numa_node));
  HCUDP_RETURN_IF_ERROR(m.Int("cardMinor", 0, kMaxMinor, &card->card_minor));
  HCUDP_RETURN_IF_ERROR(m.Int("renderMinor", 0, kMaxMinor, &card->render_minor));
  std::string health;
  HCUDP_RETURN_IF_ERROR(m.String("health", &health));
  StatusOr<Health> parsed = ParseHealth(health);
  if (!parsed.ok())
    return FieldError(m.PathOf("health"), node["health"], parsed.status().message());
  card->health = *parsed;
  return ReadPcieRoot(node, m, card);
}

// Indices must be 0..N-1 (RSMI and DMI number cards densely); BDFs, serials
// and minors unique.
Status ReadCards(const YamlMap& top, SimNode* node) {
  HCUDP_ASSIGN_OR_RETURN(YAML::Node list, top.Required("cards"));
  HCUDP_RETURN_IF_ERROR(sim::RequireSequence(list, "cards"));
  std::map<std::string, size_t> bdfs, serials;
  std::map<int, size_t> indices, card_minors, render_minors;
  for (size_t i = 0; i < list.size(); ++i) {
    std::string path = Item("cards", i);
    SimCard card;
    HCUDP_RETURN_IF_ERROR(ReadCard(list[i], path, &card));
    auto unique = [&](auto& seen, const auto& value, const char* field) {
      auto [it, inserted] = seen.emplace(value, i);
      if (inserted) return OkStatus();
      return FieldError(path + "." + field, list[i][field],
                        std::string("same ") + field + " as " + Item("cards", it->second));
    };
    HCUDP_RETURN_IF_ERROR(unique(indices, card.index, "index"));
    HCUDP_RETURN_IF_ERROR(unique(bdfs, card.bdf, "bdf"));
    HCUDP_RETURN_IF_ERROR(unique(serials, card.serial, "serial"));
    HCUDP_RETURN_IF_ERROR(unique(card_minors, card.card_minor, "cardMinor"));
    HCUDP_RETURN_IF_ERROR(unique(render_minors, card.render_minor, "renderMinor"));
    node->cards.push_back(card);
  }
  for (size_t i = 0; i < list.size(); ++i) {
    if (node->cards[i].index >= static_cast<int>(list.size())) {
      return FieldError(Item("cards", i) + ".index", list[i]["index"],
                        "index " + std::to_string(node->cards[i].index) + " with " +
                            std::to_string(list.size()) +
                            " cards: indices must be 0..N-1 (RSMI numbers cards densely)");
    }
  }
  std::sort(node->cards.begin(), node->cards.end(),
            [](const SimCard& a, const SimCard& b) { return a.index < b.index; });
  return OkStatus();
}

Status ReadLinkSpec(const YamlMap& m, SimLinkSpec* spec) {
  std::string type;
  HCUDP_RETURN_IF_ERROR(m.String("type", &type));
  StatusOr<LinkType> parsed = ParseLinkType(type);
  if (!parsed.ok() ||
      (*parsed != LinkType::kPcie && *parsed != LinkType::kHsl && *parsed != LinkType::kHyswitch)) {
    return FieldError(m.PathOf("type"), m.node()["type"],
                      "\"" + type + "\" is not one of PCIE, HSL, HYSWITCH");
  }
  spec->type = *parsed;
  HCUDP_RETURN_IF_ERROR(m.Int("hops", 0, 64, &spec->hops));
  return m.Int("weight", 0, 1 << 20, &spec->weight);
}

Status ReadLinks(const YamlMap& top, SimNode* node) {
  if (!top.Has("links")) return OkStatus();
  HCUDP_ASSIGN_OR_RETURN(YamlMap links,
                         YamlMap::Open(top.node()["links"], "links", {"default", "pairs"}));
  if (links.Has("default")) {
    HCUDP_ASSIGN_OR_RETURN(YamlMap d, YamlMap::Open(links.node()["default"], "links.default",
                                                    {"type", "hops", "weight"}));
    HCUDP_RETURN_IF_ERROR(ReadLinkSpec(d, &node->link_default));
  }
  if (!links.Has("pairs")) return OkStatus();
  YAML::Node list = links.node()["pairs"];
  HCUDP_RETURN_IF_ERROR(sim::RequireSequence(list, "links.pairs"));
  std::map<std::pair<int, int>, size_t> seen;
  for (size_t i = 0; i < list.size(); ++i) {
    std::string path = Item("links.pairs", i);
    HCUDP_ASSIGN_OR_RETURN(YamlMap m,
                           YamlMap::Open(list[i], path, {"a", "b", "type", "hops", "weight"}));
    SimLinkPair pair;
    HCUDP_RETURN_IF_ERROR(m.Int("a", 0, 1023, &pair.a));
    HCUDP_RETURN_IF_ERROR(m.Int("b", 0, 1023, &pair.b));
    for (const char* end : {"a", "b"}) {
      int card = std::string(end) == "a" ? pair.a : pair.b;
      if (node->FindCard(card) == nullptr) {
        return FieldError(m.PathOf(end), list[i][end],
                          "card " + std::to_string(card) + " is not in cards");
      }
    }
    if (pair.a == pair.b)
      return FieldError(m.PathOf("b"), list[i]["b"], "a card has no link to itself");
    HCUDP_RETURN_IF_ERROR(ReadLinkSpec(m, &pair.spec));
    auto [it, inserted] = seen.emplace(std::minmax(pair.a, pair.b), i);
    if (!inserted) {
      return FieldError(path, list[i], "same pair as " + Item("links.pairs", it->second));
    }
    node->link_pairs.push_back(pair);
  }
  return OkStatus();
}

// Per-card capacity: count, CUs and memory of the card's vHCUs.
struct CardUse {
  int count = 0;
  int compute_units = 0;
  uint64_t memory_mib = 0;
  std::set<int> pipes;
};

Status ReadVhcus(const YamlMap& top, SimNode* node) {
  if (!top.Has("vhcus")) return OkStatus();
  YAML::Node list = top.node()["vhcus"];
  HCUDP_RETURN_IF_ERROR(sim::RequireSequence(list, "vhcus"));
  std::set<int> ids;
  std::map<int, CardUse> use;
  for (size_t i = 0; i < list.size(); ++i) {
    std::string path = Item("vhcus", i);
    HCUDP_ASSIGN_OR_RETURN(
        YamlMap m,
        YamlMap::Open(list[i], path, {"id", "card", "computeUnits", "memoryMiB", "pipeId"}));
    SimVhcu v;
    HCUDP_RETURN_IF_ERROR(m.Int("id", 0, kMaxVhcuId, &v.id));
    if (!ids.insert(v.id).second) {
      return FieldError(m.PathOf("id"), list[i]["id"],
                        "vHCU id " + std::to_string(v.id) + " is given twice");
    }
    HCUDP_RETURN_IF_ERROR(m.Int("card", 0, 1023, &v.card));
    const SimCard* card = node->FindCard(v.card);
    if (card == nullptr) {
      return FieldError(m.PathOf("card"), list[i]["card"],
                        "card " + std::to_string(v.card) + " is not in cards");
    }
    HCUDP_RETURN_IF_ERROR(m.Int("computeUnits", 1, card->compute_units, &v.compute_units));
    HCUDP_RETURN_IF_ERROR(m.Uint("memoryMiB", 1, card->memory_mib, &v.memory_mib));
    HCUDP_RETURN_IF_ERROR(m.Int("pipeId", 0, kMaxPipeId, &v.pipe_id));
    CardUse& u = use[v.card];
    std::string on_card = " on card " + std::to_string(v.card);
    if (!u.pipes.insert(v.pipe_id).second) {
      return FieldError(m.PathOf("pipeId"), list[i]["pipeId"],
                        "pipe id " + std::to_string(v.pipe_id) + " is already used" + on_card);
    }
    if (++u.count > node->max_vhcus_per_card) {
      return FieldError(path, list[i],
                        "more than maxVhcusPerCard (" + std::to_string(node->max_vhcus_per_card) +
                            ") vHCUs" + on_card);
    }
    u.compute_units += v.compute_units;
    if (u.compute_units > card->compute_units) {
      return FieldError(m.PathOf("computeUnits"), list[i]["computeUnits"],
                        "vHCUs" + on_card + " need " + std::to_string(u.compute_units) +
                            " CUs, the card has " + std::to_string(card->compute_units));
    }
    u.memory_mib += v.memory_mib;
    if (u.memory_mib > card->memory_mib) {
      return FieldError(m.PathOf("memoryMiB"), list[i]["memoryMiB"],
                        "vHCUs" + on_card + " need " + std::to_string(u.memory_mib) +
                            " MiB, the card has " + std::to_string(card->memory_mib));
    }
    node->vhcus.push_back(v);
  }
  std::sort(node->vhcus.begin(), node->vhcus.end(),
            [](const SimVhcu& a, const SimVhcu& b) { return a.id < b.id; });
  return OkStatus();
}

Status ReadMigInstance(const YAML::Node& item, const std::string& path, const SimNode& node,
                       SimMigInstance* mi) {
  HCUDP_ASSIGN_OR_RETURN(YamlMap m, YamlMap::Open(item, path,
                                                  {"card", "gi", "ci", "profile", "computeUnits",
                                                   "memoryMiB", "uuid"}));
  HCUDP_RETURN_IF_ERROR(m.Int("card", 0, 1023, &mi->card));
  const SimCard* card = node.FindCard(mi->card);
  if (card == nullptr) {
    return FieldError(m.PathOf("card"), item["card"],
                      "card " + std::to_string(mi->card) + " is not in cards");
  }
  HCUDP_RETURN_IF_ERROR(m.Int("gi", 0, 255, &mi->gi));
  HCUDP_RETURN_IF_ERROR(m.Int("ci", 0, 255, &mi->ci));
  HCUDP_RETURN_IF_ERROR(m.String("profile", &mi->profile));
  HCUDP_RETURN_IF_ERROR(m.Int("computeUnits", 1, card->compute_units, &mi->compute_units));
  HCUDP_RETURN_IF_ERROR(m.Uint("memoryMiB", 1, card->memory_mib, &mi->memory_mib));
  StatusOr<sim::MigProfile> profile = sim::ParseMigProfile(mi->profile);
  if (!profile.ok())
    return FieldError(m.PathOf("profile"), item["profile"], profile.status().message());
  if (profile->memory_gib != mi->memory_mib / 1024) {
    return FieldError(m.PathOf("profile"), item["profile"],
                      "\"" + mi->profile + "\" says " + std::to_string(profile->memory_gib) +
                          "gb but memoryMiB " + std::to_string(mi->memory_mib) + " gives " +
                          std::to_string(mi->memory_mib / 1024) + "gb (floor of MiB/1024)");
  }
  HCUDP_RETURN_IF_ERROR(m.String("uuid", &mi->uuid));
  if (!text::IsUuid(mi->uuid)) {
    return FieldError(m.PathOf("uuid"), item["uuid"],
                      "\"" + mi->uuid + "\" is not a lower-case 36-character UUID");
  }
  return OkStatus();
}

Status ReadMig(const YamlMap& top, SimNode* node) {
  if (!top.Has("mig")) return OkStatus();
  HCUDP_ASSIGN_OR_RETURN(YamlMap mig,
                         YamlMap::Open(top.node()["mig"], "mig", {"enabled", "instances"}));
  HCUDP_RETURN_IF_ERROR(mig.Bool("enabled", &node->mig_enabled));
  if (node->mig_enabled && !node->vhcus.empty()) {
    return FieldError("mig.enabled", mig.node()["enabled"],
                      "MIG and vHCUs cannot be enabled together on one node");
  }
  if (!mig.Has("instances")) return OkStatus();
  YAML::Node list = mig.node()["instances"];
  HCUDP_RETURN_IF_ERROR(sim::RequireSequence(list, "mig.instances"));
  std::map<std::tuple<int, int, int>, size_t> names;
  std::map<std::string, size_t> uuids;
  std::map<std::pair<int, int>, int> gi_slices;  // (card, gi) -> slices
  std::map<int, int> card_slices;
  for (size_t i = 0; i < list.size(); ++i) {
    std::string path = Item("mig.instances", i);
    SimMigInstance mi;
    HCUDP_RETURN_IF_ERROR(ReadMigInstance(list[i], path, *node, &mi));
    if (auto [it, ok] = names.emplace(std::make_tuple(mi.card, mi.gi, mi.ci), i); !ok) {
      return FieldError(path + ".ci", list[i]["ci"],
                        "same card/gi/ci as " + Item("mig.instances", it->second));
    }
    if (auto [it, ok] = uuids.emplace(mi.uuid, i); !ok) {
      return FieldError(path + ".uuid", list[i]["uuid"],
                        "same uuid as " + Item("mig.instances", it->second));
    }
    sim::MigProfile profile = *sim::ParseMigProfile(mi.profile);
    auto [gi, new_gi] = gi_slices.emplace(std::make_pair(mi.card, mi.gi), profile.gi_slices);
    if (!new_gi && gi->second != profile.gi_slices) {
      return FieldError(path + ".profile", list[i]["profile"],
                        "GI " + std::to_string(mi.gi) + " of card " + std::to_string(mi.card) +
                            " has another size in an earlier instance");
    }
    if (new_gi && (card_slices[mi.card] += profile.gi_slices) > sim::kMigSlicesPerCard) {
      return FieldError(path + ".profile", list[i]["profile"],
                        "card " + std::to_string(mi.card) + " has only " +
                            std::to_string(sim::kMigSlicesPerCard) + " MIG slices");
    }
    node->mig_instances.push_back(mi);
  }
  return OkStatus();
}

Status ReadHeader(const YamlMap& top, SimNode* node) {
  HCUDP_RETURN_IF_ERROR(top.String("apiVersion", &node->api_version));
  if (node->api_version != kApiVersion) {
    return FieldError("apiVersion", top.node()["apiVersion"],
                      "must be " + std::string(kApiVersion) + ", is " + node->api_version);
  }
  HCUDP_RETURN_IF_ERROR(top.String("kind", &node->kind));
  if (node->kind != kKind) {
    return FieldError("kind", top.node()["kind"], "must be SimNode, is " + node->kind);
  }
  HCUDP_RETURN_IF_ERROR(top.String("name", &node->name));
  HCUDP_RETURN_IF_ERROR(top.String("driverVersion", &node->driver_version));
  if (top.Has("maxVhcusPerCard")) {
    HCUDP_RETURN_IF_ERROR(top.Int("maxVhcusPerCard", 1, 200, &node->max_vhcus_per_card));
  }
  return OkStatus();
}

StatusOr<SimNode> ParseTree(const YAML::Node& root) {
  if (!root.IsDefined() || root.IsNull()) {
    return InvalidArgumentError("SimNode: line 1: the document is empty");
  }
  HCUDP_ASSIGN_OR_RETURN(
      YamlMap top, YamlMap::Open(root, "",
                                 {"apiVersion", "kind", "name", "driverVersion", "cards", "links",
                                  "maxVhcusPerCard", "vhcus", "mig"}));
  SimNode node;
  HCUDP_RETURN_IF_ERROR(ReadHeader(top, &node));
  HCUDP_RETURN_IF_ERROR(ReadCards(top, &node));
  HCUDP_RETURN_IF_ERROR(ReadLinks(top, &node));
  HCUDP_RETURN_IF_ERROR(ReadVhcus(top, &node));
  HCUDP_RETURN_IF_ERROR(ReadMig(top, &node));
  return node;
}

}  // namespace

StatusOr<SimNode> ParseSimNode(std::string_view yaml) {
  // yaml-cpp reports every problem by throwing; nothing may escape.
  try {
    YAML::Node root = YAML::Load(std::string(yaml));
    return ParseTree(root);
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError("SimNode: line " + std::to_string(e.mark.line + 1) +
                                ": not valid YAML: " + e.msg);
  } catch (const std::exception& e) {
    return InvalidArgumentError(std::string("SimNode: cannot read the YAML: ") + e.what());
  }
}

}  // namespace hcudp
