// hcuctl labels: what the daemon would publish, as a table, JSON or the
// features.d file.
#include <boost/test/unit_test.hpp>
#include <chrono>

#include "hcudp/hami/rfc3339.h"
#include "hcudp/node_labels.h"
#include "testing/testutil.h"

namespace hcudp {
namespace {

using testing::BinaryPath;
using testing::Run;
using testing::RunResult;
using testing::SourcePath;
using testing::TempDir;

RunResult Labels(const std::string& node, const TempDir& dir, std::vector<std::string> extra) {
  std::vector<std::string> argv = {BinaryPath("hcuctl/hcuctl"), "--backend=sim",
                                   "--sim-node=" + SourcePath(node),
                                   "--host-root=" + dir.Join("root"), "labels"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return Run(argv);
}

BOOST_AUTO_TEST_SUITE(hcuctl_labels)

BOOST_AUTO_TEST_CASE(json_lists_the_label_set) {
  TempDir dir;
  RunResult r = Labels("demo/nodes/z100l-mixed.yaml", dir, {"-o", "json", "--strategy", "vhcu"});
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
  BOOST_TEST(r.out.find(R"("hygon.com/hcu.name": "Z100L")") != std::string::npos, r.out);
  BOOST_TEST(r.out.find(R"("hygon.com/hcu.strategy": "vhcu")") != std::string::npos, r.out);
  BOOST_TEST(r.out.find(R"("hygon.com/hcu.vram": "32G")") != std::string::npos, r.out);
}

BOOST_AUTO_TEST_CASE(table_of_a_heterogeneous_node_names_its_models) {
  TempDir dir;
  RunResult r = Labels("test/ops_labels/hetero-k100-z100.yaml", dir, {});
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
  BOOST_TEST(r.out.find("hygon.com/hcu.models") != std::string::npos, r.out);
  BOOST_TEST(r.out.find("K100_AI.Z100L") != std::string::npos, r.out);
  BOOST_TEST(r.out.find("hygon.com/hcu.name ") == std::string::npos, r.out);
}

BOOST_AUTO_TEST_CASE(nfd_prints_the_features_file) {
  TempDir dir;
  RunResult r = Labels("demo/nodes/bw-mig.yaml", dir, {"--nfd", "--strategy", "mig"});
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
  BOOST_TEST(r.out.find("\nhygon.com/hcu=true\n# +expiry-time=") != std::string::npos, r.out);
  BOOST_TEST(r.out.find("\nhygon.com/hcu.mig.capable=true\n") != std::string::npos, r.out);
}

// Every strategy the daemon's --strategy accepts, dra included.
BOOST_AUTO_TEST_CASE(every_daemon_strategy_is_accepted) {
  TempDir dir;
  for (const std::string strategy : {"hcu", "vhcu", "mig", "mixed", "hami", "dra"}) {
    RunResult r = Labels("demo/nodes/k100ai-8.yaml", dir, {"-o", "json", "--strategy", strategy});
    BOOST_TEST(r.exit_code == 0, strategy << ": " << r.err);
    BOOST_TEST(r.out.find(R"("hygon.com/hcu.strategy": ")" + strategy + "\"") != std::string::npos,
               r.out);
  }
  RunResult bad = Labels("demo/nodes/k100ai-8.yaml", dir, {"--strategy", "gpu"});
  BOOST_TEST(bad.exit_code == 2);
  BOOST_TEST(bad.err.find("--strategy: strategy \"gpu\" is not one of hcu, vhcu, mig, mixed, "
                          "hami, dra") != std::string::npos,
             bad.err);
}

// The expiry printed is the one the daemon writes: its publisher's default
// TTL from now.
BOOST_AUTO_TEST_CASE(nfd_expiry_is_the_daemon_ttl) {
  TempDir dir;
  const auto before = std::chrono::system_clock::now();
  RunResult r = Labels("demo/nodes/k100ai-8.yaml", dir, {"--nfd"});
  const auto after = std::chrono::system_clock::now();
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
  const std::string marker = "# +expiry-time=";
  const size_t at = r.out.find(marker);
  BOOST_TEST_REQUIRE(at != std::string::npos, r.out);
  const size_t start = at + marker.size();
  auto expiry = hami::ParseRfc3339(r.out.substr(start, r.out.find('\n', start) - start));
  BOOST_TEST_REQUIRE(expiry.ok(), expiry.status().ToString());
  const auto ttl = NodeLabelPublisherOptions{}.nfd_ttl;
  BOOST_TEST(
      (*expiry >= std::chrono::floor<std::chrono::seconds>(before + ttl) && *expiry <= after + ttl),
      r.out);
}

BOOST_AUTO_TEST_CASE(unexpected_argument_is_a_usage_error) {
  TempDir dir;
  RunResult r = Labels("demo/nodes/k100ai-8.yaml", dir, {"extra"});
  BOOST_TEST(r.exit_code == 2);
  BOOST_TEST(r.err.find("extra") != std::string::npos, r.err);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
