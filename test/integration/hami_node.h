// HamiNode: one node under HAMi-mode test — the fake API server (playing the
// HCU scheduler: node object, pod annotations, node lock) and the real
// hcu-dp-daemon with --strategy=hami on a private copy of the k100ai-8
// simulated node, behind the fake kubelet. Shared by the HAMi end-to-end
// suite and the HAMi Allocate benchmark.
#ifndef HCUDP_TEST_INTEGRATION_HAMI_NODE_H_
#define HCUDP_TEST_INTEGRATION_HAMI_NODE_H_

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fake_apiserver/fake_apiserver_process.h"
#include "hcudp/kube_objects.h"
#include "integration/daemon_harness.h"

namespace hcudp::testing {

inline constexpr char kHamiCount[] = "hygon.com/hcunum";
inline constexpr char kSn0[] = "HCU-T6T8290019020401";  // card 0 of k100ai-8: 65520 MiB, 120 CUs
inline constexpr char kSn1[] = "HCU-T6T8290019030301";  // card 1
inline constexpr char kLockTime[] = "2026-03-01T10:00:00+08:00";

// Polls `done` every 50 ms until it holds or `timeout` passes.
bool WaitUntil(const std::function<bool()>& done, milliseconds timeout = milliseconds(10000));

// Requests that are part of an Allocate: everything but the watch and the
// registration loop's strategic-merge patches of the node (and its status).
std::vector<FakeRequest> AllocatePathRequests(const std::vector<FakeRequest>& all);
// A LIST of pods (any namespace).
bool IsPodList(const FakeRequest& r);

struct PodSpec {
  std::string name;
  // One entry per container: {container name, its devices ("" for none)}.
  std::vector<std::pair<std::string, std::string>> containers;
};

// One node under test: fake API server + daemon in HAMi mode.
class HamiNode {
 public:
  explicit HamiNode(std::vector<std::string> flags = {}, std::vector<std::string> env = {},
                    const std::string& node = "demo/nodes/k100ai-8.yaml") {
    // tokenFile, so that a rotated token is picked up.
    WriteFile(kube_.Join("kubeconfig"),
              "apiVersion: v1\nkind: Config\ncurrent-context: fake\n"
              "clusters:\n- name: fake\n  cluster:\n    server: " +
                  api_.server_url() + "\n    certificate-authority: " + api_.ca_file() +
                  "\ncontexts:\n- name: fake\n  context:\n    cluster: fake\n    user: u\n"
                  "users:\n- name: u\n  user:\n    tokenFile: " +
                  api_.token_file() + "\n");
    api_.MustRequest("POST", "/api/v1/nodes", R"({"metadata":{"name":"node1"}})");
    std::vector<std::string> all = {"--strategy=hami", "--node-name=node1",
                                    "--kubeconfig=" + kube_.Join("kubeconfig"),
                                    "--device-split-count=4", "--topology-register=false"};
    all.insert(all.end(), flags.begin(), flags.end());
    harness_ = std::make_unique<DaemonHarness>(node, all, std::move(env));
  }

  void Start() {
    harness_->Start();
    harness_->RequireRegistered(kHamiCount);
    BOOST_REQUIRE_MESSAGE(
        WaitUntil([&] { return NodeAnnotations().count("hami.io/node-hcu-register") > 0; }),
        "node annotations never registered");
  }

  FakeApiServer& api() { return api_; }
  DaemonHarness& h() { return *harness_; }

  NodeObject GetNode() const {
    auto node = ParseNode(api_.MustRequest("GET", "/api/v1/nodes/node1"));
    BOOST_REQUIRE(node.ok());
    return *node;
  }
  std::map<std::string, std::string> NodeAnnotations() const {
    return GetNode().metadata.annotations;
  }
  std::optional<Pod> GetPod(const std::string& name) const {
    FakeResponse r = api_.Request("GET", "/api/v1/namespaces/default/pods/" + name);
    if (r.status == 404) return std::nullopt;
    auto pod = ParsePod(r.body);
    BOOST_REQUIRE(pod.ok());
    return *pod;
  }
  std::string PodAnnotation(const std::string& name, const std::string& key) const {
    auto pod = GetPod(name);
    BOOST_REQUIRE(pod);
    auto it = pod->metadata.annotations.find(key);
    return it == pod->metadata.annotations.end() ? "<absent>" : it->second;
  }

