// The socket files of the DRA mode: names, the unix path limit, and what a
// new instance does with what a crashed or still running one left behind
// (kubelet refuses a second registration of an endpoint it still holds).
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cstring>
#include <filesystem>

#include "dra/dra_sockets.h"
#include "dra/registration_service.h"
#include "dra_wire/dra_node.h"
#include "fake_kubelet/daemon_process.h"
#include "socket_server.h"

namespace hcudp::testing {
namespace {

namespace fs = std::filesystem;
namespace dra = daemon::dra;
using std::chrono::milliseconds;
using std::chrono::seconds;

// A socket file nobody listens on: what kill -9 leaves behind.
void MakeDeadSocket(const std::string& path) {
  fs::create_directories(fs::path(path).parent_path());
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  BOOST_REQUIRE(fd >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  BOOST_REQUIRE(path.size() < sizeof addr.sun_path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  BOOST_REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  ::close(fd);
}

BOOST_AUTO_TEST_SUITE(sockets)

BOOST_AUTO_TEST_CASE(registration_socket_names_of_a_driver) {
  struct Case {
    const char* name;
    bool ours;
  } cases[] = {
      {"dra.hygon.com-0k3v9qa-reg.sock", true},   // ours, any instance
      {"dra.hygon.com-reg.sock", true},           // the helper's / Hygon's driver
      {"dra.hygon.com-0k3v9qw-reg.sock", false},  // 'w' is not a tag character
      {"dra.hygon.com-0k3v9q-reg.sock", false},   // 6 characters
      {"dra.hygon.com-x-reg.sock", false},
      {"dra.hygon.com-x-0k3v9qa-reg.sock", false},  // another driver's
      {"gpu.nvidia.com-reg.sock", false},
      {"dra.hygon.com-0k3v9qa-reg.sock.tmp", false},
      {".dra.hygon.com-0k3v9qa-reg.sock", false},
  };
  for (const Case& c : cases) {
    BOOST_TEST(dra::IsRegistrationSocketOf(c.name, "dra.hygon.com") == c.ours, c.name);
  }
  BOOST_TEST(dra::RegistrationSocketName("dra.hygon.com", "0k3v9qa") ==
             "dra.hygon.com-0k3v9qa-reg.sock");
}

BOOST_AUTO_TEST_CASE(a_socket_path_over_the_unix_limit_is_a_clear_error_naming_the_flag) {
  DraNode node;
  auto options = node.Options();
  options.plugins_dir = node.dir().Join(std::string(90, 'p'));
  dra::DraPlugin plugin(options, node.handler());
  Status st = plugin.Start();
  BOOST_TEST((st.code() == StatusCode::kInvalidArgument), st.ToString());
  BOOST_TEST(st.message().find("--kubelet-plugins-dir: the socket path ") == 0, st.message());
  BOOST_TEST(st.message().find("over the 107-byte limit of unix sockets") != std::string::npos);

  options = node.Options();
  options.registry_dir = node.dir().Join(std::string(70, 'r'));
  dra::DraPlugin plugin2(options, node.handler());
  st = plugin2.Start();
  BOOST_TEST((st.code() == StatusCode::kInvalidArgument), st.ToString());
  BOOST_TEST(st.message().find("--kubelet-registry-dir: ") == 0, st.message());
}

BOOST_AUTO_TEST_CASE(a_bad_driver_name_is_refused_naming_the_flag) {
  DraNode node;
  auto options = node.Options();
  options.driver_name = "Dra/Hygon";
  dra::DraPlugin plugin(options, node.handler());
  Status st = plugin.Start();
  BOOST_TEST((st.code() == StatusCode::kInvalidArgument), st.ToString());
  BOOST_TEST(st.message().find("--dra-driver-name: \"Dra/Hygon\"") == 0, st.message());
}

BOOST_AUTO_TEST_CASE(a_dead_dra_socket_and_registration_socket_are_cleared_at_start) {
  DraNode node;
  MakeDeadSocket(node.dra_sock());
  const std::string dead_reg = node.registry_dir() + "/dra.hygon.com-0000009-reg.sock";
  MakeDeadSocket(dead_reg);
  const std::string other_driver = node.registry_dir() + "/gpu.nvidia.com-reg.sock";
  MakeDeadSocket(other_driver);
  node.Start();
  BOOST_TEST(!fs::exists(dead_reg));
  BOOST_TEST(fs::exists(other_driver));  // not ours to judge
  CallOutcome out = node.kubelet().NodePrepareResources(kDriver, {MakeClaim("u1", "c1")});
  BOOST_TEST(out.ok(), out.status.error_message() << out.kubelet_error);
}

BOOST_AUTO_TEST_CASE(a_live_dra_socket_is_not_taken_over) {
  DraNode node;
  TestHandler other;
  auto first = std::make_unique<dra::DraPlugin>(node.Options("0000001"), other);
  BOOST_REQUIRE(first->Start().ok());
  dra::DraPlugin second(node.Options("0000002"), node.handler());
  Status st = second.Start();
  BOOST_TEST((st.code() == StatusCode::kFailedPrecondition), st.ToString());
  BOOST_TEST(st.message().find("another process serves this socket") != std::string::npos,
             st.message());
  BOOST_TEST(fs::exists(node.dra_sock()));  // still the first one's
}

BOOST_AUTO_TEST_CASE(after_kill_9_the_next_instance_is_registered_without_a_refusal) {
  DraNode node;
  BOOST_REQUIRE_EQUAL(node.kubelet().Start(), "");
  DaemonProcess old;
  BOOST_REQUIRE_EQUAL(old.Start({BinaryPath("test/dra_wire/dra_wire_plugin"), node.plugins_dir(),
                                 node.registry_dir(), "0000old"},
                                node.dir().Join("old.log")),
                      "");
  BOOST_REQUIRE(node.kubelet().WaitForRegistrations(kDriver, 1, seconds(10)).has_value());
  CallOutcome before = node.kubelet().NodePrepareResources(kDriver, {MakeClaim("u1", "c1")});
  BOOST_TEST(before.prepare.claims().at("u1").error() == "served by the old instance");
  BOOST_REQUIRE(old.Signal(SIGKILL));
  BOOST_REQUIRE(old.WaitForExit(seconds(5)).has_value());
  const std::string old_reg = node.registry_dir() + "/dra.hygon.com-0000old-reg.sock";
  BOOST_REQUIRE(fs::exists(old_reg));          // left behind, and kubelet still
  BOOST_REQUIRE(fs::exists(node.dra_sock()));  // holds the endpoint through it
  BOOST_REQUIRE_EQUAL(node.kubelet().State().plugins[kDriver].size(), 1u);

  node.StartPlugin(node.Options("0000new"));
  auto s = node.kubelet().WaitForRegistrations(kDriver, 2, seconds(10));
  BOOST_REQUIRE(s.has_value());
  BOOST_TEST(!fs::exists(old_reg));
  for (const RegistrationAttempt& a : s->attempts) {
    BOOST_TEST(a.error == "", a.socket_path << ": " << a.error);  // never refused
  }
  BOOST_REQUIRE_EQUAL(s->plugins[kDriver].size(), 1u);
  BOOST_TEST(s->plugins[kDriver][0].socket_path == node.plugin().registration_socket_path());
  CallOutcome after = node.kubelet().NodePrepareResources(kDriver, {MakeClaim("u1", "c1")});
  BOOST_TEST(after.ok(), after.status.error_message() << after.kubelet_error);
  BOOST_TEST(after.prepare.claims().at("u1").devices_size() == 1);
}

BOOST_AUTO_TEST_CASE(kubelet_refuses_a_second_socket_for_our_endpoint_and_we_recover_from_it) {
  // Another registration socket of the driver claims our endpoint: kubelet
  // refuses it. When it goes, kubelet deregisters by driver and endpoint,
  // which drops our registration too; we notice and register again.
  DraNode node;
  node.Start();
  const std::string intruder_path = node.registry_dir() + "/dra.hygon.com-zzzzzzz-reg.sock";
  dra::RegistrationService intruder(dra::MakePluginInfo(kDriver, node.dra_sock()), nullptr);
  auto server = daemon::SocketServer::Start(intruder_path, {&intruder}, 16, true);
  BOOST_REQUIRE(server.ok());
  auto refused = node.kubelet().WaitFor(
      [&](const WatcherSnapshot& s) {
        return std::any_of(s.attempts.begin(), s.attempts.end(), [&](const auto& a) {
          return a.socket_path == intruder_path && a.notified;
        });
      },
      seconds(10));
  BOOST_REQUIRE(refused.has_value());
  BOOST_TEST(refused->attempts.back().error ==
             "RegisterPlugin error -- plugin registration failed with err: endpoint " +
                 node.dra_sock() + " already registered for DRA driver plugin dra.hygon.com");
  BOOST_TEST(refused->plugins[kDriver].size() == 1u);
  (*server)->Stop();
  auto s = node.kubelet().WaitFor(
      [&](const WatcherSnapshot& s) {
        auto p = s.plugins.find(kDriver);
        return s.registrations.at(kDriver) >= 2 && p != s.plugins.end() && p->second.size() == 1 &&
               p->second[0].socket_path == node.plugin().registration_socket_path();
      },
      seconds(10));
  BOOST_TEST(s.has_value());
  CallOutcome out = node.kubelet().NodePrepareResources(kDriver, {MakeClaim("u1", "c1")});
  BOOST_TEST(out.ok(), out.status.error_message() << out.kubelet_error);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
