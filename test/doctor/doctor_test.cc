// RunDoctor on rendered node trees: every check passes on a healthy node and
// each one fails (or warns) with a fix when its prerequisite is broken.
#include "hcudp/doctor.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cstring>
#include <filesystem>
#include <functional>

#include "doctor/checks.h"
#include "testing/testutil.h"
#include "vendor/stub_node.h"

namespace hcudp {
namespace {

namespace fs = std::filesystem;
using testing::StubNode;
using testing::WriteFile;

void MakeSocket(const std::string& path) {
  fs::create_directories(fs::path(path).parent_path());
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  BOOST_REQUIRE(fd >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  BOOST_REQUIRE(path.size() < sizeof(addr.sun_path));
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  BOOST_REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  close(fd);  // the socket file stays
}

// A healthy node: the SimNode's rendered driver files, the stand-in hyhal
// under /opt/hyhal, DTK 24.04.2, kubelet and one plugin socket.
struct HealthyNode {
  explicit HealthyNode(const std::string& sim_node = "demo/nodes/k100ai-8.yaml")
      : stub(testing::SourcePath(sim_node)) {
    const std::string root = stub.host_root();
    fs::create_directories(root + "/opt/hyhal/bin");
    fs::create_directory_symlink(StubNode::StubHyhal() + "/lib", root + "/opt/hyhal/lib");
    fs::create_symlink(StubNode::StubHyhal() + "/bin/hy-smi", root + "/opt/hyhal/bin/hy-smi");
    WriteFile(root + "/opt/dtk/.info/version", "24.04.2\n");
    MakeSocket(root + "/var/lib/kubelet/device-plugins/kubelet.sock");
    WriteFile(root + "/var/lib/kubelet/device-plugins/hygon.com_hcu-1234.sock", "");
    options.host_root = root;
  }
  std::string Path(const std::string& p) const { return stub.host_root() + p; }
  DoctorCheck Check(const std::string& name) const {
    for (const DoctorCheck& c : RunDoctor(options)) {
      if (c.name == name) return c;
    }
    BOOST_FAIL("no check named " + name);
    return {};
  }

  StubNode stub;
  DoctorOptions options;
};

BOOST_AUTO_TEST_SUITE(Doctor)

BOOST_AUTO_TEST_CASE(EveryCheckPassesOnAHealthyNode) {
  HealthyNode node;
  const std::vector<DoctorCheck> checks = RunDoctor(node.options);
  const std::vector<std::string> expected = {"driver-live",
                                             "driver-version",
                                             "dev-kfd",
                                             "dev-mkfd",
                                             "dri-nodes",
                                             "vendor-libraries",
                                             "dmi",
                                             "hy-smi-version",
                                             "dtk-version",
                                             "kubelet-plugin-dir",
                                             "kubelet-socket",
                                             "plugin-sockets",
                                             "mig-consistency"};
  BOOST_REQUIRE_EQUAL(checks.size(), expected.size());
  for (size_t i = 0; i < checks.size(); ++i) {
    BOOST_CHECK_EQUAL(checks[i].name, expected[i]);
    BOOST_CHECK_MESSAGE(checks[i].status == CheckStatus::kOk,
                        checks[i].name + ": " + checks[i].detail + " / " + checks[i].fix);
    BOOST_CHECK(checks[i].fix.empty());
  }
}

struct Breakage {
  const char* what;
  std::function<void(HealthyNode&)> breaks;
  const char* check;
  CheckStatus status;
  const char* detail_mentions;
};

BOOST_AUTO_TEST_CASE(EachBrokenPrerequisiteIsReportedWithAFix) {
  const Breakage cases[] = {
      {"driver unloaded", [](HealthyNode& n) { fs::remove_all(n.Path("/sys/module/hycu")); },
       "driver-live", CheckStatus::kFail, "not loaded"},
      {"driver loading",
       [](HealthyNode& n) { WriteFile(n.Path("/sys/module/hycu/initstate"), "coming\n"); },
       "driver-live", CheckStatus::kFail, "coming"},
      {"old driver",
       [](HealthyNode& n) { WriteFile(n.Path("/sys/module/hycu/version"), "6.2.20-V1.0\n"); },
       "driver-version", CheckStatus::kWarn, "6.2.20"},
      {"no /dev/kfd", [](HealthyNode& n) { fs::remove(n.Path("/dev/kfd")); }, "dev-kfd",
       CheckStatus::kFail, "/dev/kfd"},
      {"no /dev/mkfd", [](HealthyNode& n) { fs::remove(n.Path("/dev/mkfd")); }, "dev-mkfd",
       CheckStatus::kFail, "/dev/mkfd"},
      {"render node missing", [](HealthyNode& n) { fs::remove_all(n.Path("/dev/dri/renderD130")); },
       "dri-nodes", CheckStatus::kFail, "renderD130"},
      {"no card bound", [](HealthyNode& n) { fs::remove_all(n.Path("/sys/module/hycu/drivers")); },
       "dri-nodes", CheckStatus::kFail, "no card"},
      {"no vendor libraries", [](HealthyNode& n) { fs::remove(n.Path("/opt/hyhal/lib")); },
       "vendor-libraries", CheckStatus::kFail, "librocm_smi64.so.2"},
      {"no hy-smi", [](HealthyNode& n) { fs::remove(n.Path("/opt/hyhal/bin/hy-smi")); },
       "hy-smi-version", CheckStatus::kFail, "hy-smi"},
      {"old hy-smi", [](HealthyNode& n) { n.stub.Control("hysmi_version=1.5.3\n"); },
       "hy-smi-version", CheckStatus::kWarn, "1.5.3"},
      {"old DTK", [](HealthyNode& n) { WriteFile(n.Path("/opt/dtk/.info/version"), "23.10.1\n"); },
       "dtk-version", CheckStatus::kWarn, "23.10.1"},
      {"no DTK", [](HealthyNode& n) { fs::remove_all(n.Path("/opt/dtk")); }, "dtk-version",
       CheckStatus::kWarn, "no DTK"},
      {"no kubelet", [](HealthyNode& n) { fs::remove_all(n.Path("/var/lib/kubelet")); },
       "kubelet-plugin-dir", CheckStatus::kFail, "missing"},
      {"no kubelet.sock",
       [](HealthyNode& n) { fs::remove(n.Path("/var/lib/kubelet/device-plugins/kubelet.sock")); },
       "kubelet-socket", CheckStatus::kFail, "missing"},
      {"kubelet.sock not a socket",
       [](HealthyNode& n) {
         const std::string p = n.Path("/var/lib/kubelet/device-plugins/kubelet.sock");
         fs::remove(p);
         WriteFile(p, "");
       },
       "kubelet-socket", CheckStatus::kWarn, "not a socket"},
      {"plugin not running",
       [](HealthyNode& n) {
         fs::remove(n.Path("/var/lib/kubelet/device-plugins/hygon.com_hcu-1234.sock"));
       },
       "plugin-sockets", CheckStatus::kWarn, "no hygon.com_"},
      {"strategy mig without MIG", [](HealthyNode& n) { n.options.strategy = Strategy::kMig; },
       "mig-consistency", CheckStatus::kFail, "MIG mode is off"},
  };
  for (const Breakage& c : cases) {
    HealthyNode node;
    c.breaks(node);
    const DoctorCheck got = node.Check(c.check);
    BOOST_CHECK_MESSAGE(
        got.status == c.status,
        std::string(c.what) + ": " + std::string(CheckStatusName(got.status)) + ": " + got.detail);
    BOOST_CHECK_MESSAGE(got.detail.find(c.detail_mentions) != std::string::npos,
                        std::string(c.what) + ": " + got.detail);
    BOOST_CHECK_MESSAGE(!got.fix.empty() && got.fix.find('\n') == std::string::npos,
                        std::string(c.what) + ": fix \"" + got.fix + "\"");
  }
}

BOOST_AUTO_TEST_CASE(MigNodeIsConsistentOnlyUnderTheMigStrategy) {
  HealthyNode node("demo/nodes/bw-mig.yaml");
  node.options.strategy = Strategy::kMig;
  DoctorCheck ok = node.Check("mig-consistency");
  BOOST_CHECK_MESSAGE(ok.status == CheckStatus::kOk, ok.detail);
  node.options.strategy = Strategy::kMixed;
  DoctorCheck wrong = node.Check("mig-consistency");
  BOOST_CHECK(wrong.status == CheckStatus::kFail);
  BOOST_CHECK_MESSAGE(wrong.fix.find("--strategy=mig") != std::string::npos, wrong.fix);
}

BOOST_AUTO_TEST_CASE(MigOnWithoutInstancesAndStaleConfsAreReported) {
  testing::TempDir root;
  DoctorOptions o;
  o.host_root = root.path();
  o.strategy = Strategy::kMig;
  DoctorCheck none = doctor::CheckMigConsistency(o, internal::HostFs(o.host_root), true);
  BOOST_CHECK(none.status == CheckStatus::kFail);
  BOOST_CHECK_MESSAGE(none.detail.find("serves nothing") != std::string::npos, none.detail);
  WriteFile(root.Join("etc/dmi_mig_config/ci/dev0gi1ci0.conf"), "x\n");
  o.strategy = Strategy::kMixed;
  DoctorCheck stale = doctor::CheckMigConsistency(o, internal::HostFs(o.host_root), false);
  BOOST_CHECK(stale.status == CheckStatus::kWarn);
  BOOST_CHECK_MESSAGE(stale.detail.find("remain") != std::string::npos, stale.detail);
  DoctorCheck unknown = doctor::CheckMigConsistency(o, internal::HostFs(o.host_root), std::nullopt);
  BOOST_CHECK(unknown.status == CheckStatus::kWarn);
}

BOOST_AUTO_TEST_CASE(VersionsCompareByTheirLeadingNumbers) {
  struct Case {
    const char* version;
    const char* minimum;
    bool at_least;
  };
  const Case cases[] = {
      {"6.3.27-V1.2.5", "6.2.26", true},
      {"6.2.26", "6.2.26", true},
      {"6.2.9", "6.2.26", false},
      {"6.10", "6.2.26", true},
      {"24.04.2", "24.04", true},
      {"23.10", "24.04", false},
      {"1.6", "1.6.0", true},
      {"", "1.0", false},
      {"V1.2", "1.2", true},
      {"garbage", "1.0", false},
  };
  for (const Case& c : cases) {
    BOOST_CHECK_MESSAGE(VersionAtLeast(c.version, c.minimum) == c.at_least,
                        std::string(c.version) + " vs " + c.minimum);
  }
}

BOOST_AUTO_TEST_CASE(FindsTheFirstDottedVersionInToolOutput) {
  BOOST_CHECK_EQUAL(doctor::FirstDottedVersion("hy-smi version 1.6.2\n"), "1.6.2");
  BOOST_CHECK_EQUAL(doctor::FirstDottedVersion("HYSMI v2 (build 1.7.0)"), "1.7.0");
  BOOST_CHECK_EQUAL(doctor::FirstDottedVersion("no version"), "");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
