// hcu-dp-daemon --backend=host on broken vendor runtimes: it exits 1 at once
// with a message naming what is wrong, never crashes.
#include <boost/test/unit_test.hpp>
#include <filesystem>

#include "stub_node.h"
#include "testing/testutil.h"

namespace hcudp::testing {
namespace {

namespace fs = std::filesystem;

RunResult RunDaemon(const std::string& hyhal, const TempDir& dir) {
  return Run({BinaryPath("hcu-dp-daemon/hcu-dp-daemon"), "--backend=host",
              "--hyhal-path=" + hyhal, "--host-root=" + dir.Join("root"),
              "--device-plugin-path=" + dir.Join("plugins") + "/"},
             {"HCUDP_STUB_SIM_NODE=" + SourcePath("demo/nodes/k100ai-8.yaml")});
}

std::string HyhalWith(const TempDir& dir, const std::string& target, const std::string& name) {
  fs::create_directories(dir.Join("hyhal/lib"));
  fs::create_symlink(target, dir.Join("hyhal/lib/" + name));
  fs::create_symlink(StubNode::StubHyhal() + "/lib/libhydmi.so.1",
                     dir.Join("hyhal/lib/libhydmi.so.1"));
  return dir.Join("hyhal");
}

BOOST_AUTO_TEST_SUITE(DaemonOnBrokenVendorRuntime)

BOOST_AUTO_TEST_CASE(MissingSymbolIsNamedAndTheDaemonExitsOne) {
  TempDir dir;
  RunResult r = RunDaemon(
      HyhalWith(dir, StubNode::StubVariants() + "/missing_symbol/librocm_smi64.so.2",
                "librocm_smi64.so.2"),
      dir);
  BOOST_CHECK_EQUAL(r.exit_code, 1);
  BOOST_CHECK_MESSAGE(r.err.find("missing symbol rsmi_dev_ecc_count_get") != std::string::npos,
                      r.err);
}

BOOST_AUTO_TEST_CASE(WrongSonameIsNamedAndTheDaemonExitsOne) {
  TempDir dir;
  RunResult r = RunDaemon(
      HyhalWith(dir, StubNode::StubHyhal() + "/lib/librocm_smi64.so.2", "librocm_smi64.so.3"), dir);
  BOOST_CHECK_EQUAL(r.exit_code, 1);
  BOOST_CHECK_MESSAGE(r.err.find("found only librocm_smi64.so.3") != std::string::npos, r.err);
}

BOOST_AUTO_TEST_CASE(MissingRuntimeIsNamedAndTheDaemonExitsOne) {
  TempDir dir;
  RunResult r = RunDaemon(dir.Join("no-hyhal"), dir);
  BOOST_CHECK_EQUAL(r.exit_code, 1);
  BOOST_CHECK_MESSAGE(r.err.find("--hyhal-path " + dir.Join("no-hyhal")) != std::string::npos,
                      r.err);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
