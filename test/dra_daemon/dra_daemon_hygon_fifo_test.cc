// Issue 29 item 5, from outside: a FIFO at the path of Hygon's prepared-state
// file (<CDI dir>/hcu-dra-driver-prepared-state.state) neither keeps the real
// DRA daemon from starting nor from stopping on SIGTERM. On main the daemon
// opened it for reading and waited for a writer for ever: it never
// registered, and SIGTERM did not stop it.
#include <sys/stat.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <string>
#include <thread>

#include "daemon_bounds/bounds_util.h"
#include "dra_daemon/dra_daemon_node.h"

namespace hcudp::testing {
namespace {

constexpr char kStateFile[] = "/hcu-dra-driver-prepared-state.state";

std::string PlaceFifo(DraDaemonNode& n) {
  std::filesystem::create_directories(n.CdiDir());
  const std::string path = n.CdiDir() + kStateFile;
  BOOST_REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
  return path;
}

bool IsFifo(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}

BOOST_AUTO_TEST_SUITE(dra_daemon_hygon_fifo)

BOOST_AUTO_TEST_CASE(a_fifo_at_the_state_path_does_not_hold_the_start,
                     *boost::unit_test::timeout(60)) {
  DraDaemonNode n(kProbeOrder);
  const std::string fifo = PlaceFifo(n);
  n.Start();  // registers (within 10 s)
  BOOST_TEST(ReadFile(n.h().log_path()).find(fifo + ": not a regular file") != std::string::npos,
             ReadFile(n.h().log_path()));
  BOOST_TEST(IsFifo(fifo));  // left as it is
  n.StopDaemon();
}

BOOST_AUTO_TEST_CASE(sigterm_stops_a_daemon_starting_with_a_fifo_there,
                     *boost::unit_test::timeout(60)) {
  DraDaemonNode n(kProbeOrder);
  PlaceFifo(n);
  n.StartDaemon();
  BOOST_REQUIRE(WaitForBlockedSigterm(n.h().daemon().pid(), std::chrono::seconds(5)));
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));  // well into its start
  CheckSigtermExit(n.h().daemon(), "starting with a FIFO at Hygon's state path");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
