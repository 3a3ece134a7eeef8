// Inputs without bounds, and start-up input errors (issue 10 items 8, 11):
// the split count is bounded with the reason, an Allocate error echoes only
// so much, and every bad start-up input is exit 2 with one plain line.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <thread>

#include "daemon_bounds/bounds_util.h"
#include "integration/daemon_harness.h"

namespace hcudp::testing {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// Runs the daemon with `flags` after the harness's own and expects it to
// exit 2 within 10 s with exactly one line, which must start with `want`.
// Returns the daemon's output.
std::string ExpectStartupError(const std::vector<std::string>& flags, const std::string& want,
                               const std::string& node = "demo/nodes/k100ai-8.yaml") {
  DaemonHarness h(node, flags);
  h.StartDaemon();
  auto st = h.daemon().WaitForExit(milliseconds(10000));
  BOOST_REQUIRE_MESSAGE(st.has_value(), "still running 10 s after a bad start-up input");
  const std::string log = h.daemon().Log();
  BOOST_TEST((st->exited && st->code == 2), st->ToString() << "\n" << log);
  auto lines = Lines(log);
  BOOST_TEST(lines.size() == 1u, "want one line, got:\n" << log);
  BOOST_TEST(log.rfind(want, 0) == 0u, "want a line starting \"" << want << "\", got:\n" << log);
  return log;
}

BOOST_AUTO_TEST_SUITE(daemon_inputs)

BOOST_AUTO_TEST_CASE(a_bad_node_file_is_exit_2_and_one_plain_line) {
  TempDir dir;
  const std::string node = dir.Join("bad.yaml");
  WriteNodeWithUnknownField(node);
  const std::string log =
      ExpectStartupError({"--sim-node=" + node}, "hcu-dp-daemon: --sim-node: " + node + ": ");
  // The line the parser names is the unknown field's own.
  const std::string text = testing::ReadFile(node);
  const auto line = 1 + std::count(text.begin(), text.begin() + text.find("eccMode"), '\n');
  BOOST_TEST(log.find("line " + std::to_string(line) + ": unknown field \"eccMode\"") !=
                 std::string::npos,
             log);
  BOOST_TEST_MESSAGE("missing file");
  ExpectStartupError({"--sim-node=" + dir.Join("missing.yaml")},
                     "hcu-dp-daemon: --sim-node: SimNode file " + dir.Join("missing.yaml"));
}

BOOST_AUTO_TEST_CASE(a_socket_directory_that_cannot_be_used_is_exit_2_and_one_line) {
  TempDir dir;
  const std::string file = dir.Join("not-a-dir");
  WriteFile(file, "x");
  ExpectStartupError({"--device-plugin-path=" + file + "/"},
                     "hcu-dp-daemon: --device-plugin-path: ");
  ExpectStartupError({"--device-plugin-path=" + file + "/sub/"},
                     "hcu-dp-daemon: --device-plugin-path: ");
}

BOOST_AUTO_TEST_CASE(a_missing_kubeconfig_is_exit_2_and_one_line) {
  TempDir dir;
  ExpectStartupError({"--strategy=hami", "--node-name=n1", "--kubeconfig=" + dir.Join("none")},
                     "hcu-dp-daemon: ");
}

BOOST_AUTO_TEST_CASE(the_split_count_is_bounded_with_the_reason) {
  for (const char* count : {"2147483647", "20000", "1025"}) {
    BOOST_TEST_CONTEXT(count) {
      DaemonHarness h("demo/nodes/k100ai-8.yaml", {"--strategy=hami", "--node-name=n1",
                                                   std::string("--device-split-count=") + count});
      h.StartDaemon();
      auto st = h.daemon().WaitForExit(milliseconds(10000));
      BOOST_REQUIRE(st.has_value());
      BOOST_TEST((st->exited && st->code == 2), st->ToString());
      const std::string log = h.daemon().Log();
      BOOST_TEST(Lines(log).size() == 1u, log);
      BOOST_TEST(log.find("--device-split-count") != std::string::npos, log);
      BOOST_TEST(log.find("4 MiB") != std::string::npos, log);
    }
  }
}

BOOST_AUTO_TEST_CASE(an_allocate_error_echoes_a_bounded_message) {
  DaemonHarness h("demo/nodes/k100ai-8.yaml", {"--pulse=0", "--strategy=hcu"});
  h.Start();
  h.RequireRegistered("hygon.com/hcu");
  std::vector<std::string> many;
  for (int i = 0; i < 10000; ++i) many.push_back("0000:ee:" + std::to_string(i) + ".0");
  const std::string huge(1 << 20, 'x');
  for (const auto& ids : {many, std::vector<std::string>{huge}}) {
    BOOST_TEST_CONTEXT(ids.size() << " IDs") {
      v1beta1::AllocateResponse response;
      grpc::Status s = h.kubelet().Allocate("hygon.com/hcu", {ids}, &response);
      BOOST_TEST(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT,
                 s.error_code() << " " << s.error_message().substr(0, 200));
      BOOST_TEST(s.error_message().size() <= 2048u);
      BOOST_TEST(s.error_message().find("unknown device IDs") != std::string::npos);
    }
  }
  BOOST_TEST(h.daemon().Running());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
