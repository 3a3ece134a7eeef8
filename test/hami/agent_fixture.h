// The HamiAgent test fixture: the fake API server, the simulated k100ai-8
// node under a private host root, a client, and the real clock or a SimClock.
#ifndef HCUDP_TEST_HAMI_AGENT_FIXTURE_H_
#define HCUDP_TEST_HAMI_AGENT_FIXTURE_H_

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "fake_apiserver/fake_apiserver_process.h"
#include "hcudp/backend.h"
#include "hcudp/clock.h"
#include "hcudp/hami_agent.h"
#include "hcudp/kube_objects.h"
#include "testing/testutil.h"

namespace hcudp::testing {

inline constexpr char kSn0[] = "HCU-T6T8290019020401";
inline constexpr char kSn1[] = "HCU-T6T8290019030301";

inline bool WaitUntil(const std::function<bool()>& done, int timeout_ms = 5000) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

// 2026-03-01T02:00:00Z: the wall time a SimClock of these tests starts at.
inline Clock::WallTime TestWallStart() { return Clock::WallTime(std::chrono::seconds(1772330400)); }

// A stand-in Backend that passes every call to `inner`, except that a
// DestroyVhcu waits while destroys are held (a slow vendor destroy).
class HoldingBackend final : public Backend {
 public:
  explicit HoldingBackend(std::unique_ptr<Backend> inner) : inner_(std::move(inner)) {}
  StatusOr<NodeInventory> Discover() override { return inner_->Discover(); }
  StatusOr<std::vector<CardHealthReport>> QueryHealth() override { return inner_->QueryHealth(); }
  StatusOr<Vhcu> CreateVhcu(int card, int compute_units, uint64_t memory_mib) override {
    return inner_->CreateVhcu(card, compute_units, memory_mib);
  }
  Status DestroyVhcu(int id) override {
    {
      std::unique_lock<std::mutex> lock(mu_);
      ++destroys_entered_;
      changed_.notify_all();
      // Bounded: a test that forgets to release fails instead of hanging.
      changed_.wait_for(lock, std::chrono::seconds(30), [this] { return !held_; });
    }
    return inner_->DestroyVhcu(id);
  }
  const std::string& host_root() const override { return inner_->host_root(); }
  std::vector<std::string> WatchPaths() const override { return inner_->WatchPaths(); }

  void Hold(bool held) {
    std::lock_guard<std::mutex> lock(mu_);
    held_ = held;
    changed_.notify_all();
  }
  // Waits (real time, at most `timeout`) until a DestroyVhcu has started.
  bool WaitForDestroy(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return changed_.wait_for(lock, timeout, [this] { return destroys_entered_ > 0; });
  }

 private:
  const std::unique_ptr<Backend> inner_;
  std::mutex mu_;
  std::condition_variable changed_;
  bool held_ = false;         // guarded by mu_
  int destroys_entered_ = 0;  // guarded by mu_
};

class AgentFixture {
 public:
  // `clock`: the client's and so the agent's clock (not owned); the real
  // one when null.
  explicit AgentFixture(std::function<void(HamiAgentOptions&)> tweak = nullptr,
                        Clock* clock = nullptr)
      : clock_(clock != nullptr ? *clock : Clock::Real()) {
    api_.MustRequest("POST", "/api/v1/nodes", R"({"metadata":{"name":"node1"}})");
    Options o;
    o.backend = BackendKind::kSim;
    o.sim_node_path = SourcePath("demo/nodes/k100ai-8.yaml");
    o.host_root = root_.path();
    auto backend = OpenBackend(o);
    BOOST_REQUIRE_MESSAGE(backend.ok(), backend.status().ToString());
    holding_ = new HoldingBackend(std::move(*backend));
    backend_.reset(holding_);
    KubeConfig config;
    config.source = "test";
    config.server = api_.server_url();
    config.ca_pem = ReadFile(api_.ca_file());
    config.token_file = api_.token_file();
    KubeClientOptions co;
    co.initial_backoff_ms = 10;
    co.max_backoff_ms = 50;
    co.clock = &clock_;  // the agent runs on its client's clock
    auto client = KubeClient::New(config, co);
    BOOST_REQUIRE(client.ok());
    client_ = std::move(*client);
    options_.node_name = "node1";
    options_.host_root = root_.path();
    options_.register_interval = std::chrono::milliseconds(200);
    if (tweak) tweak(options_);
  }

  void Start() {
    agent_ = std::make_unique<HamiAgent>(backend_.get(), client_.get(), options_);
    BOOST_REQUIRE(agent_->Start().ok());
    BOOST_REQUIRE(agent_->ready());
  }

  std::string CreatePod(const std::string& ns, const std::string& name, const std::string& devices,
                        int64_t bind_time, const std::string& phase = "Pending",
                        const std::string& limits = "{}") {
    std::string body = R"({"metadata":{"name":")" + name + R"(","namespace":")" + ns +
                       R"(","annotations":{"hami.io/vgpu-node":"node1",)"
                       R"("hami.io/bind-phase":"allocating","hami.io/bind-time":")" +
                       std::to_string(bind_time) + R"(","hami.io/hcu-devices-to-allocate":")" +
                       devices + R"(","hami.io/hcu-devices-allocated":")" + devices +
                       R"("}},"spec":{"nodeName":"node1","containers":[{"name":"main",)"
                       R"("resources":{"limits":)" +
                       limits + R"(}}]},"status":{"phase":")" + phase + R"("}})";
    auto pod = ParsePod(api_.MustRequest("POST", "/api/v1/namespaces/" + ns + "/pods", body));
    BOOST_REQUIRE(pod.ok());
    return pod->metadata.uid;
  }
  void Lock(const std::string& value) {
    api_.MustRequest("PATCH", "/api/v1/nodes/node1",
                     R"({"metadata":{"annotations":{"hami.io/mutex.lock":")" + value + R"("}}})",
                     "application/merge-patch+json");
  }
  void DeletePod(const std::string& ns, const std::string& name) {
    api_.MustRequest("DELETE", "/api/v1/namespaces/" + ns + "/pods/" + name);
  }
  std::map<std::string, std::string> NodeAnnotations() {
    return ParseNode(api_.MustRequest("GET", "/api/v1/nodes/node1"))->metadata.annotations;
  }
  std::string PodAnnotation(const std::string& ns, const std::string& name,
                            const std::string& key) {
    auto pod = ParsePod(api_.MustRequest("GET", "/api/v1/namespaces/" + ns + "/pods/" + name));
    BOOST_REQUIRE(pod.ok());
    auto it = pod->metadata.annotations.find(key);
    return it == pod->metadata.annotations.end() ? "<absent>" : it->second;
  }

  FakeApiServer api_;
  TempDir root_;
  Clock& clock_;
  std::unique_ptr<Backend> backend_;
  HoldingBackend* holding_ = nullptr;  // backend_
  std::unique_ptr<KubeClient> client_;
  HamiAgentOptions options_;
  std::unique_ptr<HamiAgent> agent_;
};

}  // namespace hcudp::testing

#endif  // HCUDP_TEST_HAMI_AGENT_FIXTURE_H_
