// The sim's host-root lock waits a bounded time: a holder that never lets go
// (a stopped hcuctl, say) makes a vHCU change fail as busy, never hang.
#include "sim/sim_files.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <filesystem>
#include <thread>

#include "testing/testutil.h"

namespace hcudp::sim {
namespace {

using std::chrono::milliseconds;

BOOST_AUTO_TEST_SUITE(sim_files)

BOOST_AUTO_TEST_CASE(a_held_host_root_lock_is_unavailable_after_the_timeout_not_a_hang) {
  testing::TempDir root;
  std::filesystem::create_directories(StateDir(internal::HostFs(root.path())));
  // Another holder: its own open file description, so flock conflicts even
  // within this process.
  const std::string path = StateDir(internal::HostFs(root.path())) + "/lock";
  const int held = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  BOOST_REQUIRE(held >= 0);
  BOOST_REQUIRE(::flock(held, LOCK_EX) == 0);

  // In a child, so that a lock that waits for ever fails the test instead
  // of hanging it.
  const pid_t child = fork();
  BOOST_REQUIRE(child >= 0);
  if (child == 0) {
    const auto start = std::chrono::steady_clock::now();
    HostRootLock lock(internal::HostFs(root.path()), milliseconds(200));
    const auto took = std::chrono::steady_clock::now() - start;
    int failures = 0;
    if (lock.status().code() != StatusCode::kUnavailable) failures |= 1;
    if (lock.status().message().find(path) == std::string::npos) failures |= 2;
    if (took < milliseconds(150) || took > milliseconds(3000)) failures |= 4;
    _exit(failures);
  }
  int status = 0;
  pid_t done = 0;
  for (int i = 0; i < 250 && done == 0; ++i) {
    done = waitpid(child, &status, WNOHANG);
    if (done == 0) std::this_thread::sleep_for(milliseconds(20));
  }
  if (done == 0) {
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
    BOOST_FAIL("HostRootLock still waiting 5 s after its 200 ms timeout");
  }
  BOOST_REQUIRE(WIFEXITED(status));
  // 1: not Unavailable; 2: the message does not name the lock; 4: timing.
  BOOST_CHECK_EQUAL(WEXITSTATUS(status), 0);

  ::flock(held, LOCK_UN);
  HostRootLock free_lock(internal::HostFs(root.path()), milliseconds(200));
  BOOST_CHECK_MESSAGE(free_lock.status().ok(), free_lock.status().ToString());
  ::close(held);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::sim
