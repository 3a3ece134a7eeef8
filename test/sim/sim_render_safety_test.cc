// The sim never renders into the real root and never removes what it did not
// render (issue 9 item 8): a bind mount of / (a DaemonSet's /host) is the
// real root by device and inode, whatever its path; pruning leaves files an
// admin or another tool put under the host-root alone.
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>

#include "hcudp/sim_node.h"
#include "testing/testutil.h"

namespace hcudp {
namespace {

using testing::LoadSourceNode;

namespace fs = std::filesystem;
using testing::PathExists;

// / bind-mounted on a fresh directory; unmounted (lazily, so it cannot
// fail on a busy mount) before the directory is removed.
class RootBind {
 public:
  explicit RootBind(const std::string& at) : at_(at) {
    fs::create_directories(at_);
    mounted_ = ::mount("/", at_.c_str(), nullptr, MS_BIND, nullptr) == 0;
  }
  ~RootBind() {
    if (mounted_) ::umount2(at_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }

 private:
  std::string at_;
  bool mounted_ = false;
};

BOOST_AUTO_TEST_SUITE(sim_render_safety)

BOOST_AUTO_TEST_CASE(refuses_a_bind_mount_of_the_real_root) {
  testing::TempDir dir;
  const std::string host = dir.Join("host");
  RootBind bind(host);  // destroyed before `dir`: nothing under / is removed
  if (!bind.mounted()) {
    BOOST_TEST_MESSAGE("skipped: cannot bind-mount / here (needs root and CAP_SYS_ADMIN)");
    return;
  }
  // By name it is not "/": only device and inode tell.
  BOOST_REQUIRE(fs::weakly_canonical(host) != fs::path("/"));
  struct stat a {
  }, b{};
  BOOST_REQUIRE(::stat("/", &a) == 0 && ::stat(host.c_str(), &b) == 0);
  BOOST_REQUIRE(a.st_dev == b.st_dev && a.st_ino == b.st_ino);

  Status s = RenderSimNode(LoadSourceNode("demo/nodes/k100ai-8.yaml"), host);
  BOOST_TEST(!s.ok());
  BOOST_TEST((s.code() == StatusCode::kInvalidArgument));
  BOOST_TEST(s.message().find(host) != std::string::npos, s.message());
  BOOST_TEST(s.message().find("real root") != std::string::npos, s.message());
}

BOOST_AUTO_TEST_CASE(pruning_leaves_foreign_files_alone) {
  testing::TempDir dir;
  const std::string root = dir.path();
  BOOST_REQUIRE(RenderSimNode(LoadSourceNode("demo/nodes/bw-mig.yaml"), root).ok());
  const std::string mig = root + "/etc/dmi_mig_config";
  // An admin's files next to the sim's, in every directory the sim prunes.
  const std::vector<std::string> foreign = {
      mig + "/admin-notes",
      mig + "/ci/dev9gi0ci0.conf",
      root + "/dev/dri/card99",
      root + "/sys/bus/pci/devices/0000:ff:00.0/vendor",
      root + "/sys/class/kfd/kfd/topology/nodes/99/gpu_id",
      root + "/sys/module/hycu/drivers/pci:hycu/0000:ff:00.0/drm/card99/x",
  };
  for (const std::string& f : foreign) testing::WriteFile(f, "not the sim's\n");

  // The same node again, then MIG off (the sim's MIG files all go).
  BOOST_REQUIRE(RenderSimNode(LoadSourceNode("demo/nodes/bw-mig.yaml"), root).ok());
  SimNode off = LoadSourceNode("demo/nodes/bw-mig.yaml");
  off.mig_enabled = false;
  off.cards.pop_back();
  BOOST_REQUIRE(RenderSimNode(off, root).ok());

  for (const std::string& f : foreign) BOOST_TEST(PathExists(f), f);
  // What the sim rendered and no longer renders is gone.
  BOOST_TEST(!PathExists(mig + "/dev0"));
  BOOST_TEST(!PathExists(mig + "/ci/dev0gi0ci0.conf"));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
