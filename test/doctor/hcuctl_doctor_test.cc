// `hcuctl doctor` (the real binary) explains a healthy and a broken node.
#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <filesystem>
#include <functional>

#include "testing/testutil.h"
#include "vendor/stub_node.h"

namespace hcudp::testing {
namespace {

namespace fs = std::filesystem;

// A node whose only broken prerequisite is what `breaks` removes.
RunResult DoctorOn(const std::function<void(const std::string& root)>& breaks,
                   const std::vector<std::string>& extra = {}) {
  StubNode node(SourcePath("demo/nodes/k100ai-8.yaml"));
  const std::string root = node.host_root();
  fs::create_directories(root + "/opt/hyhal/bin");
  fs::create_directory_symlink(StubNode::StubHyhal() + "/lib", root + "/opt/hyhal/lib");
  fs::create_symlink(StubNode::StubHyhal() + "/bin/hy-smi", root + "/opt/hyhal/bin/hy-smi");
  WriteFile(root + "/opt/dtk/.info/version", "24.04.2\n");
  WriteFile(root + "/var/lib/kubelet/device-plugins/hygon.com_hcu-1.sock", "");
  breaks(root);
  std::vector<std::string> argv = {BinaryPath("hcuctl/hcuctl"), "--host-root=" + root, "doctor"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return Run(argv);
}

BOOST_AUTO_TEST_SUITE(HcuctlDoctor)

BOOST_AUTO_TEST_CASE(ABrokenNodeExitsOneAndSaysWhatToFix) {
  RunResult r = DoctorOn([](const std::string& root) { fs::remove(root + "/dev/kfd"); });
  BOOST_CHECK_EQUAL(r.exit_code, 1);
  BOOST_CHECK_MESSAGE(r.out.find("fail    dev-kfd") != std::string::npos, r.out);
  BOOST_CHECK_MESSAGE(r.out.find("mount /dev/kfd into the plugin pod") != std::string::npos, r.out);
}

// libhydmi initialises once per process and needs the hymgr service: with
// hymgr down, exactly the DMI check fails, and it names the fix.
BOOST_AUTO_TEST_CASE(HymgrDownFailsExactlyTheDmiCheck) {
  RunResult r = DoctorOn([](const std::string& root) {
    WriteFile(root + "/var/lib/kubelet/device-plugins/kubelet.sock", "");  // a warning only
    WriteFile(std::getenv("HCUDP_STUB_CONTROL"), "hymgr=down\n");
  });
  BOOST_CHECK_EQUAL(r.exit_code, 1);
  size_t fails = 0;
  for (size_t at = r.out.find("\nfail "); at != std::string::npos;
       at = r.out.find("\nfail ", at + 1)) {
    ++fails;
  }
  BOOST_CHECK_MESSAGE(fails == 1, r.out);
  BOOST_CHECK_MESSAGE(r.out.find("fail    dmi") != std::string::npos, r.out);
  BOOST_CHECK_MESSAGE(r.out.find("start the hymgr service") != std::string::npos, r.out);
}

BOOST_AUTO_TEST_CASE(WarningsAloneExitZeroAndJsonListsEveryCheck) {
  // kubelet.sock is a regular file here (a warning); everything else passes.
  RunResult r = DoctorOn(
      [](const std::string& root) {
        WriteFile(root + "/var/lib/kubelet/device-plugins/kubelet.sock", "");
      },
      {"-o", "json"});
  BOOST_CHECK_MESSAGE(r.exit_code == 0, r.out + r.err);
  BOOST_CHECK_MESSAGE(r.out.find("\"kubelet-socket\"") != std::string::npos, r.out);
  BOOST_CHECK_MESSAGE(r.out.find("\"warn\"") != std::string::npos, r.out);
  BOOST_CHECK_MESSAGE(r.out.find("\"fail\"") == std::string::npos, r.out);
}

BOOST_AUTO_TEST_CASE(StrategyFlagDrivesTheMigCheck) {
  RunResult r = DoctorOn(
      [](const std::string& root) {
        WriteFile(root + "/var/lib/kubelet/device-plugins/kubelet.sock", "");
      },
      {"--strategy=mig"});
  BOOST_CHECK_EQUAL(r.exit_code, 1);
  BOOST_CHECK_MESSAGE(r.out.find("strategy is mig but MIG mode is off") != std::string::npos,
                      r.out);
}

BOOST_AUTO_TEST_CASE(HelpListsTheDoctorCommand) {
  RunResult r = Run({BinaryPath("hcuctl/hcuctl"), "--help"});
  BOOST_CHECK_EQUAL(r.exit_code, 0);
  BOOST_CHECK_MESSAGE(r.out.find("  doctor") != std::string::npos, r.out);
  RunResult usage = Run({BinaryPath("hcuctl/hcuctl"), "doctor", "extra"});
  BOOST_CHECK_EQUAL(usage.exit_code, 2);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
