// One node for the wire tests: a temporary kubelet root with a registry and
// a plugins directory, the fake kubelet plugin watcher, a TestHandler and
// the DraPlugin under test, all over real unix sockets.
#ifndef HCUDP_TEST_DRA_WIRE_DRA_NODE_H_
#define HCUDP_TEST_DRA_WIRE_DRA_NODE_H_

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "dra/dra_plugin.h"
#include "dra_wire/test_handler.h"
#include "fake_kubelet/fake_plugin_watcher.h"
#include "testing/testutil.h"

namespace hcudp::testing {

inline constexpr char kDriver[] = "dra.hygon.com";

class DraNode {
 public:
  explicit DraNode(FakePluginWatcher::Config config = {}) {
    config.registry_dir = registry_dir();
    config.reconcile_period = std::chrono::milliseconds(200);
    config.retry_backoff = std::chrono::milliseconds(100);
    config.health_retry = std::chrono::milliseconds(200);
    kubelet_ = std::make_unique<FakePluginWatcher>(config);
  }

  std::string registry_dir() const { return dir_.Join("plugins_registry"); }
  std::string plugins_dir() const { return dir_.Join("plugins"); }
  std::string dra_sock() const { return plugins_dir() + "/" + kDriver + "/dra.sock"; }

  daemon::dra::DraPluginOptions Options(const std::string& instance = "0000001") const {
    daemon::dra::DraPluginOptions o;
    o.driver_name = kDriver;
    o.plugins_dir = plugins_dir();
    o.registry_dir = registry_dir();
    o.instance_id = instance;
    return o;
  }

  // Starts the fake kubelet and then the plugin; waits for the first
  // registration.
  void Start(daemon::dra::DraPluginOptions options) {
    BOOST_REQUIRE_EQUAL(kubelet_->Start(), "");
    StartPlugin(std::move(options));
    BOOST_REQUIRE(kubelet_->WaitForRegistrations(kDriver, 1, std::chrono::seconds(10)).has_value());
  }
  void Start() { Start(Options()); }
  void StartPlugin(daemon::dra::DraPluginOptions options) {
    plugin_ = std::make_unique<daemon::dra::DraPlugin>(std::move(options), handler_);
    Status st = plugin_->Start();
    BOOST_REQUIRE_MESSAGE(st.ok(), st.ToString());
  }

  FakePluginWatcher& kubelet() { return *kubelet_; }
  daemon::dra::DraPlugin& plugin() { return *plugin_; }
  TestHandler& handler() { return handler_; }
  const TempDir& dir() const { return dir_; }
  void ResetPlugin() { plugin_.reset(); }

 private:
  TempDir dir_;
  TestHandler handler_;
  std::unique_ptr<FakePluginWatcher> kubelet_;
  std::unique_ptr<daemon::dra::DraPlugin> plugin_;  // before the kubelet goes
};

inline drav1::Claim MakeClaim(const std::string& uid, const std::string& name,
                              const std::string& ns = "default") {
  drav1::Claim c;
  c.set_uid(uid);
  c.set_name(name);
  c.set_namespace_(ns);
  return c;
}

}  // namespace hcudp::testing

#endif  // HCUDP_TEST_DRA_WIRE_DRA_NODE_H_
