#include "testing/testutil.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "hcudp/sim_node.h"

namespace hcudp::testing {
namespace fs = std::filesystem;

TempDir::TempDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string base = (tmp != nullptr && *tmp != '\0') ? tmp : "/tmp";
  std::string templ = base + "/hcudp-test-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  BOOST_REQUIRE_MESSAGE(mkdtemp(buf.data()) != nullptr, "mkdtemp failed: " << strerror(errno));
  path_ = buf.data();
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string TempDir::Join(const std::string& relative) const { return path_ + "/" + relative; }

void WriteFile(const std::string& path, const std::string& content) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  BOOST_REQUIRE_MESSAGE(out.good(), "cannot write " << path);
  out << content;
  out.close();
  BOOST_REQUIRE_MESSAGE(out.good(), "cannot write " << path);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  BOOST_REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string ReplaceFirst(std::string text, const std::string& from, const std::string& to) {
  const size_t pos = text.find(from);
  // An exception, not a Boost.Test assertion: tables of test data call this
  // during static initialisation, before Boost.Test can record anything.
  if (pos == std::string::npos) throw std::invalid_argument("no \"" + from + "\" in the text");
  return text.replace(pos, from.size(), to);
}

SimNode LoadSourceNode(const std::string& relative) {
  StatusOr<SimNode> node = LoadSimNode(SourcePath(relative));
  BOOST_REQUIRE_MESSAGE(node.ok(), relative << ": " << node.status().ToString());
  return *std::move(node);
}

bool PathExists(const std::string& path) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(path, ec));
}

bool PollUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout,
               std::chrono::milliseconds period) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(period);
  }
  return true;
}

std::string SourcePath(const std::string& relative) {
  return std::string(HCUDP_SOURCE_DIR) + "/" + relative;
}

std::string BinaryPath(const std::string& relative) {
  return std::string(HCUDP_BINARY_DIR) + "/" + relative;
}

std::string Hcuctl() { return BinaryPath("hcuctl/hcuctl"); }

void WriteNodeWithUnknownField(const std::string& path) {
  std::string text = ReadFile(SourcePath("demo/nodes/k100ai-8.yaml"));
  text.replace(text.find("    health: Healthy"), 0, "    eccMode: on\n");
  WriteFile(path, text);
}

namespace {

std::string DrainFd(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
  close(fd);
  return out;
}

}  // namespace

RunResult Run(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  int out_pipe[2];
  int err_pipe[2];
  BOOST_REQUIRE(pipe(out_pipe) == 0);
  BOOST_REQUIRE(pipe(err_pipe) == 0);
  pid_t pid = fork();
  BOOST_REQUIRE(pid >= 0);
  if (pid == 0) {
    int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    close(out_pipe[0]);
    close(err_pipe[0]);
    for (const std::string& e : env) putenv(strdup(e.c_str()));
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  RunResult result;
  std::thread err_reader([&] { result.err = DrainFd(err_pipe[0]); });
  result.out = DrainFd(out_pipe[0]);
  err_reader.join();
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace hcudp::testing