  // The scheduler's Filter + Bind for `spec`: annotations, then the lock.
  // Returns the pod UID.
  std::string SchedulePod(const PodSpec& spec, bool lock = true) {
    std::string devices;
    std::string containers;
    for (const auto& [name, dev] : spec.containers) {
      devices += dev + ";";
      if (!containers.empty()) containers += ",";
      containers += R"({"name":")" + name + R"(","image":"busybox"})";
    }
    std::string body = R"({"metadata":{"name":")" + spec.name +
                       R"(","namespace":"default","annotations":{)"
                       R"("hami.io/vgpu-node":"node1","hami.io/bind-phase":"allocating",)"
                       R"("hami.io/bind-time":"1740796800",)"
                       R"("hami.io/hcu-devices-to-allocate":")" +
                       devices + R"(","hami.io/hcu-devices-allocated":")" + devices +
                       R"("}},"spec":{"nodeName":"node1","containers":[)" + containers + "]}}";
    auto pod = ParsePod(api_.MustRequest("POST", "/api/v1/namespaces/default/pods", body));
    BOOST_REQUIRE(pod.ok());
    if (lock) Lock(spec.name);
    return pod->metadata.uid;
  }
  void Lock(const std::string& pod) {
    api_.MustRequest("PATCH", "/api/v1/nodes/node1",
                     R"({"metadata":{"annotations":{"hami.io/mutex.lock":")" +
                         std::string(kLockTime) + ",default," + pod + R"("}}})",
                     "application/merge-patch+json");
  }
  void SetPhase(const std::string& pod, const std::string& phase) {
    api_.MustRequest("PATCH", "/api/v1/namespaces/default/pods/" + pod + "/status",
                     R"({"status":{"phase":")" + phase + R"("}})", "application/merge-patch+json");
  }

  grpc::Status Allocate(const std::vector<std::vector<std::string>>& ids,
                        v1beta1::AllocateResponse* response,
                        const std::string& resource = kHamiCount) {
    return harness_->kubelet().Allocate(resource, ids, response);
  }
  v1beta1::ContainerAllocateResponse MustAllocate(int devices) {
    std::vector<std::string> ids;
    for (int i = 0; i < devices; ++i)
      ids.push_back(std::string(kSn0) + "-fake-" + std::to_string(i));
    v1beta1::AllocateResponse response;
    grpc::Status s = Allocate({ids}, &response);
    BOOST_REQUIRE_MESSAGE(s.ok(), "Allocate failed: " << s.error_message());
    BOOST_REQUIRE_EQUAL(response.container_responses_size(), 1);
    return response.container_responses(0);
  }

  std::string HostPath(const std::string& path) const { return harness_->host_root() + path; }
  // Mark file names in /etc/vdev/dynamic.
  std::set<std::string> Marks() const {
    std::set<std::string> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(HostPath("/etc/vdev/dynamic"), ec)) {
      out.insert(e.path().filename().string());
    }
    return out;
  }
  // vdevN.conf files in /etc/vdev.
  std::set<std::string> Confs() const {
    std::set<std::string> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(HostPath("/etc/vdev"), ec)) {
      std::string n = e.path().filename().string();
      if (n.rfind("vdev", 0) == 0 && e.is_regular_file()) out.insert(n);
    }
    return out;
  }

 private:
  FakeApiServer api_;
  TempDir kube_;
  std::unique_ptr<DaemonHarness> harness_;
};

}  // namespace hcudp::testing

#endif  // HCUDP_TEST_INTEGRATION_HAMI_NODE_H_
