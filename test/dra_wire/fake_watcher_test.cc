// The fake plugin watcher is as strict as kubelet's (dra.md §1.1, §1.4):
// tested against bare registration servers, without the DraPlugin.
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>

#include "dra/registration_service.h"
#include "dra_wire/dra_node.h"
#include "socket_server.h"

namespace hcudp::testing {
namespace {

namespace fs = std::filesystem;
namespace dra = daemon::dra;
using std::chrono::milliseconds;
using std::chrono::seconds;

// A registration socket answering GetInfo with `info`.
struct BareRegistration {
  BareRegistration(const std::string& path, pluginregistration::PluginInfo info)
      : service(std::move(info), [this](bool registered, const std::string& error) {
          std::lock_guard<std::mutex> lock(mu);
          verdicts.emplace_back(registered, error);
        }) {
    auto s = daemon::SocketServer::Start(path, {&service}, 16, /*publish_by_rename=*/true);
    BOOST_REQUIRE(s.ok());
    server = std::move(*s);
  }
  dra::RegistrationService service;
  std::unique_ptr<daemon::SocketServer> server;
  std::mutex mu;
  std::vector<std::pair<bool, std::string>> verdicts;
};

std::optional<WatcherSnapshot> WaitForAttempts(FakePluginWatcher& k, size_t n) {
  return k.WaitFor([n](const WatcherSnapshot& s) { return s.attempts.size() >= n; }, seconds(10));
}

BOOST_AUTO_TEST_SUITE(fake_watcher)

BOOST_AUTO_TEST_CASE(hidden_and_non_socket_files_are_ignored_existing_sockets_registered) {
  DraNode node;
  fs::create_directories(node.registry_dir() + "/sub");
  std::ofstream(node.registry_dir() + "/not-a-socket.sock") << "x";
  BareRegistration hidden(node.registry_dir() + "/.hidden-reg.sock",
                          dra::MakePluginInfo("a.example.com", "/nonexistent/a.sock"));
  BareRegistration nested(node.registry_dir() + "/sub/b.example.com-reg.sock",
                          dra::MakePluginInfo("b.example.com", node.dir().Join("b.sock")));
  BOOST_REQUIRE_EQUAL(node.kubelet().Start(), "");  // walks what is there
  auto s = WaitForAttempts(node.kubelet(), 1);
  BOOST_REQUIRE(s.has_value());
  BOOST_TEST(s->attempts.size() == 1u);
  BOOST_TEST(s->attempts[0].name == "b.example.com");
  BOOST_TEST(s->attempts[0].registered);
}

BOOST_AUTO_TEST_CASE(an_unknown_plugin_type_is_refused_with_kubelets_message) {
  DraNode node;
  BOOST_REQUIRE_EQUAL(node.kubelet().Start(), "");
  auto info = dra::MakePluginInfo("c.example.com", "");
  info.set_type("CSIPlugin");
  const std::string path = node.registry_dir() + "/c-reg.sock";
  BareRegistration csi(path, info);
  auto s = WaitForAttempts(node.kubelet(), 1);
  BOOST_REQUIRE(s.has_value());
  BOOST_TEST(s->attempts[0].error ==
             "RegisterPlugin error -- no handler registered for plugin type: CSIPlugin at socket " +
                 path);
  BOOST_TEST(s->attempts[0].notified, s->attempts[0].error);
  std::lock_guard<std::mutex> lock(csi.mu);
  BOOST_REQUIRE_EQUAL(csi.verdicts.size(), 1u);
  BOOST_TEST(!csi.verdicts[0].first);
}

BOOST_AUTO_TEST_CASE(an_empty_service_list_is_refused) {
  DraNode node;
  BOOST_REQUIRE_EQUAL(node.kubelet().Start(), "");
  auto info = dra::MakePluginInfo("d.example.com", "/x/d.sock");
  info.clear_supported_versions();
  BareRegistration empty(node.registry_dir() + "/d-reg.sock", info);
  auto s = WaitForAttempts(node.kubelet(), 1);
  BOOST_REQUIRE(s.has_value());
  BOOST_TEST(
      s->attempts[0].error.find("empty list of supported gRPC services (aka supported versions)") !=
      std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
