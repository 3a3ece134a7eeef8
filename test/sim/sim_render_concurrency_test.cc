// Any number of processes render one host-root at once: the daemon and
// hcuctl pointed at one SimNode do, and a render that collided with another
// on a fixed temporary name ("cannot rename .../.link.tmp") kept the daemon
// from starting, in one start of four.
#include <sys/wait.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "hcudp/sim_node.h"
#include "testing/testutil.h"

namespace hcudp {
namespace {

constexpr int kRenderers = 8;
constexpr int kRounds = 12;

// Forks kRenderers children that wait at one barrier (a pipe the parent
// closes), then each renders `node` into `root`. The exit code of each
// (0 rendered, 1 failed, printing why).
std::vector<int> RenderAtOnce(const SimNode& node, const std::string& root) {
  int barrier[2];
  BOOST_REQUIRE(::pipe(barrier) == 0);
  std::vector<pid_t> children;
  for (int i = 0; i < kRenderers; ++i) {
    const pid_t pid = ::fork();
    BOOST_REQUIRE(pid >= 0);
    if (pid == 0) {
      ::close(barrier[1]);
      char c;
      while (::read(barrier[0], &c, 1) < 0) {
      }
      Status st = RenderSimNode(node, root);
      if (!st.ok()) std::fprintf(stderr, "renderer %d: %s\n", i, st.ToString().c_str());
      ::_exit(st.ok() ? 0 : 1);
    }
    children.push_back(pid);
  }
  ::close(barrier[0]);
  ::close(barrier[1]);  // go
  std::vector<int> codes;
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    codes.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  }
  return codes;
}

// Names under `root` that a write left behind (temporary files and links).
std::vector<std::string> TempLeftovers(const std::string& root) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    const std::string name = e.path().filename().string();
    if (name.size() >= 4 && name.compare(name.size() - 4, 4, ".tmp") == 0) {
      out.push_back(e.path().string());
    }
  }
  return out;
}

BOOST_AUTO_TEST_SUITE(sim_render_concurrency)

BOOST_AUTO_TEST_CASE(several_processes_render_one_fresh_host_root_at_once) {
  const SimNode node = testing::LoadSourceNode("demo/nodes/k100ai-8.yaml");
  for (int round = 0; round < kRounds; ++round) {
    testing::TempDir dir;
    const std::vector<int> codes = RenderAtOnce(node, dir.Join("root"));
    BOOST_TEST(codes == std::vector<int>(kRenderers, 0), boost::test_tools::per_element());
    BOOST_TEST(TempLeftovers(dir.Join("root")).empty());
    if (codes != std::vector<int>(kRenderers, 0)) break;
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
