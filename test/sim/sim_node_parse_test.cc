#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "hcudp/sim_node.h"
#include "testing/testutil.h"

namespace hcudp {
namespace {

// Two cards, every section present. Each bad case below edits one line.
constexpr char kBase[] = R"(apiVersion: hcudp.hygon.com/v1
kind: SimNode
name: small
driverVersion: 6.3.27-V1.2.5
cards:
  - index: 0
    bdf: "0000:09:00.0"
    model: K100_AI
    pciDeviceId: "0x6210"
    serial: S0
    computeUnits: 120
    memoryMiB: 65520
    numaNode: 0
    cardMinor: 1
    renderMinor: 128
    health: Healthy
  - index: 1
    bdf: "0000:29:00.0"
    model: K100_AI
    pciDeviceId: "0x6210"
    serial: S1
    computeUnits: 120
    memoryMiB: 65520
    numaNode: -1
    cardMinor: 2
    renderMinor: 129
    health: Unhealthy
links:
  default: {type: HSL, hops: 1, weight: 15}
  pairs:
    - {a: 0, b: 1, type: PCIE, hops: 3, weight: 72}
maxVhcusPerCard: 2
vhcus:
  - {id: 0, card: 1, computeUnits: 60, memoryMiB: 32760, pipeId: 0}
  - {id: 3, card: 1, computeUnits: 60, memoryMiB: 32760, pipeId: 1}
mig:
  enabled: false
  instances:
    - {card: 0, gi: 1, ci: 0, profile: 4g.31gb, computeUnits: 40, memoryMiB: 32760, uuid: 0fd630f1-f29d-4da9-953f-48f1a09f76b5}
)";

std::string Edit(const std::string& from, const std::string& to) {
  std::string text = kBase;
  size_t pos = text.find(from);
  BOOST_REQUIRE_MESSAGE(pos != std::string::npos, from);
  return text.replace(pos, from.size(), to);
}

BOOST_AUTO_TEST_SUITE(sim_node_parse)

BOOST_AUTO_TEST_CASE(base_document_parses_every_field) {
  StatusOr<SimNode> node = ParseSimNode(kBase);
  BOOST_REQUIRE_MESSAGE(node.ok(), node.status().ToString());
  BOOST_TEST(node->name == "small");
  BOOST_TEST(node->driver_version == "6.3.27-V1.2.5");
  BOOST_REQUIRE(node->cards.size() == 2u);
  const SimCard& c = node->cards[1];
  BOOST_TEST(c.bdf == "0000:29:00.0");
  BOOST_TEST(c.pci_device_id == 0x6210);
  BOOST_TEST(c.memory_mib == 65520u);
  BOOST_TEST(c.numa_node == -1);
  BOOST_TEST(c.render_minor == 129);
  BOOST_TEST((c.health == Health::kUnhealthy));
  BOOST_TEST((node->link_default.type == LinkType::kHsl));
  BOOST_TEST((node->LinkBetween(1, 0).type == LinkType::kPcie));
  BOOST_TEST(node->LinkBetween(1, 0).weight == 72);
  BOOST_TEST(node->max_vhcus_per_card == 2);
  BOOST_REQUIRE(node->vhcus.size() == 2u);
  BOOST_TEST(node->vhcus[1].id == 3);
  BOOST_TEST(node->vhcus[1].pipe_id == 1);
  BOOST_TEST(!node->mig_enabled);
  BOOST_REQUIRE(node->mig_instances.size() == 1u);
  BOOST_TEST(node->mig_instances[0].profile == "4g.31gb");
}

BOOST_AUTO_TEST_CASE(optional_sections_take_defaults) {
  std::string text = kBase;
  text = text.substr(0, text.find("links:"));
  StatusOr<SimNode> node = ParseSimNode(text);
  BOOST_REQUIRE_MESSAGE(node.ok(), node.status().ToString());
  BOOST_TEST((node->LinkBetween(0, 1).type == LinkType::kPcie));
  BOOST_TEST(node->LinkBetween(0, 1).hops == 2);
  BOOST_TEST(node->LinkBetween(0, 1).weight == 40);
  BOOST_TEST(node->max_vhcus_per_card == 4);
  BOOST_TEST(node->vhcus.empty());
  BOOST_TEST(!node->mig_enabled);
  // One root complex per domain unless a card names its own.
  BOOST_TEST(node->cards[0].pcie_root == "pci0000:00");
  StatusOr<SimNode> rooted =
      ParseSimNode(Edit("renderMinor: 129\n", "renderMinor: 129\n    pcieRoot: pci0000:20\n"));
  BOOST_REQUIRE_MESSAGE(rooted.ok(), rooted.status().ToString());
  BOOST_TEST(rooted->cards[1].pcie_root == "pci0000:20");
}

struct BadCase {
  const char* from;
  const char* to;
  const char* field;  // the path the error must name
};

std::ostream& operator<<(std::ostream& os, const BadCase& c) {
  return os << c.field << " <- " << c.to;
}

const BadCase kBad[] = {
    // a card's root complex: pci<domain>:<bus>, of its domain, at or below its bus
    {"renderMinor: 128\n", "renderMinor: 128\n    pcieRoot: pci0000:0\n", "cards[0].pcieRoot"},
    {"renderMinor: 128\n", "renderMinor: 128\n    pcieRoot: PCI0000:00\n", "cards[0].pcieRoot"},
    {"renderMinor: 128\n", "renderMinor: 128\n    pcieRoot: pci0001:00\n", "cards[0].pcieRoot"},
    {"renderMinor: 128\n", "renderMinor: 128\n    pcieRoot: pci0000:20\n", "cards[0].pcieRoot"},
    // header
    {"apiVersion: hcudp.hygon.com/v1", "apiVersion: v1", "apiVersion"},
    {"kind: SimNode", "kind: Node", "kind"},
    {"name: small", "name: small\nname: other", "name"},
    {"model: K100_AI", "model: K100_AI\n    model: Z100L", "cards[0].model"},
    {"kind: SimNode", "kind: [SimNode]", "kind"},
    {"name: small\n", "", "name"},
    {"driverVersion: 6.3.27-V1.2.5", "driverVersion: {a: 1}", "driverVersion"},
    {"name: small", "name: small\ncolor: red", "color"},
    {"maxVhcusPerCard: 2", "maxVhcusPerCard: 0", "maxVhcusPerCard"},
    {"maxVhcusPerCard: 2", "maxVhcusPerCard: 201", "maxVhcusPerCard"},
    {"maxVhcusPerCard: 2", "maxVhcusPerCard: two", "maxVhcusPerCard"},
    {"maxVhcusPerCard: 2", "maxVhcusPerCard: \"2\"", "maxVhcusPerCard"},
    // cards
    {"  - index: 0", "  - index: -1", "cards[0].index"},
    {"  - index: 0", "  - index: 2.5", "cards[0].index"},
    {"  - index: 1", "  - index: 0", "cards[1].index"},
    {"  - index: 1", "  - index: 5", "cards[1].index"},
    {"bdf: \"0000:09:00.0\"", "bdf: \"0000:09:00\"", "cards[0].bdf"},
    {"bdf: \"0000:09:00.0\"", "bdf: \"0000:0A:00.0\"", "cards[0].bdf"},
    {"bdf: \"0000:29:00.0\"", "bdf: \"0000:09:00.0\"", "cards[1].bdf"},
    {"model: K100_AI", "model: \"\"", "cards[0].model"},
    {"pciDeviceId: \"0x6210\"", "pciDeviceId: 6210", "cards[0].pciDeviceId"},
    {"pciDeviceId: \"0x6210\"", "pciDeviceId: \"0x16210\"", "cards[0].pciDeviceId"},
    {"serial: S1", "serial: S0", "cards[1].serial"},
    {"serial: S1", "serial: {x: 1}", "cards[1].serial"},
    {"bdf: \"0000:09:00.0\"", "bdf: [0000]", "cards[0].bdf"},
    {"model: K100_AI", "model: [K100_AI]", "cards[0].model"},
    {"computeUnits: 120\n    memoryMiB: 65520\n    numaNode: 0",
     "computeUnits: 0\n    memoryMiB: 65520\n    numaNode: 0", "cards[0].computeUnits"},
    {"computeUnits: 120\n    memoryMiB: 65520\n    numaNode: 0",
     "computeUnits: 129\n    memoryMiB: 65520\n    numaNode: 0", "cards[0].computeUnits"},
    {"memoryMiB: 65520\n    numaNode: 0", "memoryMiB: 0\n    numaNode: 0", "cards[0].memoryMiB"},
    {"memoryMiB: 65520\n    numaNode: 0", "memoryMiB: -5\n    numaNode: 0", "cards[0].memoryMiB"},
    {"numaNode: 0", "numaNode: -2", "cards[0].numaNode"},
    {"numaNode: 0", "numaNode: null", "cards[0].numaNode"},
    {"cardMinor: 2", "cardMinor: 1", "cards[1].cardMinor"},
    {"cardMinor: 1", "cardMinor: -1", "cards[0].cardMinor"},
    {"renderMinor: 129", "renderMinor: 128", "cards[1].renderMinor"},
    {"health: Healthy", "health: healthy", "cards[0].health"},
    {"health: Healthy", "health: Healthy\n    colour: red", "cards[0].colour"},
    {"    health: Healthy\n", "", "cards[0].health"},
    // links
    {"default: {type: HSL, hops: 1, weight: 15}", "default: {type: XGMI, hops: 1, weight: 15}",
     "links.default.type"},
    {"default: {type: HSL, hops: 1, weight: 15}", "default: {type: HSL, hops: -1, weight: 15}",
     "links.default.hops"},
    {"default: {type: HSL, hops: 1, weight: 15}", "default: {type: HSL, hops: 1, weight: -15}",
     "links.default.weight"},
    {"default: {type: HSL, hops: 1, weight: 15}", "default: {type: HSL, hops: 1}",
     "links.default.weight"},
    {"default: {type: HSL, hops: 1, weight: 15}", "default: {type: HSL, hops: 1, weight: 15, x: 1}",
     "links.default.x"},
    {"{a: 0, b: 1, type: PCIE", "{a: 0, b: 7, type: PCIE", "links.pairs[0].b"},
    {"{a: 0, b: 1, type: PCIE", "{a: 1, b: 1, type: PCIE", "links.pairs[0].b"},
    {"{a: 0, b: 1, type: PCIE", "{a: x, b: 1, type: PCIE", "links.pairs[0].a"},
    {"type: PCIE, hops: 3, weight: 72", "type: PCIE, hops: three, weight: 72",
     "links.pairs[0].hops"},
    {"type: PCIE, hops: 3, weight: 72", "type: PCIE, hops: 3, weight: [72]",
     "links.pairs[0].weight"},
    {"type: PCIE, hops: 3, weight: 72", "type: 7, hops: 3, weight: 72", "links.pairs[0].type"},
    {"type: PCIE, hops: 3, weight: 72", "type: PCIE, hops: 3, weight: 72, latency: 1",
     "links.pairs[0].latency"},
    {"  default: {type: HSL, hops: 1, weight: 15}\n", "  default: HSL\n", "links.default"},
    {"    - {a: 0, b: 1, type: PCIE, hops: 3, weight: 72}",
     "    - {a: 0, b: 1, type: PCIE, hops: 3, weight: 72}\n    - {a: 1, b: 0, type: HSL, hops: 1, "
     "weight: 15}",
     "links.pairs[1]"},
    {"  pairs:", "  bonds:", "links.bonds"},
    // vhcus
    {"{id: 3, card: 1", "{id: 0, card: 1", "vhcus[1].id"},
    {"{id: 3, card: 1", "{id: -3, card: 1", "vhcus[1].id"},
    {"{id: 3, card: 1", "{id: 3, card: 9", "vhcus[1].card"},
    {"computeUnits: 60, memoryMiB: 32760, pipeId: 1",
     "computeUnits: 61, memoryMiB: 32760, pipeId: 1", "vhcus[1].computeUnits"},
    {"computeUnits: 60, memoryMiB: 32760, pipeId: 1",
     "computeUnits: 0, memoryMiB: 32760, pipeId: 1", "vhcus[1].computeUnits"},
    {"computeUnits: 60, memoryMiB: 32760, pipeId: 1",
     "computeUnits: 60, memoryMiB: 32761, pipeId: 1", "vhcus[1].memoryMiB"},
    {"pipeId: 1}", "pipeId: 0}", "vhcus[1].pipeId"},
    {"pipeId: 1}", "pipeId: -1}", "vhcus[1].pipeId"},
    {"pipeId: 1}", "pipeId: x}", "vhcus[1].pipeId"},
    {"memoryMiB: 32760, pipeId: 1", "memoryMiB: 1.5, pipeId: 1", "vhcus[1].memoryMiB"},
    {"memoryMiB: 32760, pipeId: 1", "memoryMiB: 0, pipeId: 1", "vhcus[1].memoryMiB"},
    {"{id: 3, card: 1", "{id: 3, card: [1]", "vhcus[1].card"},
    {"pipeId: 1}", "pipeId: 20}", "vhcus[1].pipeId"},
    {"pipeId: 1}", "pipeId: 1, extra: 2}", "vhcus[1].extra"},
    {"maxVhcusPerCard: 2", "maxVhcusPerCard: 1", "vhcus[1]"},
    // mig
    {"enabled: false", "enabled: no", "mig.enabled"},
    {"enabled: false", "enabled: true", "mig.enabled"},  // with vHCUs present
    {"{card: 0, gi: 1", "{card: 4, gi: 1", "mig.instances[0].card"},
    {"{card: 0, gi: 1", "{card: 0, gi: -1", "mig.instances[0].gi"},
    {"ci: 0, profile", "ci: x, profile", "mig.instances[0].ci"},
    {"profile: 4g.31gb", "profile: 4g.32gb", "mig.instances[0].profile"},
    {"profile: 4g.31gb", "profile: 3g.31gb", "mig.instances[0].profile"},
    {"profile: 4g.31gb", "profile: 4g31gb", "mig.instances[0].profile"},
    {"profile: 4g.31gb", "profile: 4c.4g.31gb", "mig.instances[0].profile"},
    {"uuid: 0fd630f1-f29d", "uuid: 0fd630f1_f29d", "mig.instances[0].uuid"},
    {"uuid: 0fd630f1-f29d", "uuid: 0FD630F1-f29d", "mig.instances[0].uuid"},
    {"computeUnits: 40, memoryMiB: 32760", "computeUnits: 121, memoryMiB: 32760",
     "mig.instances[0].computeUnits"},
    {"computeUnits: 40, memoryMiB: 32760", "computeUnits: 40, memoryMiB: 0",
     "mig.instances[0].memoryMiB"},
    {"  instances:", "  instance:", "mig.instance"},
    {"uuid: 0fd630f1-f29d-4da9-953f-48f1a09f76b5", "uuid: [x]", "mig.instances[0].uuid"},
    {"profile: 4g.31gb", "profile: 4", "mig.instances[0].profile"},
    {"computeUnits: 40, memoryMiB: 32760", "computeUnits: 40, memoryMiB: big",
     "mig.instances[0].memoryMiB"},
    {"ci: 0, profile", "ci: 0, colour: red, profile", "mig.instances[0].colour"},
    {"  enabled: false", "  enabled: false\n  mode: all", "mig.mode"},
};

BOOST_DATA_TEST_CASE(each_bad_field_is_rejected_naming_field_and_line,
                     boost::unit_test::data::make(kBad), bad) {
  StatusOr<SimNode> node = ParseSimNode(Edit(bad.from, bad.to));
  BOOST_REQUIRE(!node.ok());
  const std::string& msg = node.status().message();
  BOOST_TEST((node.status().code() == StatusCode::kInvalidArgument));
  BOOST_TEST(msg.find(std::string("SimNode ") + bad.field + ": line ") != std::string::npos, msg);
}

BOOST_AUTO_TEST_CASE(section_of_the_wrong_kind_is_rejected) {
  std::string head = kBase;
  head = head.substr(0, head.find("cards:"));
  StatusOr<SimNode> cards = ParseSimNode(head + "cards: 3\n");
  BOOST_REQUIRE(!cards.ok());
  BOOST_TEST(
      cards.status().message().find("SimNode cards: line 5: must be a list") != std::string::npos,
      cards.status().message());
  std::string with_cards = kBase;
  with_cards = with_cards.substr(0, with_cards.find("links:"));
  StatusOr<SimNode> vhcus = ParseSimNode(with_cards + "vhcus: {id: 0}\n");
  BOOST_REQUIRE(!vhcus.ok());
  BOOST_TEST(vhcus.status().message().find("SimNode vhcus: line") != std::string::npos,
             vhcus.status().message());
  StatusOr<SimNode> mig = ParseSimNode(with_cards + "mig: [1]\n");
  BOOST_REQUIRE(!mig.ok());
  BOOST_TEST(mig.status().message().find("SimNode mig: line") != std::string::npos,
             mig.status().message());
}

BOOST_AUTO_TEST_CASE(error_line_points_at_the_bad_value) {
  StatusOr<SimNode> node =
      ParseSimNode(Edit("memoryMiB: 65520\n    numaNode: -1", "memoryMiB: 0\n    numaNode: -1"));
  BOOST_REQUIRE(!node.ok());
  BOOST_TEST(node.status().message().find("cards[1].memoryMiB: line 23:") != std::string::npos,
             node.status().message());
}

BOOST_AUTO_TEST_CASE(mig_slices_of_a_card_may_not_exceed_four) {
  std::string extra =
      "\n    - {card: 0, gi: 2, ci: 0, profile: 8g.63gb, computeUnits: 80, memoryMiB: 65520, "
      "uuid: 1fd630f1-f29d-4da9-953f-48f1a09f76b5}\n";
  StatusOr<SimNode> node = ParseSimNode(std::string(kBase) + extra);
  BOOST_REQUIRE(!node.ok());
  BOOST_TEST(node.status().message().find("mig.instances[1].profile") != std::string::npos,
             node.status().message());
}

BOOST_AUTO_TEST_CASE(text_that_is_not_yaml_is_a_clear_error) {
  for (const char* text : {"cards: [1, 2\n", "{{{", "key: \"unterminated\n", "\t- a: b\n  c"}) {
    StatusOr<SimNode> node = ParseSimNode(text);
    BOOST_REQUIRE(!node.ok());
    BOOST_TEST(node.status().message().find("line") != std::string::npos, node.status().message());
  }
}

BOOST_AUTO_TEST_CASE(yaml_that_is_not_a_mapping_is_a_clear_error) {
  for (const char* text : {"- a\n- b\n", "just a string\n", "42"}) {
    StatusOr<SimNode> node = ParseSimNode(text);
    BOOST_REQUIRE(!node.ok());
    BOOST_TEST(node.status().message().find("must be a mapping") != std::string::npos,
               node.status().message());
  }
  StatusOr<SimNode> empty = ParseSimNode("");
  BOOST_REQUIRE(!empty.ok());
  BOOST_TEST(empty.status().message().find("empty") != std::string::npos);
}

// The SimNode file is the user's start-up input: a missing one is bad input
// (the daemon and hcuctl exit 2), named in the message.
BOOST_AUTO_TEST_CASE(load_reports_a_missing_file_as_bad_input_naming_it) {
  StatusOr<SimNode> node = LoadSimNode("/nonexistent/node.yaml");
  BOOST_REQUIRE(!node.ok());
  BOOST_TEST((node.status().code() == StatusCode::kInvalidArgument));
  BOOST_TEST(node.status().message().find("/nonexistent/node.yaml") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(load_error_names_the_file) {
  testing::TempDir dir;
  testing::WriteFile(dir.Join("bad.yaml"), Edit("kind: SimNode", "kind: Node"));
  StatusOr<SimNode> node = LoadSimNode(dir.Join("bad.yaml"));
  BOOST_REQUIRE(!node.ok());
  BOOST_TEST(node.status().message().find(dir.Join("bad.yaml") + ": SimNode kind: line 2") !=
                 std::string::npos,
             node.status().message());
}

BOOST_AUTO_TEST_CASE(default_host_root_is_private_stable_and_never_root) {
  std::string a = DefaultSimHostRoot("/some/dir/k100ai-8.yaml");
  BOOST_TEST(a == DefaultSimHostRoot("/some/dir/../dir/k100ai-8.yaml"));
  BOOST_TEST(a != DefaultSimHostRoot("/other/dir/k100ai-8.yaml"));
  BOOST_TEST(a.find("/hcudp-sim-k100ai-8-") != std::string::npos, a);
  BOOST_TEST(a != "/");
  std::string odd = DefaultSimHostRoot("/x/we ird$name.yaml");
  BOOST_TEST(odd.find("hcudp-sim-we_ird_name-") != std::string::npos, odd);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
