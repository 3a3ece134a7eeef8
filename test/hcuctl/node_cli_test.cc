// hcuctl through the node's one door (issue 28, repro 3), driving the real
// binary: unknown cards and an unknown MIG mode are shown, never left out or
// read as "off"; `vhcu destroy` refuses when the ledger cannot be read.
#include <sys/stat.h>

#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "testing/testutil.h"
#include "vendor/stub_node.h"

namespace hcudp::testing {
namespace {

bool Has(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// hcuctl on the host backend over the stand-in vendor libraries, answering
// from demo/nodes/k100ai-8.yaml (8 whole K100_AI cards).
RunResult OnStubNode(const StubNode& node, std::vector<std::string> args) {
  std::vector<std::string> argv = {"/usr/bin/timeout", "20s", Hcuctl(),
                                   "--hyhal-path=" + StubNode::StubHyhal(),
                                   "--host-root=" + node.host_root()};
  argv.insert(argv.end(), args.begin(), args.end());
  return Run(argv);
}

// hcuctl on a private z100l-mixed sim node (vdev0-3 on card 2, vdev4-5 on
// card 3, pre-split by an admin).
RunResult OnMixedNode(const TempDir& root, std::vector<std::string> args) {
  std::vector<std::string> argv = {"/usr/bin/timeout",
                                   "20s",
                                   Hcuctl(),
                                   "--backend=sim",
                                   "--sim-node=" + SourcePath("demo/nodes/z100l-mixed.yaml"),
                                   "--host-root=" + root.Join("root"),
                                   "--pod-resources-socket=" + root.Join("none.sock")};
  argv.insert(argv.end(), args.begin(), args.end());
  return Run(argv);
}

BOOST_AUTO_TEST_SUITE(hcuctl_node)

// Failed first on main: the card was silently left out.
BOOST_AUTO_TEST_CASE(devices_lists_an_unknown_card_and_why) {
  StubNode node(SourcePath("demo/nodes/k100ai-8.yaml"));
  node.Control("query_fails=1\n");
  RunResult table = OnStubNode(node, {"devices"});
  BOOST_TEST(table.exit_code == 0, table.err);
  BOOST_TEST(Has(table.out, "0000:29:00.0"), table.out);
  BOOST_TEST(Has(table.out, "Unknown"), table.out);
  BOOST_TEST(Has(table.out + table.err, "query failed"), table.out << table.err);
  RunResult json = OnStubNode(node, {"devices", "-o", "json"});
  BOOST_TEST(json.exit_code == 0, json.err);
  BOOST_TEST(Has(json.out, "\"unknownCards\""), json.out);
  BOOST_TEST(Has(json.out, "\"reason\": \"query failed\""), json.out);
}

// Failed first on main: a failed MIG mode query read as "off".
BOOST_AUTO_TEST_CASE(devices_says_when_the_mig_mode_is_unknown) {
  StubNode node(SourcePath("demo/nodes/k100ai-8.yaml"));
  node.Control("mig_mode_fails=1\n");
  RunResult json = OnStubNode(node, {"devices", "-o", "json"});
  BOOST_TEST(json.exit_code == 0, json.err);
  BOOST_TEST(Has(json.out, "\"modeKnown\": false"), json.out);
  RunResult table = OnStubNode(node, {"devices"});
  BOOST_TEST(Has(table.out + table.err, "MIG mode"), table.out << table.err);
}

// Failed first on main: whole cards were offered though the node may be in
// MIG mode.
BOOST_AUTO_TEST_CASE(names_offers_no_whole_card_while_the_mig_mode_is_unknown) {
  StubNode node(SourcePath("demo/nodes/k100ai-8.yaml"));
  RunResult known = OnStubNode(node, {"names", "--strategy", "hcu", "-o", "json"});
  BOOST_TEST(known.exit_code == 0, known.err);
  BOOST_TEST(Has(known.out, "0000:29:00.0"), known.out);
  node.Control("mig_mode_fails=1\n");
  RunResult unknown = OnStubNode(node, {"names", "--strategy", "hcu", "-o", "json"});
  BOOST_TEST(unknown.exit_code == 0, unknown.err);
  BOOST_TEST(!Has(unknown.out, "0000:29:00.0"), unknown.out);
}

// Failed first on main: an entry that does not decode was read as "no
// claim", and a pre-split vHCU a claim may hold was destroyed.
BOOST_AUTO_TEST_CASE(vhcu_destroy_refuses_when_a_dra_checkpoint_entry_does_not_decode) {
  TempDir root;
  RunResult listed = OnMixedNode(root, {"vhcu", "list"});  // renders the node
  BOOST_REQUIRE_MESSAGE(listed.exit_code == 0, listed.err);
  const std::string entry = root.Join("root/var/lib/hcu-device-plugin/dra/0c4e-torn.json");
  WriteFile(entry, "{\"uid\": \"0c4e-torn\", \"devices\": [{\"kind\": \"vhcu\", \"vhcu");
  RunResult refused = OnMixedNode(root, {"vhcu", "destroy", "vdev4"});
  BOOST_TEST(refused.exit_code == 1, refused.err);
  BOOST_TEST(Has(refused.err, "0c4e-torn.json"), refused.err);
  BOOST_TEST(Has(refused.err, "--force"), refused.err);
  BOOST_TEST(PathExists(root.Join("root/etc/vdev/vdev4.conf")));
  RunResult forced = OnMixedNode(root, {"vhcu", "destroy", "--force", "vdev4"});
  BOOST_TEST(forced.exit_code == 0, forced.err);
  BOOST_TEST(!PathExists(root.Join("root/etc/vdev/vdev4.conf")));
}

// Failed first on main: the checkpoint could not be read at all, and that
// read as "no claim".
BOOST_AUTO_TEST_CASE(vhcu_destroy_refuses_when_the_dra_checkpoint_cannot_be_listed) {
  TempDir root;
  RunResult listed = OnMixedNode(root, {"vhcu", "list"});
  BOOST_REQUIRE_MESSAGE(listed.exit_code == 0, listed.err);
  // A file where the checkpoint directory should be.
  WriteFile(root.Join("root/var/lib/hcu-device-plugin/dra"), "not a directory");
  RunResult refused = OnMixedNode(root, {"vhcu", "destroy", "vdev4"});
  BOOST_TEST(refused.exit_code == 1, refused.err);
  BOOST_TEST(Has(refused.err, "checkpoint"), refused.err);
  BOOST_TEST(PathExists(root.Join("root/etc/vdev/vdev4.conf")));
}

// Failed first on main: a FIFO entry was skipped as "no claim".
BOOST_AUTO_TEST_CASE(vhcu_destroy_refuses_when_a_checkpoint_entry_is_a_fifo) {
  TempDir root;
  RunResult listed = OnMixedNode(root, {"vhcu", "list"});
  BOOST_REQUIRE_MESSAGE(listed.exit_code == 0, listed.err);
  WriteFile(root.Join("root/var/lib/hcu-device-plugin/dra/keep"), "");
  BOOST_REQUIRE(
      ::mkfifo(root.Join("root/var/lib/hcu-device-plugin/dra/0c4e-fifo.json").c_str(), 0644) == 0);
  RunResult refused = OnMixedNode(root, {"vhcu", "destroy", "vdev4"});
  BOOST_TEST(refused.exit_code == 1, refused.err);
  BOOST_TEST(Has(refused.err, "0c4e-fifo.json"), refused.err);
  BOOST_TEST(PathExists(root.Join("root/etc/vdev/vdev4.conf")));
}

BOOST_AUTO_TEST_CASE(vhcu_destroy_refuses_a_pre_split_vhcu_a_dra_claim_holds) {
  TempDir root;
  RunResult listed = OnMixedNode(root, {"vhcu", "list"});
  BOOST_REQUIRE_MESSAGE(listed.exit_code == 0, listed.err);
  WriteFile(
      root.Join("root/var/lib/hcu-device-plugin/dra/0c4e-held.json"),
      R"({"version": 1, "uid": "0c4e-held", "namespace": "ns", "name": "held", "owner": "0c4e-held",
  "bootID": "", "state": "prepared", "devices": [{"request": "hcu", "pool": "node",
  "device": "vhcu-4", "kind": "vhcu", "card": 3, "cardBDF": "0000:8e:00.0", "vhcuID": 4,
  "cdiDeviceIDs": []}]})");
  RunResult refused = OnMixedNode(root, {"vhcu", "destroy", "vdev4"});
  BOOST_TEST(refused.exit_code == 1, refused.err);
  BOOST_TEST(PathExists(root.Join("root/etc/vdev/vdev4.conf")));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
