// Drives the real hcuctl binary on the shipped demo nodes: golden output for
// names and devices, vHCU management across invocations, and exit codes.
// Set HCUDP_UPDATE_GOLDEN=1 to rewrite the golden files after a deliberate
// change, then review the diff.
#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <string>
#include <vector>

#include "testing/testutil.h"

namespace hcudp::testing {
namespace {

RunResult RunOnNode(const TempDir& root, const std::string& node, std::vector<std::string> args) {
  std::vector<std::string> argv = {Hcuctl(), "--backend=sim",
                                   "--sim-node=" + SourcePath("demo/nodes/" + node + ".yaml"),
                                   "--host-root=" + root.Join("root")};
  argv.insert(argv.end(), args.begin(), args.end());
  return Run(argv);
}

void CheckGolden(const std::string& name, const std::string& actual) {
  std::string path = SourcePath("test/hcuctl/golden/" + name);
  if (std::getenv("HCUDP_UPDATE_GOLDEN") != nullptr) {
    WriteFile(path, actual);
    return;
  }
  BOOST_REQUIRE_MESSAGE(PathExists(path), "missing golden file " << path);
  BOOST_TEST(actual == ReadFile(path), "output differs from " << path << ":\n" << actual);
}

struct GoldenCase {
  std::string node;
  std::vector<std::string> args;
  std::string golden;
};

const std::vector<GoldenCase> kGoldenCases = {
    {"k100ai-8", {"names"}, "k100ai-8.names.txt"},
    {"k100ai-8", {"names", "--policy=2"}, "k100ai-8.names-policy2.txt"},
    {"k100ai-8", {"-o", "json", "devices"}, "k100ai-8.devices.json"},
    {"k100ai-8", {"topology"}, "k100ai-8.topology.txt"},
    {"z100l-mixed", {"names", "--strategy=mixed"}, "z100l-mixed.names.txt"},
    {"z100l-mixed", {"names", "--strategy=hcu", "--policy=1"}, "z100l-mixed.names-hcu-policy1.txt"},
    {"z100l-mixed", {"devices", "-o", "json"}, "z100l-mixed.devices.json"},
    {"z100l-mixed", {"vhcu", "list"}, "z100l-mixed.vhcu-list.txt"},
    {"bw-mig", {"names", "--strategy=mig"}, "bw-mig.names.txt"},
    {"bw-mig", {"-o", "yaml", "devices"}, "bw-mig.devices.yaml"},
    {"bw-mig", {"devices", "-o", "json"}, "bw-mig.devices.json"},
    {"z100l-mixed", {"names", "--strategy=hami", "-o", "json"}, "z100l-mixed.names-hami.json"},
};

BOOST_AUTO_TEST_SUITE(hcuctl_cli)

BOOST_AUTO_TEST_CASE(golden_output_on_demo_nodes) {
  for (const GoldenCase& c : kGoldenCases) {
    BOOST_TEST_CONTEXT(c.golden) {
      TempDir root;
      RunResult r = RunOnNode(root, c.node, c.args);
      BOOST_TEST(r.exit_code == 0, "stderr: " << r.err);
      CheckGolden(c.golden, r.out);
    }
  }
}

BOOST_AUTO_TEST_CASE(z100l_mixed_names_matches_the_vendor_resources) {
  TempDir root;
  RunResult r = RunOnNode(root, "z100l-mixed", {"names", "--strategy=mixed"});
  BOOST_REQUIRE(r.exit_code == 0);
  BOOST_TEST(r.out.find("hygon.com/hcu  ") != std::string::npos);
  BOOST_TEST(r.out.find("hygon.com/hcu-share-15c-8g") != std::string::npos);
  BOOST_TEST(r.out.find("hygon.com/hcu-share-30c-16g") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(created_vhcu_persists_and_becomes_a_new_profile) {
  TempDir root;
  RunResult created =
      RunOnNode(root, "z100l-mixed",
                {"vhcu", "create", "--card", "0", "--cu", "20", "--mem-mib", "4096", "-o", "json"});
  BOOST_REQUIRE_MESSAGE(created.exit_code == 0, created.err);
  BOOST_TEST(created.out.find("\"deviceId\": \"vdev6\"") != std::string::npos, created.out);

  RunResult names = RunOnNode(root, "z100l-mixed", {"names"});
  BOOST_TEST(names.out.find("hygon.com/hcu-share-20c-4g") != std::string::npos, names.out);

  RunResult destroyed = RunOnNode(root, "z100l-mixed", {"vhcu", "destroy", "vdev6"});
  BOOST_TEST(destroyed.exit_code == 0, destroyed.err);
  RunResult again = RunOnNode(root, "z100l-mixed", {"vhcu", "destroy", "vdev6"});
  BOOST_TEST(again.exit_code == 1);
  BOOST_TEST(again.err.find("6") != std::string::npos, again.err);
}

// An unreadable conf is named, not silently left out (issue 9).
BOOST_AUTO_TEST_CASE(vhcu_list_names_a_conf_it_cannot_read) {
  TempDir root;
  BOOST_REQUIRE_EQUAL(RunOnNode(root, "z100l-mixed", {"vhcu", "list"}).exit_code, 0);
  const std::string conf = root.Join("root/etc/vdev/vdev4.conf");
  WriteFile(conf, "");
  RunResult r = RunOnNode(root, "z100l-mixed", {"vhcu", "list"});
  BOOST_TEST(r.exit_code == 0, r.err);
  BOOST_TEST((r.out + r.err).find("cannot read vHCU state " + conf + ":") != std::string::npos,
             r.out << r.err);
}

BOOST_AUTO_TEST_CASE(vhcu_create_beyond_capacity_fails_with_exit_1) {
  TempDir root;
  RunResult r = RunOnNode(root, "z100l-mixed",
                          {"vhcu", "create", "--card", "2", "--cu", "1", "--mem-mib", "1"});
  BOOST_TEST(r.exit_code == 1);
  BOOST_TEST(!r.err.empty());
}

struct UsageCase {
  std::vector<std::string> argv;  // after the binary
  int exit_code;
  std::string stderr_has;
};

BOOST_AUTO_TEST_CASE(bad_usage_exits_2_and_says_what_to_type) {
  std::string node = "--sim-node=" + SourcePath("demo/nodes/k100ai-8.yaml");
  TempDir root;
  std::string host_root = "--host-root=" + root.path();
  const std::vector<UsageCase> cases = {
      {{}, 2, "missing command"},
      {{"frobnicate"}, 2, "unknown command \"frobnicate\""},
      {{"--backend=sim", "devices"}, 2, "--sim-node"},
      {{"--backend=cloud", "devices"}, 2, "--backend"},
      {{"-o", "xml", "devices"}, 2, "xml"},
      {{"--backend=sim", node, host_root, "names", "--policy=3"}, 2, "usage: hcuctl"},
      {{"--backend=sim", node, host_root, "vhcu"}, 2, "list, create or destroy"},
      {{"--backend=sim", node, host_root, "vhcu", "destroy", "x7"}, 2, "not a vHCU id"},
      {{"--backend=sim", node, host_root, "vhcu", "create", "--card", "0"}, 2, "--cu"},
      {{"--backend=sim", node, host_root, "devices", "extra"}, 2, "unexpected argument"},
      {{"--backend=sim", "--sim-node=/nonexistent/node.yaml", host_root, "devices"},
       -2,
       "/nonexistent/node.yaml"},
      {{"allocate", "--resource", "hygon.com/hcunum", "--count", "1"}, 2, "--force"},
  };
  for (const UsageCase& c : cases) {
    std::vector<std::string> argv = {Hcuctl()};
    argv.insert(argv.end(), c.argv.begin(), c.argv.end());
    RunResult r = Run(argv);
    BOOST_TEST_CONTEXT(c.stderr_has) {
      if (c.exit_code == -2) {
        BOOST_TEST(r.exit_code != 0);
      } else {
        BOOST_TEST(r.exit_code == c.exit_code);
      }
      BOOST_TEST(r.err.find(c.stderr_has) != std::string::npos, "stderr: " << r.err);
    }
  }
}

BOOST_AUTO_TEST_CASE(hami_decode_detects_the_encoding_and_prints_records) {
  // seed-behaviour.md §5.2 worked example: the remaining list of two cards.
  RunResult r = Run({Hcuctl(), "hami", "decode",
                     "HCU-SN01,3,57328,70,HCU-K100_AI,0,true,0,hami:"
                     "HCU-SN02,4,65520,100,HCU-K100_AI,1,true,1,hami:"});
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  BOOST_TEST(
      r.out ==
      "encoding: node-devices\n"
      "ID        COUNT  DEVMEM_MIB  DEVCORE_PERCENT  TYPE         NUMA  HEALTHY  INDEX  MODE\n"
      "HCU-SN01  3      57328       70               HCU-K100_AI  0     true     0      hami\n"
      "HCU-SN02  4      65520       100              HCU-K100_AI  1     true     1      hami\n");

  RunResult lock = Run({Hcuctl(), "-o", "json", "hami", "decode",
                        "2026-03-01T10:00:00+08:00,default,hcu-dynamic-vhcu-demo"});
  BOOST_TEST(lock.exit_code == 0);
  BOOST_TEST(lock.out.find("\"encoding\": \"node-lock\"") != std::string::npos, lock.out);
  BOOST_TEST(lock.out.find("\"pod\": \"hcu-dynamic-vhcu-demo\"") != std::string::npos, lock.out);
}

BOOST_AUTO_TEST_CASE(hami_encode_writes_the_wire_string_byte_for_byte) {
  RunResult r = Run({Hcuctl(), "hami", "encode", "pod-devices", "container=0",
                     "container=1,uuid=HCU-SN01,type=HCU,used_mem_mib=8192,used_cores_percent=30"});
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  BOOST_TEST(r.out == ";HCU-SN01,HCU,8192,30:;\n");
}

BOOST_AUTO_TEST_CASE(hami_bad_values_exit_2_with_the_reason) {
  RunResult garbage = Run({Hcuctl(), "hami", "decode", "garbage"});
  BOOST_TEST(garbage.exit_code == 2);
  BOOST_TEST(garbage.err.find("no HAMi encoding") != std::string::npos, garbage.err);
  RunResult wrong_as = Run({Hcuctl(), "hami", "decode", "--as", "node-lock", "HCU-SN01,4:"});
  BOOST_TEST(wrong_as.exit_code == 2);
  RunResult bad_record = Run({Hcuctl(), "hami", "encode", "node-lock", "time"});
  BOOST_TEST(bad_record.exit_code == 2);
  BOOST_TEST(bad_record.err.find("is not name=value") != std::string::npos, bad_record.err);
}

BOOST_AUTO_TEST_CASE(version_prints_a_version) {
  RunResult r = Run({Hcuctl(), "version"});
  BOOST_TEST(r.exit_code == 0);
  BOOST_TEST(r.out.rfind("hcuctl v", 0) == 0, r.out);
}

BOOST_AUTO_TEST_CASE(help_lists_every_command) {
  RunResult r = Run({Hcuctl(), "--help"});
  BOOST_TEST(r.exit_code == 0);
  for (const char* c : {"devices", "names", "topology", "vhcu", "plugins", "allocate",
                        "allocations", "hami", "version"}) {
    BOOST_TEST(r.out.find(std::string("  ") + c) != std::string::npos, c);
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
