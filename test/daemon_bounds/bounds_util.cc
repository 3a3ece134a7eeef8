#include "daemon_bounds/bounds_util.h"

#include <dirent.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

namespace hcudp::testing {

FrozenListener::FrozenListener(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  BOOST_REQUIRE(path.size() < sizeof addr.sun_path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  BOOST_REQUIRE(listen_fd_ >= 0);
  BOOST_REQUIRE(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  BOOST_REQUIRE(::listen(listen_fd_, 0) == 0);
  bool full = false;
  for (int i = 0; i < 64 && !full; ++i) {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    BOOST_REQUIRE(fd >= 0);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
      queued_.push_back(fd);
      continue;
    }
    full = errno == EAGAIN;
    ::close(fd);
  }
  BOOST_REQUIRE_MESSAGE(full, "could not fill the backlog of " << path);
}

FrozenListener::~FrozenListener() { Close(); }

void FrozenListener::Close() {
  if (listen_fd_ >= 0) ::close(listen_fd_);
  listen_fd_ = -1;
  for (int fd : queued_) ::close(fd);
  queued_.clear();
}

std::string MakeDirOfLength(const std::string& base, size_t length) {
  std::string dir = base;
  BOOST_REQUIRE(dir.size() + 3 <= length);
  dir += "/";
  while (dir.size() + 1 < length) dir += 'p';
  std::filesystem::create_directories(dir);
  BOOST_REQUIRE((dir + "/").size() == length);
  return dir;
}

namespace {

int CountEntries(const std::string& path) {
  DIR* d = ::opendir(path.c_str());
  if (d == nullptr) return -1;
  int n = 0;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] != '.') ++n;
  }
  ::closedir(d);
  return n;
}

}  // namespace

int CountFds(pid_t pid) { return CountEntries("/proc/" + std::to_string(pid) + "/fd"); }
int CountThreads(pid_t pid) { return CountEntries("/proc/" + std::to_string(pid) + "/task"); }

std::string DescribeFds(pid_t pid) {
  std::string out;
  std::error_code ec;
  for (const auto& e :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    out += "  " + e.path().filename().string() + " -> " +
           std::filesystem::read_symlink(e.path(), ec).string() + "\n";
  }
  return out;
}

std::chrono::milliseconds CheckSigtermExit(DaemonProcess& daemon, const std::string& state,
                                           std::chrono::milliseconds limit) {
  using SteadyClock = std::chrono::steady_clock;
  BOOST_REQUIRE_MESSAGE(daemon.Running(), state << ": the daemon is not running\n" << daemon.Log());
  const auto start = SteadyClock::now();
  BOOST_REQUIRE(daemon.Signal(SIGTERM));
  std::optional<ExitStatus> st = daemon.WaitForExit(limit);
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - start);
  if (!st.has_value()) {
    BOOST_TEST(false, state << ": still running " << limit.count()
                            << " ms after SIGTERM; killing it. Output:\n"
                            << daemon.Log());
    daemon.Stop(std::chrono::milliseconds(0));
    return took;
  }
  BOOST_TEST_MESSAGE(state << ": SIGTERM -> " << st->ToString() << " in " << took.count() << " ms");
  BOOST_TEST((st->exited && st->code == 0), state << ": SIGTERM -> " << st->ToString() << " after "
                                                  << took.count() << " ms. Output:\n"
                                                  << daemon.Log());
  return took;
}

bool WaitForBlockedSigterm(pid_t pid, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("SigBlk:", 0) != 0) continue;
      unsigned long long mask = std::strtoull(line.c_str() + 7, nullptr, 16);
      if (mask & (1ull << (SIGTERM - 1))) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

}  // namespace hcudp::testing
