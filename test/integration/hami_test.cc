// HAMi mode end to end (DESIGN.md §5, reference/seed-behaviour.md §5): the
// real daemon with --strategy=hami on a simulated K100_AI node, the fake
// kubelet, and the fake API server playing the HCU scheduler (it writes the
// pod annotations of §5.4's worked example and locks the node).
#include <rapidjson/document.h>
#include <signal.h>

#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <functional>
#include <thread>

#include "fake_apiserver/fake_apiserver_process.h"
#include "hcudp/kube_objects.h"
#include "hcudp/vdev_conf.h"
#include "integration/daemon_harness.h"

namespace hcudp::testing {
namespace {

namespace fs = std::filesystem;

constexpr char kNode[] = "node1";
constexpr char kCount[] = "hygon.com/hcunum";
constexpr char kSn0[] = "HCU-T6T8290019020401";  // card 0 of k100ai-8: 65520 MiB, 120 CUs
constexpr char kSn1[] = "HCU-T6T8290019030301";  // card 1
constexpr char kLockTime[] = "2026-03-01T10:00:00+08:00";

bool WaitUntil(const std::function<bool()>& done, milliseconds timeout = milliseconds(10000)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(milliseconds(50));
  }
  return done();
}

struct PodSpec {
  std::string name;
  // One entry per container: {container name, its devices ("" for none)}.
  std::vector<std::pair<std::string, std::string>> containers;
};

// One node under test: fake API server + daemon in HAMi mode.
class HamiNode {
 public:
  explicit HamiNode(std::vector<std::string> flags = {}, std::vector<std::string> env = {}) {
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
    harness_ = std::make_unique<DaemonHarness>("demo/nodes/k100ai-8.yaml", all, std::move(env));
  }

  void Start() {
    harness_->Start();
    harness_->RequireRegistered(kCount);
    BOOST_REQUIRE_MESSAGE(
        WaitUntil([&] { return NodeAnnotations().count("hami.io/node-hcu-register") > 0; }),
        "node annotations never registered");
  }

  FakeApiServer& api() { return api_; }
  DaemonHarness& h() { return *harness_; }

  Node GetNode() const {
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
                     R"({"status":{"phase":")" + phase + R"("}})",
                     "application/merge-patch+json");
  }

