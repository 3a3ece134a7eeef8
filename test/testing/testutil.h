// Small helpers shared by tests: temporary directories, file I/O, paths to
// the source tree's fixtures and built binaries, and running a binary.
#ifndef HCUDP_TEST_TESTING_TESTUTIL_H_
#define HCUDP_TEST_TESTING_TESTUTIL_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace hcudp {
struct SimNode;
}  // namespace hcudp

namespace hcudp::testing {

// A fresh directory under $TMPDIR (or /tmp), removed with its contents on
// destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  // path() + "/" + relative
  std::string Join(const std::string& relative) const;

 private:
  std::string path_;
};

// Milliseconds of the steady clock since `start`.
inline int64_t MillisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start)
      .count();
}

// A gRPC deadline `from_now` ahead (gRPC takes system_clock time points).
inline std::chrono::system_clock::time_point GrpcDeadline(std::chrono::milliseconds from_now) {
  return std::chrono::system_clock::now() + from_now;
}

// Polls `done` every `period` until it holds (true) or `timeout` passes
// (false): for state that gives a test no notification to wait on.
bool PollUntil(const std::function<bool()>& done,
               std::chrono::milliseconds timeout = std::chrono::seconds(5),
               std::chrono::milliseconds period = std::chrono::milliseconds(5));

// Writes `content` to `path`, creating parent directories. Aborts the test on
// failure (BOOST_REQUIRE).
void WriteFile(const std::string& path, const std::string& content);
std::string ReadFile(const std::string& path);
// `text` with its first `from` replaced by `to`; the test fails when `text`
// has no `from` (the fixture changed under the test).
std::string ReplaceFirst(std::string text, const std::string& from, const std::string& to);
bool PathExists(const std::string& path);

// Absolute path of a file in the source tree: SourcePath("demo/nodes/x.yaml").
std::string SourcePath(const std::string& relative);
// Absolute path in the build tree: BinaryPath("hcuctl/hcuctl").
std::string BinaryPath(const std::string& relative);
// The built hcuctl: BinaryPath("hcuctl/hcuctl").
std::string Hcuctl();

// The SimNode file at SourcePath(relative), loaded; the test fails when it
// does not load.
SimNode LoadSourceNode(const std::string& relative);

// Writes demo/nodes/k100ai-8.yaml to `path` with one unknown field,
// `eccMode: on`, in its first card (line 23): a node file every loader must
// refuse, naming the line.
void WriteNodeWithUnknownField(const std::string& path);

struct RunResult {
  int exit_code = -1;  // -1 when killed by a signal
  std::string out;     // stdout
  std::string err;     // stderr
};

// Runs `argv` (argv[0] a path) with extra environment entries "K=V", waits,
// and returns its exit code and output. Stdin is /dev/null.
RunResult Run(const std::vector<std::string>& argv, const std::vector<std::string>& env = {});

}  // namespace hcudp::testing

#endif  // HCUDP_TEST_TESTING_TESTUTIL_H_
