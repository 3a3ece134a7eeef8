// The node file seam (hcudp_internal/host_fs.h): every node path is the
// host path under the root, joined one way, whatever the root looks like;
// a relative root is resolved once, against the working directory.
#include "hcudp_internal/host_fs.h"

#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <string>

#include "testing/testutil.h"

namespace hcudp::internal {
namespace {

// Changes the working directory for a scope.
class WorkingDir {
 public:
  explicit WorkingDir(const std::string& dir) : old_(std::filesystem::current_path()) {
    std::filesystem::current_path(dir);
  }
  ~WorkingDir() { std::filesystem::current_path(old_); }

 private:
  std::filesystem::path old_;
};

BOOST_AUTO_TEST_SUITE(host_fs)

BOOST_AUTO_TEST_CASE(names_every_node_path_under_the_root) {
  const HostFs fs("/r");
  BOOST_TEST(fs.VdevDir() == "/r/etc/vdev");
  BOOST_TEST(fs.VdevConf(3) == "/r/etc/vdev/vdev3.conf");
  BOOST_TEST(fs.MarkDir() == "/r/etc/vdev/dynamic");
  BOOST_TEST(fs.Mark("uid_c_0_1") == "/r/etc/vdev/dynamic/uid_c_0_1");
  BOOST_TEST(fs.IntentDir() == "/r/var/lib/hcu-device-plugin/intents");
  BOOST_TEST(fs.VhcuLockFile() == "/r/var/lib/hcu-device-plugin/vhcu.lock");
  BOOST_TEST(fs.DraCheckpointDir() == "/r/var/lib/hcu-device-plugin/dra");
  BOOST_TEST(fs.BootId() == "/r/proc/sys/kernel/random/boot_id");
  BOOST_TEST(fs.MigCiDir() == "/r/etc/dmi_mig_config/ci");
  BOOST_TEST(fs.KfdNodesDir() == "/r/sys/class/kfd/kfd/topology/nodes");
  BOOST_TEST(fs.SysModuleDir() == "/r/sys/module");
  BOOST_TEST(fs.DriverModuleFile("hycu", "initstate") == "/r/sys/module/hycu/initstate");
  BOOST_TEST(fs.DriverModuleFile("hycu", "") == "/r/sys/module/hycu");
  BOOST_TEST(fs.PciDevicesDir() == "/r/sys/bus/pci/devices");
  BOOST_TEST(fs.PciDevice("0000:09:00.0") == "/r/sys/bus/pci/devices/0000:09:00.0");
  BOOST_TEST(fs.DevKfd() == "/r/dev/kfd");
  BOOST_TEST(fs.DevMkfd() == "/r/dev/mkfd");
  BOOST_TEST(fs.DevDri("renderD128") == "/r/dev/dri/renderD128");
  BOOST_TEST(fs.LocalHyhal() == "/r/usr/local/hyhal");
}

BOOST_AUTO_TEST_CASE(host_paths_carry_no_root) {
  BOOST_TEST(host_path::VdevConf(12) == "/etc/vdev/vdev12.conf");
  BOOST_TEST(host_path::Mark("m") == "/etc/vdev/dynamic/m");
  BOOST_TEST(host_path::MigCiConf("dev0gi1ci0.conf") == "/etc/dmi_mig_config/ci/dev0gi1ci0.conf");
  BOOST_TEST(host_path::DevDri("card1") == "/dev/dri/card1");
}

BOOST_AUTO_TEST_CASE(the_real_root_gives_the_host_paths_themselves) {
  for (const char* root : {"", "/", "//"}) {
    const HostFs fs(root);
    BOOST_TEST(fs.is_real_root());
    BOOST_TEST(fs.root() == "/");
    BOOST_TEST(fs.DevKfd() == "/dev/kfd");
    BOOST_TEST(fs.Path("etc/vdev") == "/etc/vdev");
  }
}

BOOST_AUTO_TEST_CASE(a_trailing_slash_on_the_root_makes_no_double_slash) {
  const HostFs fs("/tmp/node///");
  BOOST_TEST(!fs.is_real_root());
  BOOST_TEST(fs.root() == "/tmp/node");
  BOOST_TEST(fs.VdevConf(0) == "/tmp/node/etc/vdev/vdev0.conf");
  BOOST_TEST(fs.Path("//dev/kfd") == "/tmp/node/dev/kfd");
}

BOOST_AUTO_TEST_CASE(a_long_root_is_kept_whole) {
  // As long as microk8s's kubelet paths, and longer than a socket path may be.
  std::string root = "/var/snap/microk8s/common/var/lib/kubelet";
  while (root.size() < 400) root += "/a-rather-long-directory-name";
  const HostFs fs(root);
  BOOST_TEST(fs.root() == root);
  BOOST_TEST(fs.VdevConf(7) == root + "/etc/vdev/vdev7.conf");
}

BOOST_AUTO_TEST_CASE(a_relative_root_is_resolved_against_the_working_directory_once) {
  testing::TempDir dir;
  std::string expected;
  {
    WorkingDir in(dir.path());
    const HostFs fs("node/./sub/");
    expected = (std::filesystem::current_path() / "node/sub").string();
    BOOST_TEST(fs.root() == expected);
    const HostFs copy = fs;
    BOOST_TEST(copy.DevKfd() == expected + "/dev/kfd");
  }
  // Made elsewhere, the same relative root names another directory; one
  // already made does not move with the working directory.
  const HostFs here("node/sub");
  BOOST_TEST(here.root() != expected);
  BOOST_TEST(here.root().front() == '/');
}

BOOST_AUTO_TEST_CASE(file_operations_act_on_the_local_path) {
  testing::TempDir dir;
  const HostFs fs(dir.path());
  BOOST_REQUIRE(fs.MakeDirs("/etc/vdev", 0755).ok());
  BOOST_REQUIRE(fs.WriteFileAtomic(host_path::VdevConf(1), "DeviceId: 0\n", 0644,
                                   file_util::Durability::kNoSync)
                    .ok());
  BOOST_TEST(std::filesystem::is_regular_file(dir.Join("etc/vdev/vdev1.conf")));
  StatusOr<std::string> text = fs.ReadFile("/etc/vdev/vdev1.conf");
  BOOST_REQUIRE(text.ok());
  BOOST_TEST(*text == "DeviceId: 0\n");
  StatusOr<std::string> capped = fs.ReadFile("/etc/vdev/vdev1.conf", 4);
  BOOST_TEST(!capped.ok());
  BOOST_TEST(capped.status().message().find(fs.VdevConf(1)) != std::string::npos);
  StatusOr<std::string> regular = fs.ReadRegularFile(host_path::VdevConf(1));
  BOOST_REQUIRE(regular.ok());
  BOOST_TEST(*regular == "DeviceId: 0\n");
  BOOST_REQUIRE(::mkfifo(fs.VdevConf(2).c_str(), 0644) == 0);
  StatusOr<std::string> fifo = fs.ReadRegularFile(host_path::VdevConf(2));  // does not block
  BOOST_TEST((fifo.status().code() == StatusCode::kFailedPrecondition));
  BOOST_TEST(fifo.status().message() == fs.VdevConf(2) + ": a FIFO, not a regular file");
  BOOST_TEST(fs.RemoveFile(host_path::VdevConf(1)).ok());
  BOOST_TEST((fs.ReadFile(host_path::VdevConf(1)).status().code() == StatusCode::kNotFound));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::internal
