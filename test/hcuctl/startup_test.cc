// hcuctl's start-up (issue 10 items 8, 11, 12): bad start-up input is exit 2
// and one plain line, as in the daemon; a normal run prints no glog preamble
// or INFO lines; bounds on --device-split-count carry the reason; the name
// of a vHCU under 1 GiB follows the vendor's rounding.
#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "testing/testutil.h"

namespace hcudp::testing {
namespace {

size_t LineCount(const std::string& text) {
  size_t n = 0;
  for (char c : text) n += c == '\n';
  return n + (!text.empty() && text.back() != '\n');
}

BOOST_AUTO_TEST_SUITE(hcuctl_startup)

BOOST_AUTO_TEST_CASE(a_normal_run_prints_no_glog_preamble_or_info_lines) {
  TempDir root;
  RunResult r =
      Run({Hcuctl(), "--backend=sim", "--sim-node=" + SourcePath("demo/nodes/z100l-mixed.yaml"),
           "--host-root=" + root.Join("root"), "vhcu", "create", "--card", "0", "--cu", "1",
           "--mem-mib", "64"});
  BOOST_TEST(r.exit_code == 0, r.err);
  BOOST_TEST(r.err.empty(), "stderr:\n" << r.err);
}

BOOST_AUTO_TEST_CASE(a_bad_node_file_is_exit_2_and_one_line) {
  TempDir dir;
  const std::string node = dir.Join("bad.yaml");
  WriteNodeWithUnknownField(node);
  for (const std::string& path : {node, dir.Join("missing.yaml")}) {
    BOOST_TEST_CONTEXT(path) {
      RunResult r = Run({Hcuctl(), "--backend=sim", "--sim-node=" + path,
                         "--host-root=" + dir.Join("root"), "devices"});
      BOOST_TEST(r.exit_code == 2, r.err);
      BOOST_TEST(LineCount(r.err) == 1u, r.err);
      BOOST_TEST(r.err.rfind("hcuctl devices: --sim-node: ", 0) == 0u, r.err);
    }
  }
}

BOOST_AUTO_TEST_CASE(device_split_count_is_bounded_with_the_reason) {
  RunResult r =
      Run({Hcuctl(), "--backend=sim", "--sim-node=" + SourcePath("demo/nodes/k100ai-8.yaml"),
           "names", "--strategy=hami", "--device-split-count=2147483647"});
  BOOST_TEST(r.exit_code == 2, r.err);
  BOOST_TEST(r.err.find("--device-split-count") != std::string::npos, r.err);
  BOOST_TEST(r.err.find("4 MiB") != std::string::npos, r.err);
  BOOST_TEST(r.err.rfind("hcuctl names: --device-split-count: 2147483647 is above 1024", 0) == 0u,
             r.err);
}

// hcuctl shares --hyhal-path with the daemon (allocate and doctor show it
// as a host path): a relative or empty value is exit 2 and one line.
BOOST_AUTO_TEST_CASE(a_hyhal_path_that_is_not_absolute_is_exit_2_and_one_line) {
  TempDir root;
  const std::vector<std::string> base = {Hcuctl(), "--backend=sim",
                                         "--sim-node=" + SourcePath("demo/nodes/k100ai-8.yaml"),
                                         "--host-root=" + root.Join("root")};
  struct Case {
    std::vector<std::string> args;
    std::vector<std::string> env;
    std::string first_line;
  };
  const std::vector<Case> cases = {
      {{"--hyhal-path=opt/hyhal", "devices"},
       {},
       "hcuctl: --hyhal-path: \"opt/hyhal\" is not an absolute path\n"},
      {{"devices"},
       {"HYHAL_PATH="},
       "hcuctl: --hyhal-path (env HYHAL_PATH): \"\" is not an absolute path\n"},
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.first_line) {
      std::vector<std::string> argv = base;
      argv.insert(argv.end(), c.args.begin(), c.args.end());
      RunResult r = Run(argv, c.env);
      BOOST_TEST(r.exit_code == 2, r.err);
      BOOST_TEST(r.err.rfind(c.first_line, 0) == 0u, r.err);
      BOOST_TEST(r.out.empty(), r.out);
    }
  }
}

// The vendor names a vHCU by round(memory / 1 GiB), half away from zero
// (reference/seed-behaviour.md §2.2): under 512 MiB that is "0g". Pods
// written for the vendor plugin ask for that name, so it is kept.
BOOST_AUTO_TEST_CASE(a_vhcu_under_half_a_gib_is_named_0g_as_the_vendor_does) {
  TempDir root;
  for (const char* mib : {"64", "600"}) {
    RunResult r =
        Run({Hcuctl(), "--backend=sim", "--sim-node=" + SourcePath("demo/nodes/z100l-mixed.yaml"),
             "--host-root=" + root.Join("root"), "vhcu", "create", "--card", "0", "--cu", "1",
             "--mem-mib", mib});
    BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  }
  RunResult names =
      Run({Hcuctl(), "--backend=sim", "--sim-node=" + SourcePath("demo/nodes/z100l-mixed.yaml"),
           "--host-root=" + root.Join("root"), "names"});
  BOOST_TEST(names.out.find("hygon.com/hcu-share-1c-0g") != std::string::npos, names.out);
  BOOST_TEST(names.out.find("hygon.com/hcu-share-1c-1g") != std::string::npos, names.out);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
