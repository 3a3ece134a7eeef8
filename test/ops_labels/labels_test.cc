// The node label set on the shipped SimNodes and a heterogeneous fixture,
// the value sanitiser, the features.d file and the Node patch.
#include <boost/test/unit_test.hpp>

#include "hcudp/backend.h"
#include "hcudp/node_labels.h"
#include "ops/labels_internal.h"
#include "testing/testutil.h"

namespace hcudp {
namespace {

using testing::SourcePath;
using testing::TempDir;

NodeInventory Discover(const std::string& node_file, const TempDir& dir) {
  Options o;
  o.backend = BackendKind::kSim;
  o.sim_node_path = SourcePath(node_file);
  o.host_root = dir.Join("root");
  auto backend = OpenBackend(o);
  BOOST_REQUIRE_MESSAGE(backend.ok(), backend.status().ToString());
  auto inv = (*backend)->Discover();
  BOOST_REQUIRE_MESSAGE(inv.ok(), inv.status().ToString());
  return *inv;
}

NodeLabels LabelsOf(const std::string& node_file, Strategy strategy = Strategy::kMixed) {
  TempDir dir;
  return ComputeNodeLabels(Discover(node_file, dir), strategy);
}

BOOST_AUTO_TEST_SUITE(node_labels)

BOOST_AUTO_TEST_CASE(k100_node_has_the_label_node_keys_and_the_added_ones) {
  const NodeLabels want = {
      {"hygon.com/hcu", "true"},         {"hygon.com/hcu.count", "8"},
      {"hygon.com/hcu.cu-count", "120"}, {"hygon.com/hcu.driver-version", "6.3.27-V1.2.5"},
      {"hygon.com/hcu.memory", "65520"}, {"hygon.com/hcu.mig.capable", "false"},
      {"hygon.com/hcu.name", "K100_AI"}, {"hygon.com/hcu.strategy", "mixed"},
      {"hygon.com/hcu.vram", "64G"},  // 65 520 MiB = 63.98 GiB, rounded up
  };
  BOOST_TEST(LabelsOf("demo/nodes/k100ai-8.yaml") == want);
}

BOOST_AUTO_TEST_CASE(z100l_node_rounds_vram_up_and_reports_the_strategy) {
  NodeLabels l = LabelsOf("demo/nodes/z100l-mixed.yaml", Strategy::kVhcu);
  BOOST_TEST(l.at("hygon.com/hcu.name") == "Z100L");
  BOOST_TEST(l.at("hygon.com/hcu.count") == "4");
  BOOST_TEST(l.at("hygon.com/hcu.cu-count") == "60");
  BOOST_TEST(l.at("hygon.com/hcu.memory") == "32752");
  BOOST_TEST(l.at("hygon.com/hcu.vram") == "32G");  // 31.98 GiB
  BOOST_TEST(l.at("hygon.com/hcu.strategy") == "vhcu");
  BOOST_TEST(l.count("hygon.com/hcu.models") == 0u);
}

BOOST_AUTO_TEST_CASE(mig_node_is_mig_capable) {
  NodeLabels l = LabelsOf("demo/nodes/bw-mig.yaml", Strategy::kMig);
  BOOST_TEST(l.at("hygon.com/hcu.mig.capable") == "true");
  BOOST_TEST(l.at("hygon.com/hcu.name") == "BW200");
  BOOST_TEST(l.at("hygon.com/hcu.cu-count") == "80");
  BOOST_TEST(l.at("hygon.com/hcu.strategy") == "mig");
}

BOOST_AUTO_TEST_CASE(heterogeneous_node_is_not_described_by_card_zero) {
  NodeLabels l = LabelsOf("test/ops_labels/hetero-k100-z100.yaml");
  // Card 0 is a K100_AI; a pod selecting hcu.name=K100_AI or cu-count=120
  // could get the Z100L, so the per-card keys are left out...
  BOOST_TEST(l.count("hygon.com/hcu.name") == 0u);
  BOOST_TEST(l.count("hygon.com/hcu.cu-count") == 0u);
  BOOST_TEST(l.count("hygon.com/hcu.vram") == 0u);
  BOOST_TEST(l.count("hygon.com/hcu.memory") == 0u);
  // ...and the node says what it has.
  BOOST_TEST(l.at("hygon.com/hcu.models") == "K100_AI.Z100L");
  BOOST_TEST(l.at("hygon.com/hcu.count") == "3");
  BOOST_TEST(l.at("hygon.com/hcu") == "true");
  // "6.3.27 V1.2.5+build (rc)": blanks to '-', '+', '(' and ')' dropped.
  BOOST_TEST(l.at("hygon.com/hcu.driver-version") == "6.3.27-V1.2.5build-rc");
  for (const auto& [key, value] : l) BOOST_TEST(IsValidLabelValue(value), key << "=" << value);
}

// A card that needs a reset (DMI_STATUS_RESET_REQUIRED) stays listed with
// what the driver still tells: its model from the PCI ID, no compute-unit
// count. Health must not flap the labels: the other cards still say 120.
BOOST_AUTO_TEST_CASE(a_card_awaiting_reset_does_not_remove_the_per_card_labels) {
  TempDir dir;
  NodeInventory inv = Discover("demo/nodes/k100ai-8.yaml", dir);
  const NodeLabels before = ComputeNodeLabels(inv, Strategy::kMixed);
  inv.cards[3].compute_units = 0;
  inv.cards[3].health = Health::kUnhealthy;
  BOOST_TEST(ComputeNodeLabels(inv, Strategy::kMixed) == before);
  inv.cards[5].model.clear();  // a PCI device ID the table does not know
  BOOST_TEST(ComputeNodeLabels(inv, Strategy::kMixed) == before);
}

BOOST_AUTO_TEST_CASE(a_node_without_cards_has_no_labels) {
  BOOST_TEST(ComputeNodeLabels(NodeInventory{}, Strategy::kMixed).empty());
}

BOOST_AUTO_TEST_CASE(sanitiser_meets_the_label_value_grammar) {
  BOOST_TEST(SanitizeLabelValue("K100_AI") == "K100_AI");
  BOOST_TEST(SanitizeLabelValue("Hygon  DCU K100 (AI)") == "Hygon-DCU-K100-AI");
  BOOST_TEST(SanitizeLabelValue("-._x_.-") == "x");
  BOOST_TEST(SanitizeLabelValue("..") == "");
  BOOST_TEST(SanitizeLabelValue("\xe6\xb5\xb7\xe5\x85\x89 BW") == "BW");  // UTF-8 dropped
  const std::string long_value = std::string(62, 'a') + "-b";             // 64 chars
  const std::string cut = SanitizeLabelValue(long_value);
  BOOST_TEST(cut.size() <= 63u);
  BOOST_TEST(cut == std::string(62, 'a'));  // cut at 63 ("...a-"), then trimmed
  BOOST_TEST(IsValidLabelValue(cut));
  BOOST_TEST(!IsValidLabelValue("a b"));
  BOOST_TEST(!IsValidLabelValue("-a"));
  BOOST_TEST(!IsValidLabelValue(std::string(64, 'a')));
  BOOST_TEST(IsValidLabelValue(""));
}

BOOST_AUTO_TEST_CASE(feature_file_puts_the_placement_label_before_the_expiry) {
  const NodeLabels labels = {
      {"hygon.com/hcu", "true"}, {"hygon.com/hcu.count", "8"}, {"hygon.com/hcu.name", "K100_AI"}};
  const std::string text =
      RenderNfdFeatureFile(labels, Clock::WallTime(std::chrono::seconds(1'800'000'600)));
  const size_t hcu = text.find("\nhygon.com/hcu=true\n");
  const size_t expiry = text.find("\n# +expiry-time=2027-01-15T08:10:00Z\n");
  const size_t count = text.find("\nhygon.com/hcu.count=8\n");
  BOOST_TEST_REQUIRE(hcu != std::string::npos, text);
  BOOST_TEST_REQUIRE(expiry != std::string::npos, text);
  BOOST_TEST_REQUIRE(count != std::string::npos, text);
  BOOST_TEST(hcu < expiry);
  BOOST_TEST(expiry < count);
  BOOST_TEST(text.find("hygon.com/hcu.name=K100_AI\n") > expiry);
}

BOOST_AUTO_TEST_CASE(node_patch_touches_only_our_keys) {
  const NodeLabels have = {{"zone", "a"},
                           {"hygon.com/hcu", "true"},
                           {"hygon.com/hcu.name", "K100_AI"},
                           {"hygon.com/hcu.cu-count", "120"},
                           {"hygon.com/hcu.custom", "admin's"}};
  const NodeLabels want = {{"hygon.com/hcu", "true"},
                           {"hygon.com/hcu.models", "K100_AI.Z100L"},
                           {"hygon.com/hcu.count", "3"}};
  auto patch = NodeLabelPatch(have, want);
  BOOST_REQUIRE(patch);
  BOOST_TEST(*patch == R"({"metadata":{"labels":{"hygon.com/hcu.count":"3",)"
                       R"("hygon.com/hcu.models":"K100_AI.Z100L",)"
                       R"("hygon.com/hcu.cu-count":null,"hygon.com/hcu.name":null}}})");
  // Nothing to do: no patch at all; and hygon.com/hcu is never deleted.
  NodeLabels same = have;
  same.erase("hygon.com/hcu.name");
  same.erase("hygon.com/hcu.cu-count");
  BOOST_TEST(!NodeLabelPatch(same, {{"hygon.com/hcu", "true"}}));
  BOOST_TEST(!NodeLabelPatch(
      have, {{"hygon.com/hcu.name", "K100_AI"}, {"hygon.com/hcu.cu-count", "120"}}));
}

BOOST_AUTO_TEST_CASE(modes_parse_exactly) {
  BOOST_TEST((*ParseNodeLabelMode("nfd") == NodeLabelMode::kNfd));
  BOOST_TEST((*ParseNodeLabelMode("node") == NodeLabelMode::kNode));
  BOOST_TEST((*ParseNodeLabelMode("off") == NodeLabelMode::kOff));
  auto bad = ParseNodeLabelMode("NFD");
  BOOST_TEST(!bad.ok());
  BOOST_TEST(bad.status().message().find("off, nfd, node") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
