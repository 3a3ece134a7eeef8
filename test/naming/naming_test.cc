// Names, device IDs, health and NUMA of the resources (seed-behaviour.md
// §2.2, §2.5; DESIGN.md §4.1).
#include "hcudp/naming.h"

#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "naming/demo_inventories.h"

namespace hcudp {
namespace {

std::vector<Resource> Build(const NodeInventory& inv, Strategy strategy,
                            NamingPolicy policy = NamingPolicy::kDefault) {
  NamingParams params;
  params.strategy = strategy;
  params.policy = policy;
  auto resources = BuildResources(inv, params);
  BOOST_REQUIRE_MESSAGE(resources.ok(), resources.status().ToString());
  return *resources;
}

const Resource& Named(const std::vector<Resource>& resources, const std::string& name) {
  for (const Resource& r : resources) {
    if (r.name == name) return r;
  }
  BOOST_FAIL("no resource " << name);
  return resources.front();
}

std::vector<std::string> Ids(const Resource& r) {
  std::vector<std::string> ids;
  for (const ResourceDevice& d : r.devices) ids.push_back(d.id);
  return ids;
}

BOOST_AUTO_TEST_SUITE(naming)

BOOST_AUTO_TEST_CASE(round_gib_rounds_half_away_from_zero) {
  struct Case {
    uint64_t bytes;
    int64_t gib;
  };
  for (Case c : std::vector<Case>{{8188 * kMiB, 8},
                                  {16376 * kMiB, 16},
                                  {32752 * kMiB, 32},
                                  {65520 * kMiB, 64},
                                  {0, 0},
                                  {511 * kMiB, 0},
                                  {512 * kMiB, 1},
                                  {kGiB + kGiB / 2 - 1, 1},
                                  {kGiB + kGiB / 2, 2},
                                  {80 * kGiB, 80}}) {
    BOOST_TEST_CONTEXT("bytes " << c.bytes) { BOOST_TEST(RoundGiB(c.bytes) == c.gib); }
  }
}

BOOST_AUTO_TEST_CASE(prefix_per_policy) {
  Card card = testing::K100ai8Inventory().cards[0];
  BOOST_TEST(ResourcePrefix(card, NamingPolicy::kDefault) == "hcu");
  BOOST_TEST(ResourcePrefix(card, NamingPolicy::kModel) == "K100_AI");
  BOOST_TEST(ResourcePrefix(card, NamingPolicy::kModelMemoryCu) == "K100-AI_64G_120CU");
}

BOOST_AUTO_TEST_CASE(prefix_cuts_the_model_at_the_first_comma) {
  Card card = testing::K100ai8Inventory().cards[0];
  card.model = "K100_AI,rev2,x";
  BOOST_TEST(ResourcePrefix(card, NamingPolicy::kModel) == "K100_AI");
  BOOST_TEST(ResourcePrefix(card, NamingPolicy::kModelMemoryCu) == "K100-AI_64G_120CU");
}

BOOST_AUTO_TEST_CASE(profile_keys) {
  BOOST_TEST(VhcuProfileKey(15, 8188 * kMiB) == "share-15c-8g");
  BOOST_TEST(VhcuProfileKey(30, 16376 * kMiB) == "share-30c-16g");
  BOOST_TEST(MigProfileKey("4g.31gb") == "mig-4g-31gb");
  BOOST_TEST(MigProfileKey("1c.4g.31gb") == "mig-1c-4g-31gb");
  BOOST_TEST(MigProfileKey("MIG 2g.15gb") == "mig-2g-15gb");
}

BOOST_AUTO_TEST_CASE(hami_names_come_from_card_0) {
  NodeInventory inv = testing::K100ai8Inventory();
  inv.cards[1].model = "Z100L";  // only card 0 counts
  BOOST_TEST(HamiCountName(inv, NamingPolicy::kDefault) == "hcunum");
  BOOST_TEST(HamiCountName(inv, NamingPolicy::kModel) == "K100_AI_hcunum");
  BOOST_TEST(HamiCountName(inv, NamingPolicy::kModelMemoryCu) == "K100-AI_64G_120CU_hcunum");
  BOOST_TEST(HamiDerivedName("K100_AI_hcunum", "hcucores") == "K100_AI_hcucores");
  BOOST_TEST(HamiDerivedName("hcunum", "hcumem") == "hcumem");
  BOOST_TEST(HamiDerivedName("K100-AI_64G_120CU_hcunum", "hcumem") == "K100-AI_64G_120CU_hcumem");
}

BOOST_AUTO_TEST_CASE(physical_ids_are_bdfs_in_order_with_card_numa_and_health) {
  NodeInventory inv = testing::K100ai8Inventory();
  inv.cards[5].health = Health::kUnhealthy;
  std::swap(inv.cards[0], inv.cards[7]);  // input order does not matter
  auto resources = Build(inv, Strategy::kHcu);
  const Resource& hcu = Named(resources, "hygon.com/hcu");
  BOOST_REQUIRE(hcu.devices.size() == 8u);
  BOOST_TEST(hcu.devices[0].id == "0000:09:00.0");
  BOOST_TEST(hcu.devices[7].id == "0000:e9:00.0");
  for (int i = 0; i < 8; ++i) {
    BOOST_TEST(hcu.devices[i].card == i);
    BOOST_TEST(hcu.devices[i].numa_node == i);
    BOOST_TEST(HealthName(hcu.devices[i].health) == (i == 5 ? "Unhealthy" : "Healthy"));
  }
}

BOOST_AUTO_TEST_CASE(mixed_hides_cards_that_carry_vhcus_from_the_whole_card_resource) {
  auto resources = Build(testing::Z100lMixedInventory(), Strategy::kMixed);
  BOOST_TEST(Ids(Named(resources, "hygon.com/hcu")) ==
                 (std::vector<std::string>{"0000:0b:00.0", "0000:0e:00.0"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(hcu_strategy_keeps_cards_that_carry_vhcus) {
  auto resources = Build(testing::Z100lMixedInventory(), Strategy::kHcu);
  BOOST_TEST(Named(resources, "hygon.com/hcu").devices.size() == 4u);
}

BOOST_AUTO_TEST_CASE(vhcu_devices_follow_their_parent_card) {
  NodeInventory inv = testing::Z100lMixedInventory();
  inv.cards[2].health = Health::kUnhealthy;
  auto resources = Build(inv, Strategy::kVhcu);
  const Resource& small = Named(resources, "hygon.com/hcu-share-15c-8g");
  BOOST_TEST(Ids(small) == (std::vector<std::string>{"vdev0", "vdev1", "vdev2", "vdev3"}),
             boost::test_tools::per_element());
  for (const ResourceDevice& d : small.devices) {
    BOOST_TEST(d.card == 2);
    BOOST_TEST(d.numa_node == 1);
    BOOST_TEST(HealthName(d.health) == "Unhealthy");
  }
  BOOST_TEST(small.devices[3].vhcu_id == 3);
  const Resource& big = Named(resources, "hygon.com/hcu-share-30c-16g");
  BOOST_TEST(Ids(big) == (std::vector<std::string>{"vdev4", "vdev5"}),
             boost::test_tools::per_element());
  BOOST_TEST(HealthName(big.devices[0].health) == "Healthy");
  BOOST_TEST(big.devices[0].card == 3);
}

BOOST_AUTO_TEST_CASE(vhcu_ids_sort_naturally) {
  NodeInventory inv = testing::Z100lMixedInventory();
  inv.vhcus.resize(4);  // the 15c-8g profile only
  inv.vhcus[0].id = 10;
  inv.vhcus[1].id = 2;
  inv.vhcus[2].id = 1;
  inv.vhcus[3].id = 11;
  auto resources = Build(inv, Strategy::kVhcu);
  BOOST_TEST(Ids(Named(resources, "hygon.com/hcu-share-15c-8g")) ==
                 (std::vector<std::string>{"vdev1", "vdev2", "vdev10", "vdev11"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_vhcu_whose_parent_card_was_not_discovered_is_left_out) {
  NodeInventory inv = testing::Z100lMixedInventory();
  inv.cards.pop_back();  // card 3, parent of vdev4 and vdev5
  auto resources = Build(inv, Strategy::kVhcu);
  BOOST_REQUIRE(resources.size() == 1u);
  BOOST_TEST(resources[0].name == "hygon.com/hcu-share-15c-8g");
}

BOOST_AUTO_TEST_CASE(on_a_mig_node_vhcu_profiles_are_registered_without_devices) {
  NodeInventory inv = testing::Z100lMixedInventory();
  inv.mig_enabled = true;  // a container without a CI conf sees no device
  auto resources = Build(inv, Strategy::kMixed);
  BOOST_REQUIRE(resources.size() == 3u);
  for (const Resource& r : resources) BOOST_TEST(r.devices.empty(), r.name);
}

BOOST_AUTO_TEST_CASE(mig_devices_are_mig_uuids_of_their_profile_with_the_card_numa) {
  NodeInventory inv = testing::BwMigInventory();
  auto resources = Build(inv, Strategy::kMig);
  const Resource& r = Named(resources, "hygon.com/hcu-mig-4g-31gb");
  BOOST_TEST(Ids(r) == (std::vector<std::string>{"MIG-0fd630f1-f29d-4da9-953f-48f1a09f76b5",
                                                 "MIG-6b0d549b-6f03-475a-9600-a35a099950d8",
                                                 "MIG-8d116ece-1738-47d9-bd9c-172411e20b8f"}),
             boost::test_tools::per_element());
  const ResourceDevice& on_card_3 = r.devices[0];
  BOOST_TEST(on_card_3.card == 3);
  BOOST_TEST(on_card_3.numa_node == 3);
  BOOST_REQUIRE(on_card_3.mig_index >= 0);
  BOOST_TEST(inv.mig_instances[on_card_3.mig_index].uuid == "0fd630f1-f29d-4da9-953f-48f1a09f76b5");
}

BOOST_AUTO_TEST_CASE(mig_devices_follow_card_health) {
  NodeInventory inv = testing::BwMigInventory();
  inv.cards[2].health = Health::kUnhealthy;
  auto resources = Build(inv, Strategy::kMig);
  BOOST_TEST(HealthName(Named(resources, "hygon.com/hcu-mig-8g-63gb").devices[0].health) ==
             "Unhealthy");
  BOOST_TEST(HealthName(Named(resources, "hygon.com/hcu-mig-2g-15gb").devices[0].health) ==
             "Healthy");
}

BOOST_AUTO_TEST_CASE(a_ci_with_fewer_slices_than_its_gi_gets_its_own_profile) {
  NodeInventory inv = testing::BwMigInventory();
  inv.mig_instances[4].profile = "2c.4g.31gb";
  auto resources = Build(inv, Strategy::kMig);
  BOOST_TEST(Named(resources, "hygon.com/hcu-mig-2c-4g-31gb").devices.size() == 1u);
  BOOST_TEST(Named(resources, "hygon.com/hcu-mig-4g-31gb").devices.size() == 2u);
}

BOOST_AUTO_TEST_CASE(hami_count_devices_are_fake_ids_per_card_following_the_card) {
  NodeInventory inv = testing::K100ai8Inventory();
  inv.cards[1].health = Health::kUnhealthy;
  NamingParams params;
  params.strategy = Strategy::kHami;
  params.device_split_count = 3;
  auto resources = BuildResources(inv, params);
  BOOST_REQUIRE(resources.ok());
  BOOST_REQUIRE(resources->size() == 1u);
  const Resource& num = (*resources)[0];
  BOOST_TEST(num.name == "hygon.com/hcunum");
  BOOST_TEST(DeviceKindName(num.kind) == "hcunum");
  BOOST_REQUIRE(num.devices.size() == 24u);
  int fakes_of_card_0 = 0;
  for (const ResourceDevice& d : num.devices) {
    const Card& card = inv.cards[d.card];
    BOOST_TEST(d.id.rfind("HCU-" + card.serial + "-fake-", 0) == 0u);
    BOOST_TEST(d.numa_node == card.numa_node);
    BOOST_TEST(HealthName(d.health) == (d.card == 1 ? "Unhealthy" : "Healthy"));
    if (d.card == 0) ++fakes_of_card_0;
  }
  BOOST_TEST(fakes_of_card_0 == 3);
  BOOST_TEST(Ids(num)[0] == "HCU-T6T8290017030301-fake-0");  // sorted by ID
}

BOOST_AUTO_TEST_CASE(hami_cores_with_resource_multiple_are_100_per_card_healthy_without_numa) {
  NodeInventory inv = testing::K100ai8Inventory();
  inv.cards[0].health = Health::kUnhealthy;
  NamingParams params;
  params.strategy = Strategy::kHami;
  params.policy = NamingPolicy::kModel;
  params.resource_multiple = true;
  auto resources = BuildResources(inv, params);
  BOOST_REQUIRE(resources.ok());
  BOOST_REQUIRE(resources->size() == 2u);
  BOOST_TEST((*resources)[0].name == "hygon.com/K100_AI_hcunum");
  const Resource& cores = (*resources)[1];
  BOOST_TEST(cores.name == "hygon.com/K100_AI_hcucores");
  BOOST_TEST(DeviceKindName(cores.kind) == "hcucores");
  BOOST_REQUIRE(cores.devices.size() == 800u);
  BOOST_TEST(cores.devices[0].id == "0");
  BOOST_TEST(cores.devices[9].id == "9");
  BOOST_TEST(cores.devices[10].id == "10");
  BOOST_TEST(cores.devices[799].id == "799");
  for (const ResourceDevice& d : cores.devices) {
    BOOST_TEST(HealthName(d.health) == "Healthy");
    BOOST_TEST(d.numa_node == kNoNumaNode);
    BOOST_TEST(d.card == -1);
  }
}

BOOST_AUTO_TEST_CASE(hami_refuses_a_split_count_below_one) {
  NamingParams params;
  params.strategy = Strategy::kHami;
  params.device_split_count = 0;
  auto resources = BuildResources(testing::K100ai8Inventory(), params);
  BOOST_REQUIRE(!resources.ok());
  BOOST_TEST(static_cast<int>(resources.status().code()) ==
             static_cast<int>(StatusCode::kInvalidArgument));
}

BOOST_AUTO_TEST_CASE(an_invalid_policy_1_name_is_rejected_naming_the_model) {
  NodeInventory inv = testing::K100ai8Inventory();
  for (Card& c : inv.cards) c.model = "K100 AI";
  NamingParams params;
  params.strategy = Strategy::kHcu;
  params.policy = NamingPolicy::kModel;
  auto resources = BuildResources(inv, params);
  BOOST_REQUIRE(!resources.ok());
  BOOST_TEST(static_cast<int>(resources.status().code()) ==
             static_cast<int>(StatusCode::kInvalidArgument));
  BOOST_TEST(resources.status().message().find("\"K100 AI\"") != std::string::npos,
             resources.status().message());
  params.policy = NamingPolicy::kDefault;  // policy 0 does not use the model
  BOOST_TEST(BuildResources(inv, params).ok());
}

BOOST_AUTO_TEST_CASE(each_card_names_its_own_physical_resource_on_a_mixed_model_node) {
  NodeInventory inv = testing::K100ai8Inventory();
  for (int i = 4; i < 8; ++i) {
    inv.cards[i].model = "Z100L";
    inv.cards[i].compute_units = 60;
    inv.cards[i].memory_bytes = 32752 * kMiB;
  }
  auto p1 = Build(inv, Strategy::kHcu, NamingPolicy::kModel);
  BOOST_REQUIRE(p1.size() == 2u);
  BOOST_TEST(p1[0].name == "hygon.com/K100_AI");
  BOOST_TEST(Ids(p1[0])[3] == "0000:69:00.0");
  BOOST_TEST(p1[1].name == "hygon.com/Z100L");
  BOOST_TEST(Ids(p1[1])[0] == "0000:89:00.0");
  auto p0 = Build(inv, Strategy::kHcu);
  BOOST_REQUIRE(p0.size() == 1u);
  BOOST_TEST(p0[0].devices.size() == 8u);
}

BOOST_AUTO_TEST_CASE(resource_name_validation_matches_kubelet) {
  for (const char* ok : {"hygon.com/hcu", "hygon.com/hcu-share-4c-16g",
                         "hygon.com/K100_AI_64G_120CU", "hygon.com/K100-AI_64G_120CU_hcunum"}) {
    BOOST_TEST_CONTEXT(ok) { BOOST_TEST(ValidateResourceName(ok).ok()); }
  }
  std::string long_name = "hygon.com/" + std::string(64, 'a');
  for (const std::string& bad :
       {std::string("hcu"), std::string("hygon.com/"), std::string("/hcu"),
        std::string("kubernetes.io/hcu"), std::string("hygon.kubernetes.io/hcu"),
        std::string("requests.hygon.com/hcu"), std::string("hygon.com/K100 AI"),
        std::string("hygon.com/-hcu"), std::string("hygon.com/hcu_"), std::string("Hygon.com/hcu"),
        std::string("hygon.com/a/b"), long_name}) {
    BOOST_TEST_CONTEXT(bad) {
      Status s = ValidateResourceName(bad);
      BOOST_TEST(!s.ok());
      BOOST_TEST(s.message().find("the ResourceName \"" + bad + "\" is invalid") == 0u);
    }
  }
  BOOST_TEST(ValidateResourceName("hygon.com/" + std::string(63, 'a')).ok());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
