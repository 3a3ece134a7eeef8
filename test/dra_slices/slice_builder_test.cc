// The pool builder on the shipped SimNodes, discovered through the real sim
// backend: device names, attributes, capacities, vHCU/MIG devices, taints,
// and the 128/64 split.
#include <rapidjson/document.h>

#include <boost/test/unit_test.hpp>
#include <map>
#include <set>
#include <string>

#include "dra_slices/many_cards.h"
#include "dra_slices/sim_inventory.h"
#include "hcudp/backend.h"
#include "hcudp/dra/slices.h"
#include "testing/testutil.h"

namespace hcudp::dra {
namespace {

using testing::DiscoverSimNode;

PoolPlan Plan(const NodeInventory& inv, bool taints = true) {
  SliceParams p;
  p.node_name = "node-a";
  p.taints_supported = taints;
  auto plan = BuildPoolPlan(inv, p);
  BOOST_REQUIRE_MESSAGE(plan.ok(), plan.status().ToString());
  return *plan;
}

rapidjson::Document Json(const std::string& text) {
  rapidjson::Document d;
  d.Parse(text.c_str());
  BOOST_REQUIRE_MESSAGE(!d.HasParseError(), text);
  return d;
}

const PoolDevice* Find(const PoolPlan& plan, const std::string& name) {
  for (const PoolDevice& d : plan.devices) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

std::string Attr(const rapidjson::Value& dev, const char* key, const char* type) {
  const rapidjson::Value& a = dev["attributes"][key][type];
  return a.IsString() ? a.GetString() : std::to_string(a.GetInt64());
}

void CheckSplit(const PoolPlan& plan) {
  std::vector<int> counts(plan.slice_count, 0);
  std::vector<bool> tainted(plan.slice_count, false);
  std::set<std::string> names;
  for (const PoolDevice& d : plan.devices) {
    BOOST_REQUIRE(d.slice >= 0 && d.slice < plan.slice_count);
    ++counts[d.slice];
    tainted[d.slice] = tainted[d.slice] || d.tainted;
    BOOST_TEST(names.insert(d.name).second);
  }
  for (int s = 0; s < plan.slice_count; ++s) {
    BOOST_TEST_CONTEXT("slice " << s) {
      BOOST_TEST(counts[s] > 0);
      BOOST_TEST(counts[s] <= (tainted[s] ? 64 : 128));
      auto obj = Json(SliceObjectJson(plan, s, 7));
      BOOST_TEST(obj["spec"]["devices"].Size() == static_cast<unsigned>(counts[s]));
      BOOST_TEST(obj["spec"]["pool"]["resourceSliceCount"].GetInt() == plan.slice_count);
      BOOST_TEST(obj["spec"]["pool"]["generation"].GetInt() == 7);
    }
  }
}

BOOST_AUTO_TEST_SUITE(slice_builder)

BOOST_AUTO_TEST_CASE(probe_order_node_is_published_in_pci_order_without_the_split_card) {
  NodeInventory inv = DiscoverSimNode("demo/nodes/k100ai-8-probe-order.yaml");
  PoolPlan plan = Plan(inv);
  // Card index 2 is 0000:e9:00.0, carrying vdev0 and vdev1: offered as two
  // vHCUs, not whole.
  std::vector<std::string> names;
  for (const PoolDevice& d : plan.devices) names.push_back(d.name);
  std::vector<std::string> want = {"hcu-0000-09-00-0", "hcu-0000-29-00-0", "hcu-0000-49-00-0",
                                   "hcu-0000-69-00-0", "hcu-0000-89-00-0", "hcu-0000-a9-00-0",
                                   "hcu-0000-c9-00-0"};
  const Card* split = inv.FindCard(2);
  BOOST_REQUIRE(split != nullptr);
  BOOST_REQUIRE(split->bdf == "0000:e9:00.0");
  for (const Vhcu& v : inv.vhcus) want.push_back("hcu-0000-e9-00-0-vdev" + std::to_string(v.id));
  BOOST_TEST(names == want, boost::test_tools::per_element());
  BOOST_TEST(Find(plan, "hcu-0000-e9-00-0") == nullptr);
  BOOST_TEST(plan.slice_count == 1);
  BOOST_TEST(!plan.left_out.empty());

  // Each card's attributes come from that card, not from its index's PCI rank.
  for (const Card& c : inv.cards) {
    const PoolDevice* d = Find(plan, CardDeviceName(c.bdf));
    if (c.index == 2) continue;
    BOOST_REQUIRE(d != nullptr);
    auto dev = Json(d->json);
    BOOST_TEST_CONTEXT(c.bdf) {
      BOOST_TEST(Attr(dev, "resource.kubernetes.io/pciBusID", "string") == c.bdf);
      BOOST_TEST(Attr(dev, "resource.kubernetes.io/numaNode", "int") ==
                 std::to_string(c.numa_node));
      BOOST_TEST(Attr(dev, "cardIndex", "int") == std::to_string(c.index));
      BOOST_TEST(Attr(dev, "uuid", "string") == c.serial);
      BOOST_TEST(Attr(dev, "type", "string") == "hcu");
      BOOST_TEST(Attr(dev, "productName", "string") == "K100_AI");
      BOOST_TEST(dev["attributes"]["architecture"].HasMember("string"));
      BOOST_TEST(dev["attributes"]["brand"].HasMember("string"));
      BOOST_TEST(Attr(dev, "driverVersion", "version") == inv.driver_version);
      BOOST_TEST(dev["allowMultipleAllocations"].GetBool());
      const auto& cap = dev["capacity"];
      BOOST_TEST(std::string(cap["cores"]["value"].GetString()) == "120");
      BOOST_TEST(std::string(cap["memory"]["value"].GetString()) == "65520Mi");
      BOOST_TEST(std::string(cap["memory"]["requestPolicy"]["validRange"]["step"].GetString()) ==
                 "1Mi");
      BOOST_TEST(std::string(cap["slices"]["value"].GetString()) == "4");
      BOOST_TEST(std::string(cap["slices"]["requestPolicy"]["default"].GetString()) == "1");
      BOOST_TEST(!dev.HasMember("taints"));
    }
  }
  for (const Vhcu& v : inv.vhcus) {
    const PoolDevice* d = Find(plan, "hcu-0000-e9-00-0-vdev" + std::to_string(v.id));
    BOOST_REQUIRE(d != nullptr);
    auto dev = Json(d->json);
    BOOST_TEST(Attr(dev, "type", "string") == "vhcu");
    BOOST_TEST(Attr(dev, "parentPciBusID", "string") == "0000:e9:00.0");
    BOOST_TEST(Attr(dev, "parentDevice", "string") == "hcu-0000-e9-00-0");
    BOOST_TEST(Attr(dev, "computeUnits", "int") == std::to_string(v.compute_units));
    BOOST_TEST(!dev.HasMember("allowMultipleAllocations"));
    BOOST_TEST(!dev["attributes"].HasMember("resource.kubernetes.io/pciBusID"));
  }
}

BOOST_AUTO_TEST_CASE(hsl_islands_group_linked_cards_numbered_by_lowest_bdf) {
  NodeInventory inv = DiscoverSimNode("test/fixtures/two-islands.yaml");
  PoolPlan plan = Plan(inv);
  BOOST_REQUIRE(plan.devices.size() == 8u);
  for (const PoolDevice& d : plan.devices) {
    auto dev = Json(d.json);
    const int want = d.card_bdf < "0000:89:00.0" ? 0 : 1;
    BOOST_TEST(Attr(dev, "hslIsland", "int") == std::to_string(want), d.name);
  }
  // A card with no HSL link is an island of its own, numbered by BDF, not
  // by index: index 1 has the lowest bus.
  NodeInventory lone = ManyCards(3);
  std::vector<int> islands = HslIslands(lone);
  BOOST_TEST((islands == std::vector<int>{1, 0, 2}));
}

BOOST_AUTO_TEST_CASE(mig_instances_are_devices_naming_their_parent) {
  NodeInventory inv = DiscoverSimNode("demo/nodes/bw-mig.yaml");
  BOOST_REQUIRE(inv.mig_enabled);
  BOOST_REQUIRE(!inv.mig_instances.empty());
  PoolPlan plan = Plan(inv);
  BOOST_TEST(plan.devices.size() == inv.mig_instances.size());
  for (const MigInstance& m : inv.mig_instances) {
    const std::string name = CardDeviceName(m.card_bdf) + "-mig-" + std::to_string(m.gpu_instance) +
                             "-" + std::to_string(m.compute_instance);
    const PoolDevice* d = Find(plan, name);
    BOOST_REQUIRE_MESSAGE(d != nullptr, name);
    auto dev = Json(d->json);
    BOOST_TEST(Attr(dev, "type", "string") == "mig");
    BOOST_TEST(Attr(dev, "uuid", "string") == m.uuid);
    BOOST_TEST(Attr(dev, "parentPciBusID", "string") == m.card_bdf);
    BOOST_TEST(Attr(dev, "migProfile", "string") == m.profile);
    BOOST_TEST(Find(plan, CardDeviceName(m.card_bdf)) == nullptr);
  }
}

BOOST_AUTO_TEST_CASE(unhealthy_card_is_tainted_or_left_out) {
  NodeInventory inv = DiscoverSimNode("demo/nodes/k100ai-8-probe-order.yaml");
  inv.cards[0].health = Health::kUnhealthy;  // 0000:69:00.0
  inv.cards[2].health = Health::kUnhealthy;  // 0000:e9:00.0, carrying the vHCUs
  PoolPlan plan = Plan(inv);
  BOOST_TEST(plan.uses_taints);
  const PoolDevice* bad = Find(plan, "hcu-0000-69-00-0");
  BOOST_REQUIRE(bad != nullptr);
  auto dev = Json(bad->json);
  BOOST_REQUIRE(dev.HasMember("taints"));
  BOOST_TEST(std::string(dev["taints"][0]["key"].GetString()) == "dra.hygon.com/unhealthy");
  BOOST_TEST(std::string(dev["taints"][0]["effect"].GetString()) == "NoSchedule");
  for (const PoolDevice& d : plan.devices) {
    BOOST_TEST(d.tainted == (d.card_bdf == "0000:69:00.0" || d.card_bdf == "0000:e9:00.0"), d.name);
  }
  PoolPlan fallback = Plan(inv, /*taints=*/false);
  BOOST_TEST(!fallback.uses_taints);
  for (const PoolDevice& d : fallback.devices) {
    BOOST_TEST(d.card_bdf != "0000:69:00.0");
    BOOST_TEST(d.card_bdf != "0000:e9:00.0");
    BOOST_TEST(!Json(d.json).HasMember("taints"));
  }
  BOOST_TEST(fallback.devices.size() == 6u);
}

BOOST_AUTO_TEST_CASE(split_at_128_and_at_64_with_taints) {
  BOOST_TEST(Plan(ManyCards(128)).slice_count == 1);
  PoolPlan p129 = Plan(ManyCards(129));
  BOOST_TEST(p129.slice_count == 2);
  CheckSplit(p129);
  PoolPlan p300 = Plan(ManyCards(300));
  BOOST_TEST(p300.slice_count == 3);
  CheckSplit(p300);

  NodeInventory tainted = ManyCards(130);
  tainted.cards[5].health = Health::kUnhealthy;
  PoolPlan t = Plan(tainted);
  CheckSplit(t);
  // The tainted card's slice holds at most 64; the rest may hold 128.
  BOOST_TEST(t.slice_count == 2);
  BOOST_TEST(t.devices[5].slice == 0);

  NodeInventory all_bad = ManyCards(129);
  for (Card& c : all_bad.cards) c.health = Health::kUnhealthy;
  PoolPlan b = Plan(all_bad);
  BOOST_TEST(b.slice_count == 3);  // 64 + 64 + 1
  CheckSplit(b);

  PoolPlan empty = Plan(NodeInventory{});
  BOOST_TEST(empty.slice_count == 1);
  BOOST_TEST(Json(SliceObjectJson(empty, 0, 1))["spec"]["devices"].Size() == 0u);
}

BOOST_AUTO_TEST_CASE(slice_object_has_the_v1_fields) {
  SliceParams p;
  p.node_name = "node-a";
  p.node_uid = "uid-1";
  auto plan = BuildPoolPlan(ManyCards(2), p);
  BOOST_REQUIRE(plan.ok());
  auto obj = Json(SliceObjectJson(*plan, 0, 3));
  BOOST_TEST(std::string(obj["apiVersion"].GetString()) == "resource.k8s.io/v1");
  BOOST_TEST(std::string(obj["kind"].GetString()) == "ResourceSlice");
  BOOST_TEST(std::string(obj["metadata"]["generateName"].GetString()) == "node-a-dra.hygon.com-");
  BOOST_TEST(std::string(obj["metadata"]["ownerReferences"][0]["uid"].GetString()) == "uid-1");
  BOOST_TEST(std::string(obj["spec"]["driver"].GetString()) == "dra.hygon.com");
  BOOST_TEST(std::string(obj["spec"]["nodeName"].GetString()) == "node-a");
  BOOST_TEST(std::string(obj["spec"]["pool"]["name"].GetString()) == "node-a");
  auto list = Json(SliceListJson(*plan, 3));
  BOOST_TEST(list["items"].Size() == 1u);
}

BOOST_AUTO_TEST_CASE(bad_names_are_refused_naming_them) {
  SliceParams p;
  p.node_name = "Node_A";
  auto plan = BuildPoolPlan(ManyCards(1), p);
  BOOST_REQUIRE(!plan.ok());
  BOOST_TEST(IsInputError(plan.status()));
  BOOST_TEST(plan.status().message().find("Node_A") != std::string::npos);
  p.node_name = "ok";
  p.max_vhcus_per_card = 0;
  BOOST_TEST(!BuildPoolPlan(ManyCards(1), p).ok());
  NodeInventory odd = ManyCards(1);
  odd.cards[0].bdf = "0000:ZZ:00.0";
  p.max_vhcus_per_card = 4;
  auto bad = BuildPoolPlan(odd, p);
  BOOST_REQUIRE(!bad.ok());
  BOOST_TEST(bad.status().message().find("0000:ZZ:00.0") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(quantities_are_canonical) {
  BOOST_TEST(BinaryQuantity(65520 * kMiB) == "65520Mi");
  BOOST_TEST(BinaryQuantity(64 * kGiB) == "64Gi");
  BOOST_TEST(BinaryQuantity(1536) == "1536");  // 1.5Ki is not an integer: no suffix
  BOOST_TEST(BinaryQuantity(2048) == "2Ki");
  BOOST_TEST(BinaryQuantity(1000) == "1k");  // below 1024: decimal
  BOOST_TEST(DecimalQuantity(120) == "120");
  BOOST_TEST(DecimalQuantity(2000000) == "2M");
  BOOST_TEST(DecimalQuantity(0) == "0");
}

// resource.kubernetes.io/pcieRoot on every whole card, vHCU and MIG device,
// as "pci<domain>:<bus>" of the root complex the card hangs from: the shipped
// nodes' roots, found by the real code path from the sysfs the sim renders.
BOOST_AUTO_TEST_CASE(every_device_carries_the_pcie_root_of_its_card) {
  const std::map<std::string, std::map<std::string, std::string>> roots = {
      {"demo/nodes/z100l-mixed.yaml",
       {{"0000:0b:00.0", "pci0000:00"},
        {"0000:0e:00.0", "pci0000:00"},
        {"0000:8b:00.0", "pci0000:80"},
        {"0000:8e:00.0", "pci0000:80"}}},
      {"demo/nodes/bw-mig.yaml",
       {{"0000:09:00.0", "pci0000:00"},
        {"0000:39:00.0", "pci0000:30"},
        {"0000:89:00.0", "pci0000:80"},
        {"0000:b9:00.0", "pci0000:b0"}}},
      {"demo/nodes/k100ai-8.yaml",
       {{"0000:09:00.0", "pci0000:00"}, {"0000:e9:00.0", "pci0000:e0"}}}};
  for (const auto& [node, want] : roots) {
    NodeInventory inv = DiscoverSimNode(node);
    PoolPlan plan = Plan(inv);
    std::set<std::string> types;
    for (const PoolDevice& d : plan.devices) {
      BOOST_TEST_CONTEXT(node << " " << d.name) {
        auto dev = Json(d.json);
        const std::string type = Attr(dev, "type", "string");
        types.insert(type);
        const std::string bdf = Attr(
            dev, type == "hcu" ? "resource.kubernetes.io/pciBusID" : "parentPciBusID", "string");
        BOOST_REQUIRE(dev["attributes"].HasMember("resource.kubernetes.io/pcieRoot"));
        auto it = want.find(bdf);
        if (it != want.end()) {
          BOOST_TEST(Attr(dev, "resource.kubernetes.io/pcieRoot", "string") == it->second);
        }
      }
    }
    const std::set<std::string> kinds =
        node == "demo/nodes/z100l-mixed.yaml" ? std::set<std::string>{"hcu", "vhcu"}
        : node == "demo/nodes/bw-mig.yaml"    ? std::set<std::string>{"mig"}
                                              : std::set<std::string>{"hcu"};
    BOOST_TEST(types == kinds, node);
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::dra