  grpc::Status Allocate(const std::vector<std::vector<std::string>>& ids,
                        v1beta1::AllocateResponse* response, const std::string& resource = kCount) {
    return harness_->kubelet().Allocate(resource, ids, response);
  }
  v1beta1::ContainerAllocateResponse MustAllocate(int devices) {
    std::vector<std::string> ids;
    for (int i = 0; i < devices; ++i) ids.push_back(std::string(kSn0) + "-fake-" + std::to_string(i));
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
    for (const auto& e : fs::directory_iterator(HostPath("/etc/vdev/dynamic"), ec)) {
      out.insert(e.path().filename().string());
    }
    return out;
  }
  // vdevN.conf files in /etc/vdev.
  std::set<std::string> Confs() const {
    std::set<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(HostPath("/etc/vdev"), ec)) {
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

const std::string kKfdRwm = DeviceSpec("/dev/kfd", "rwm");
const std::string kMkfdRwm = DeviceSpec("/dev/mkfd", "rwm");
const std::string kHyhal = Mount("/opt/hyhal", "/opt/hyhal");

// Requests that are part of an Allocate: everything but the watch and the
// registration loop's strategic-merge patches of the node.
std::vector<FakeRequest> AllocatePathRequests(const std::vector<FakeRequest>& all) {
  std::vector<FakeRequest> out;
  for (const auto& r : all) {
    if (r.watch) continue;
    if (r.method == "PATCH" && r.path == "/api/v1/nodes/node1" &&
        r.content_type.find("strategic") != std::string::npos) {
      continue;
    }
    if (r.path == "/api/v1/nodes/node1/status") continue;
    out.push_back(r);
  }
  return out;
}

bool IsList(const FakeRequest& r) {
  return r.method == "GET" && !r.watch &&
         (r.path == "/api/v1/pods" ||
          (r.path.size() > 5 && r.path.substr(r.path.size() - 5) == "/pods"));
}

BOOST_AUTO_TEST_SUITE(hami)

BOOST_AUTO_TEST_CASE(a_30_percent_8192_mib_pod_gets_a_36_cu_vhcu_and_the_lock_is_released) {
  HamiNode n;
  n.Start();
  const std::string uid =
      n.SchedulePod({"hcu-dynamic-vhcu-demo", {{"main", std::string(kSn0) + ",HCU,8192,30:"}}});
  n.api().ClearRequests();

  auto r = n.MustAllocate(1);

  auto requests = AllocatePathRequests(n.api().Requests());
  std::string seen;
  for (const auto& q : requests) seen += q.method + " " + q.path + "; ";
  BOOST_TEST_MESSAGE("Allocate API calls: " << seen);
  BOOST_TEST(std::none_of(requests.begin(), requests.end(), IsList), seen);
  BOOST_TEST(requests.size() <= 5u, seen);

  BOOST_REQUIRE_EQUAL(n.Confs().size(), 1u);
  const std::string conf = *n.Confs().begin();  // vdevN.conf
  const std::string vdev = conf.substr(4, conf.size() - 9);
  auto parsed = ParseVdevConf(ReadFile(n.HostPath("/etc/vdev/" + conf)));
  BOOST_REQUIRE(parsed.ok());
  BOOST_TEST(parsed->cu_count == 36);  // ceil(30 * 120 / 100)
  BOOST_TEST(parsed->mem_mib == 8192u);
  BOOST_TEST(parsed->device_id == 0);

  BOOST_TEST(DeviceSpecs(r) == (std::set<std::string>{kKfdRwm, kMkfdRwm,
                                                      DeviceSpec("/dev/dri/card1"),
                                                      DeviceSpec("/dev/dri/renderD128")}),
             boost::test_tools::per_element());
  BOOST_TEST(Mounts(r) == (std::set<std::string>{kHyhal,
                                                 Mount("/etc/vdev/" + conf,
                                                       "/etc/vdev/docker/" + conf)}),
             boost::test_tools::per_element());
  BOOST_TEST(n.Marks() == std::set<std::string>{uid + "_main_0_" + vdev},
             boost::test_tools::per_element());

  BOOST_TEST(n.PodAnnotation("hcu-dynamic-vhcu-demo", "hami.io/bind-phase") == "success");
  BOOST_TEST(n.PodAnnotation("hcu-dynamic-vhcu-demo", "hami.io/hcu-devices-to-allocate") == ";");
  BOOST_TEST(n.PodAnnotation("hcu-dynamic-vhcu-demo", "hygon.com/container-index") == "0,");
  BOOST_TEST(n.NodeAnnotations().count("hami.io/mutex.lock") == 0u);

  // Registration: the remaining list shows the vHCU on card 0.
  BOOST_TEST(WaitUntil([&] {
    return n.NodeAnnotations()["hygon.com/node-hcu-register"].rfind(
               std::string(kSn0) + ",3,57328,70,HCU-K100_AI,", 0) == 0;
  }));
  auto ann = n.NodeAnnotations();
  BOOST_TEST(ann["hami.io/node-hcu-register"].rfind(std::string(kSn0) + ",4,65520,100,HCU-K100_AI,",
                                                   0) == 0);
  BOOST_TEST(ann["hami.io/node-handshake-hcu"].rfind("Reported ", 0) == 0);
}

BOOST_AUTO_TEST_CASE(a_whole_card_request_gets_no_vhcu_and_a_minus_one_mark) {
  HamiNode n;
  n.Start();
  const std::string uid =
      n.SchedulePod({"whole", {{"main", std::string(kSn0) + ",HCU,65520,100:"}}});
  auto r = n.MustAllocate(1);
  BOOST_TEST(n.Confs().empty());
  BOOST_TEST(n.Marks() == std::set<std::string>{uid + "_main_0_-1"},
             boost::test_tools::per_element());
  BOOST_TEST(Mounts(r) == std::set<std::string>{kHyhal}, boost::test_tools::per_element());
  BOOST_TEST(n.PodAnnotation("whole", "hami.io/bind-phase") == "success");
  BOOST_TEST(n.NodeAnnotations().count("hami.io/mutex.lock") == 0u);
}

BOOST_AUTO_TEST_CASE(a_multi_container_pod_is_served_container_by_container) {
  HamiNode n;
  n.Start();
  const std::string uid = n.SchedulePod({"multi",
                                         {{"a", std::string(kSn0) + ",HCU,8192,30:"},
                                          {"sidecar", ""},
                                          {"b", std::string(kSn1) + ",HCU,65520,100:"}}});
  n.MustAllocate(1);
  BOOST_TEST(n.PodAnnotation("multi", "hami.io/bind-phase") == "allocating");
  BOOST_TEST(n.PodAnnotation("multi", "hygon.com/container-index") == "2,");
  BOOST_TEST(n.NodeAnnotations().count("hami.io/mutex.lock") == 1u);  // more to come

  n.MustAllocate(1);
  BOOST_TEST(n.PodAnnotation("multi", "hami.io/bind-phase") == "success");
  BOOST_TEST(n.NodeAnnotations().count("hami.io/mutex.lock") == 0u);
  std::set<std::string> marks = n.Marks();
  BOOST_REQUIRE_EQUAL(marks.size(), 2u);
  BOOST_TEST(marks.count(uid + "_b_1_-1") == 1u);
  BOOST_TEST(marks.begin()->rfind(uid + "_a_0_", 0) == 0);
}

BOOST_AUTO_TEST_CASE(a_device_count_mismatch_fails_the_pod_frees_the_lock_and_leaks_nothing) {
  HamiNode n;
  n.Start();
  n.SchedulePod({"mismatch", {{"main", std::string(kSn0) + ",HCU,8192,30:"}}});
  v1beta1::AllocateResponse response;
  grpc::Status s = n.Allocate({{std::string(kSn0) + "-fake-0", std::string(kSn0) + "-fake-1"}},
                              &response);
  BOOST_TEST(!s.ok());
  BOOST_TEST(s.error_message().find("device number not matched") != std::string::npos,
             s.error_message());
  BOOST_TEST(n.PodAnnotation("mismatch", "hami.io/bind-phase") == "failed");
  BOOST_TEST(n.NodeAnnotations().count("hami.io/mutex.lock") == 0u);
  BOOST_TEST(n.Confs().empty());
  BOOST_TEST(n.Marks().empty());
}

BOOST_AUTO_TEST_CASE(without_a_pending_pod_allocate_fails_and_touches_no_lock_of_others) {
  HamiNode n;
  n.Start();
  n.Lock("someone-else");  // a lock whose pod does not exist here
  v1beta1::AllocateResponse response;
  grpc::Status s = n.Allocate({{std::string(kSn0) + "-fake-0"}}, &response);
  BOOST_TEST(!s.ok());
  BOOST_TEST(s.error_message().find("no pod on node node1 is pending") != std::string::npos,
             s.error_message());
  BOOST_TEST(n.NodeAnnotations().count("hami.io/mutex.lock") == 1u);
  BOOST_TEST(n.Confs().empty());
}

BOOST_AUTO_TEST_CASE(hcucores_gets_one_response_with_kfd_and_mkfd_only) {
  HamiNode n({"--resource-multiple=true"});
  n.Start();
  n.h().RequireRegistered("hygon.com/hcucores");
  v1beta1::AllocateResponse response;
  grpc::Status s = n.Allocate({{"0", "1"}, {"2"}}, &response, "hygon.com/hcucores");
  BOOST_REQUIRE_MESSAGE(s.ok(), s.error_message());
  BOOST_REQUIRE_EQUAL(response.container_responses_size(), 1);
  BOOST_TEST(DeviceSpecs(response.container_responses(0)) ==
                 (std::set<std::string>{kKfdRwm, kMkfdRwm}),
             boost::test_tools::per_element());
  BOOST_TEST(response.container_responses(0).mounts_size() == 0);
  // hcumem in node status: 8 cards x 65520 MiB.
  BOOST_TEST(WaitUntil([&] {
    return n.GetNode().raw_json.find(R"("hygon.com/hcumem": "524160")") != std::string::npos ||
           n.GetNode().raw_json.find(R"("hygon.com/hcumem":"524160")") != std::string::npos;
  }));
}

BOOST_AUTO_TEST_CASE(deleting_the_pod_destroys_its_vhcu_and_removes_the_mark) {
  HamiNode n;
  n.Start();
  n.SchedulePod({"short-lived", {{"main", std::string(kSn0) + ",HCU,8192,30:"}}});
  n.MustAllocate(1);
  BOOST_REQUIRE_EQUAL(n.Confs().size(), 1u);
  n.api().MustRequest("DELETE", "/api/v1/namespaces/default/pods/short-lived");
  BOOST_TEST(WaitUntil([&] { return n.Confs().empty() && n.Marks().empty(); }));
  // The remaining list is back to the full card.
  BOOST_TEST(WaitUntil([&] {
    return n.NodeAnnotations()["hygon.com/node-hcu-register"].rfind(
               std::string(kSn0) + ",4,65520,100,", 0) == 0;
  }));
}

BOOST_AUTO_TEST_CASE(a_succeeded_pod_gives_its_vhcu_back) {
  HamiNode n;
  n.Start();
  n.SchedulePod({"job", {{"main", std::string(kSn0) + ",HCU,8192,30:"}}});
  n.MustAllocate(1);
  n.SetPhase("job", "Running");
  std::this_thread::sleep_for(milliseconds(300));
  BOOST_TEST(n.Confs().size() == 1u);  // a live pod's vHCU stays
  n.SetPhase("job", "Succeeded");
  BOOST_TEST(WaitUntil([&] { return n.Confs().empty() && n.Marks().empty(); }));
}

BOOST_AUTO_TEST_CASE(a_crash_between_create_and_mark_leaks_nothing_and_keeps_live_vhcus) {
  HamiNode n;
  n.Start();
  const std::string live_uid =
      n.SchedulePod({"live", {{"main", std::string(kSn0) + ",HCU,8192,30:"}}});
  n.MustAllocate(1);
  n.SetPhase("live", "Running");
  BOOST_REQUIRE_EQUAL(n.Confs().size(), 1u);
  const std::set<std::string> live_conf = n.Confs();
  const std::set<std::string> live_marks = n.Marks();

  // Restart with the crash hook: the daemon SIGKILLs itself right after the
  // driver created the next vHCU, before it is recorded anywhere.
  n.h().daemon().Stop();
  BOOST_REQUIRE_EQUAL(n.h().daemon().Start(n.h().argv(), n.h().log_path(),
                                           {"HCUDP_TEST_ONLY_CRASH_AFTER=vhcu-created"},
                                           DaemonEnvVars()),
                      "");
  n.h().RequireRegistered(kCount, 2);
  n.SchedulePod({"victim", {{"main", std::string(kSn1) + ",HCU,4096,50:"}}});
  v1beta1::AllocateResponse response;
  BOOST_TEST(!n.Allocate({{std::string(kSn1) + "-fake-0"}}, &response).ok());
  auto exit = n.h().daemon().WaitForExit(milliseconds(5000));
  BOOST_REQUIRE(exit.has_value());
  BOOST_TEST(n.Confs().size() == 2u);  // the orphan exists now

  // A normal restart recovers: the orphan goes, the live pod's vHCU stays.
  BOOST_REQUIRE_EQUAL(n.h().daemon().Start(n.h().argv(), n.h().log_path(), {}, DaemonEnvVars()),
                      "");
  BOOST_TEST(WaitUntil([&] { return n.Confs() == live_conf; }));
  BOOST_TEST(n.Marks() == live_marks, boost::test_tools::per_element());
  // kubelet retries the victim's Allocate; it now succeeds.
  n.h().RequireRegistered(kCount, 3);
  BOOST_TEST(n.Allocate({{std::string(kSn1) + "-fake-0"}}, &response).ok());
  BOOST_TEST(n.Confs().size() == 2u);
  BOOST_TEST(n.PodAnnotation("victim", "hami.io/bind-phase") == "success");
  BOOST_TEST(live_marks.begin()->rfind(live_uid, 0) == 0);
}

BOOST_AUTO_TEST_CASE(api_faults_a_conflict_and_a_rotated_token_are_survived) {
  HamiNode n;
  n.Start();
  n.SchedulePod({"faulty", {{"main", std::string(kSn0) + ",HCU,8192,30:"}}});
  n.api().AddFault(R"({"method":"PATCH","path":"/api/v1/namespaces/default/pods/faulty$",)"
                   R"("status":500,"count":2})");
  n.api().AddFault(R"({"method":"GET","path":"/api/v1/nodes/node1$","status":429,"count":1,)"
                   R"("retry_after":0})");
  n.api().AddFault(R"({"method":"PATCH","path":"/api/v1/nodes/node1$","status":409,"count":1})");
  n.MustAllocate(1);
  BOOST_TEST(n.PodAnnotation("faulty", "hami.io/bind-phase") == "success");
  BOOST_TEST(WaitUntil([&] { return n.NodeAnnotations().count("hami.io/mutex.lock") == 0; }));

  n.api().SetToken("rotated-token-2");
  n.SchedulePod({"after-rotation", {{"main", std::string(kSn1) + ",HCU,8192,30:"}}});
  v1beta1::AllocateResponse response;
  grpc::Status s = n.Allocate({{std::string(kSn1) + "-fake-0"}}, &response);
  BOOST_TEST(s.ok(), s.error_message());
  BOOST_TEST(n.PodAnnotation("after-rotation", "hami.io/bind-phase") == "success");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
