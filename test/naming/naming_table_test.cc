// The resource table: every strategy x naming policy on the three demo nodes
// (reference/hcu-hardware.md §6), names and device counts.
#include <boost/test/unit_test.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "hcudp/naming.h"
#include "naming/demo_inventories.h"

namespace hcudp {
namespace {

using Expected = std::vector<std::pair<std::string, size_t>>;  // name, device count

struct Row {
  const char* node;
  Strategy strategy;
  NamingPolicy policy;
  Expected resources;
};

constexpr auto kHcu = Strategy::kHcu;
constexpr auto kVhcu = Strategy::kVhcu;
constexpr auto kMig = Strategy::kMig;
constexpr auto kMixed = Strategy::kMixed;
constexpr auto kHami = Strategy::kHami;
constexpr auto kP0 = NamingPolicy::kDefault;
constexpr auto kP1 = NamingPolicy::kModel;
constexpr auto kP2 = NamingPolicy::kModelMemoryCu;

const std::vector<Row>& Table() {
  static const std::vector<Row> rows = {
      // Node A: 8 x K100_AI, whole cards only.
      {"k100ai-8", kHcu, kP0, {{"hygon.com/hcu", 8}}},
      {"k100ai-8", kHcu, kP1, {{"hygon.com/K100_AI", 8}}},
      {"k100ai-8", kHcu, kP2, {{"hygon.com/K100-AI_64G_120CU", 8}}},
      {"k100ai-8", kVhcu, kP0, {}},
      {"k100ai-8", kVhcu, kP1, {}},
      {"k100ai-8", kVhcu, kP2, {}},
      {"k100ai-8", kMig, kP0, {}},
      {"k100ai-8", kMig, kP1, {}},
      {"k100ai-8", kMig, kP2, {}},
      {"k100ai-8", kMixed, kP0, {{"hygon.com/hcu", 8}}},
      {"k100ai-8", kMixed, kP1, {{"hygon.com/K100_AI", 8}}},
      {"k100ai-8", kMixed, kP2, {{"hygon.com/K100-AI_64G_120CU", 8}}},
      {"k100ai-8", kHami, kP0, {{"hygon.com/hcunum", 32}}},
      {"k100ai-8", kHami, kP1, {{"hygon.com/K100_AI_hcunum", 32}}},
      {"k100ai-8", kHami, kP2, {{"hygon.com/K100-AI_64G_120CU_hcunum", 32}}},
      // Node B: 4 x Z100L, cards 2 and 3 pre-split.
      {"z100l-mixed", kHcu, kP0, {{"hygon.com/hcu", 4}}},
      {"z100l-mixed", kHcu, kP1, {{"hygon.com/Z100L", 4}}},
      {"z100l-mixed", kHcu, kP2, {{"hygon.com/Z100L_32G_60CU", 4}}},
      {"z100l-mixed",
       kVhcu,
       kP0,
       {{"hygon.com/hcu-share-15c-8g", 4}, {"hygon.com/hcu-share-30c-16g", 2}}},
      {"z100l-mixed",
       kVhcu,
       kP1,
       {{"hygon.com/Z100L-share-15c-8g", 4}, {"hygon.com/Z100L-share-30c-16g", 2}}},
      {"z100l-mixed",
       kVhcu,
       kP2,
       {{"hygon.com/Z100L_32G_60CU-share-15c-8g", 4},
        {"hygon.com/Z100L_32G_60CU-share-30c-16g", 2}}},
      {"z100l-mixed", kMig, kP0, {}},
      {"z100l-mixed", kMig, kP1, {}},
      {"z100l-mixed", kMig, kP2, {}},
      {"z100l-mixed",
       kMixed,
       kP0,
       {{"hygon.com/hcu", 2},
        {"hygon.com/hcu-share-15c-8g", 4},
        {"hygon.com/hcu-share-30c-16g", 2}}},
      {"z100l-mixed",
       kMixed,
       kP1,
       {{"hygon.com/Z100L", 2},
        {"hygon.com/Z100L-share-15c-8g", 4},
        {"hygon.com/Z100L-share-30c-16g", 2}}},
      {"z100l-mixed",
       kMixed,
       kP2,
       {{"hygon.com/Z100L_32G_60CU", 2},
        {"hygon.com/Z100L_32G_60CU-share-15c-8g", 4},
        {"hygon.com/Z100L_32G_60CU-share-30c-16g", 2}}},
      {"z100l-mixed", kHami, kP0, {{"hygon.com/hcunum", 16}}},
      {"z100l-mixed", kHami, kP1, {{"hygon.com/Z100L_hcunum", 16}}},
      {"z100l-mixed", kHami, kP2, {{"hygon.com/Z100L_32G_60CU_hcunum", 16}}},
      // Node C: 4 x BW200 in MIG mode: whole cards are unusable.
      {"bw-mig", kHcu, kP0, {{"hygon.com/hcu", 0}}},
      {"bw-mig", kHcu, kP1, {{"hygon.com/BW200", 0}}},
      {"bw-mig", kHcu, kP2, {{"hygon.com/BW200_64G_80CU", 0}}},
      {"bw-mig", kVhcu, kP0, {}},
      {"bw-mig", kVhcu, kP1, {}},
      {"bw-mig", kVhcu, kP2, {}},
      {"bw-mig",
       kMig,
       kP0,
       {{"hygon.com/hcu-mig-2g-15gb", 5},
        {"hygon.com/hcu-mig-4g-31gb", 3},
        {"hygon.com/hcu-mig-8g-63gb", 1}}},
      {"bw-mig",
       kMig,
       kP1,
       {{"hygon.com/BW200-mig-2g-15gb", 5},
        {"hygon.com/BW200-mig-4g-31gb", 3},
        {"hygon.com/BW200-mig-8g-63gb", 1}}},
      {"bw-mig",
       kMig,
       kP2,
       {{"hygon.com/BW200_64G_80CU-mig-2g-15gb", 5},
        {"hygon.com/BW200_64G_80CU-mig-4g-31gb", 3},
        {"hygon.com/BW200_64G_80CU-mig-8g-63gb", 1}}},
      {"bw-mig", kMixed, kP0, {{"hygon.com/hcu", 0}}},
      {"bw-mig", kMixed, kP1, {{"hygon.com/BW200", 0}}},
      {"bw-mig", kMixed, kP2, {{"hygon.com/BW200_64G_80CU", 0}}},
      {"bw-mig", kHami, kP0, {{"hygon.com/hcunum", 16}}},
      {"bw-mig", kHami, kP1, {{"hygon.com/BW200_hcunum", 16}}},
      {"bw-mig", kHami, kP2, {{"hygon.com/BW200_64G_80CU_hcunum", 16}}},
  };
  return rows;
}

NodeInventory InventoryOf(const std::string& node) {
  if (node == "k100ai-8") return testing::K100ai8Inventory();
  if (node == "z100l-mixed") return testing::Z100lMixedInventory();
  return testing::BwMigInventory();
}

std::string Describe(const Expected& e) {
  std::ostringstream out;
  for (const auto& [name, count] : e) out << name << ":" << count << " ";
  return out.str();
}

BOOST_AUTO_TEST_SUITE(naming_table)

BOOST_AUTO_TEST_CASE(every_strategy_and_policy_on_the_demo_nodes) {
  BOOST_TEST(Table().size() == 45u);  // 3 nodes x 5 strategies x 3 policies
  for (const Row& row : Table()) {
    NamingParams params;
    params.strategy = row.strategy;
    params.policy = row.policy;
    auto resources = BuildResources(InventoryOf(row.node), params);
    BOOST_TEST_CONTEXT(row.node << " strategy " << StrategyName(row.strategy) << " policy "
                                << static_cast<int>(row.policy)) {
      BOOST_REQUIRE_MESSAGE(resources.ok(), resources.status().ToString());
      Expected got;
      for (const Resource& r : *resources) got.emplace_back(r.name, r.devices.size());
      BOOST_TEST(Describe(got) == Describe(row.resources));
    }
  }
}

BOOST_AUTO_TEST_CASE(last_name_is_the_name_without_the_namespace) {
  NamingParams params;
  params.strategy = Strategy::kMixed;
  auto resources = BuildResources(testing::Z100lMixedInventory(), params);
  BOOST_REQUIRE(resources.ok());
  for (const Resource& r : *resources) BOOST_TEST(r.name == "hygon.com/" + r.last_name);
}

BOOST_AUTO_TEST_CASE(resource_kinds_follow_the_group) {
  NamingParams params;
  params.strategy = Strategy::kMixed;
  auto resources = BuildResources(testing::Z100lMixedInventory(), params);
  BOOST_REQUIRE(resources.ok());
  BOOST_REQUIRE(resources->size() == 3u);
  BOOST_TEST(DeviceKindName((*resources)[0].kind) == "card");
  BOOST_TEST(DeviceKindName((*resources)[1].kind) == "vhcu");
  BOOST_TEST(DeviceKindName((*resources)[2].kind) == "vhcu");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
