// HAMi mode end to end (DESIGN.md §5, reference/seed-behaviour.md §5): the
// real daemon with --strategy=hami on a simulated K100_AI node, the fake
// kubelet, and the fake API server playing the HCU scheduler (it writes the
// pod annotations of §5.4's worked example and locks the node).
#include <rapidjson/document.h>
#include <signal.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <functional>
#include <thread>

#include "fake_apiserver/fake_apiserver_process.h"
#include "hcudp/kube_objects.h"
#include "hcudp/vdev_conf.h"
#include "integration/hami_node.h"

namespace hcudp::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kCount = kHamiCount;

const std::string kKfdRwm = DeviceSpec("/dev/kfd", "rwm");
const std::string kMkfdRwm = DeviceSpec("/dev/mkfd", "rwm");
const std::string kHyhal = Mount("/opt/hyhal", "/opt/hyhal");

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
  BOOST_TEST(std::none_of(requests.begin(), requests.end(), IsPodList), seen);
  // A node write that met another writer (the registration's PATCH at
  // start) answers 409 and is re-read and retried: GET + PATCH more, each.
  const auto conflicts = std::count_if(requests.begin(), requests.end(),
                                       [](const FakeRequest& q) { return q.status == 409; });
  BOOST_TEST(requests.size() <= 5u + 2u * static_cast<size_t>(conflicts), seen);

  BOOST_REQUIRE_EQUAL(n.Confs().size(), 1u);
  const std::string conf = *n.Confs().begin();  // vdevN.conf
  const std::string vdev = conf.substr(4, conf.size() - 9);
  auto parsed = ParseVdevConf(ReadFile(n.HostPath("/etc/vdev/" + conf)));
  BOOST_REQUIRE(parsed.ok());
  BOOST_TEST(parsed->cu_count == 36);  // ceil(30 * 120 / 100)
  BOOST_TEST(parsed->mem_mib == 8192u);
  BOOST_TEST(parsed->device_id == 0);

  BOOST_TEST(
      DeviceSpecs(r) == (std::set<std::string>{kKfdRwm, kMkfdRwm, DeviceSpec("/dev/dri/card1"),
                                               DeviceSpec("/dev/dri/renderD128")}),
      boost::test_tools::per_element());
  BOOST_TEST(Mounts(r) == (std::set<std::string>{
                              kHyhal, Mount("/etc/vdev/" + conf, "/etc/vdev/docker/" + conf)}),
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

// The card's verdict reaches the registration through the daemon's health
// pipeline (hysteresis: a confirming re-read) as an event: no pulse at all.
BOOST_AUTO_TEST_CASE(an_unhealthy_card_is_re_registered_without_waiting_for_the_handshake) {
  HamiNode n({"--pulse=0"});
  n.Start();
  n.h().SetCardHealth(0, "Unhealthy");
  BOOST_TEST(WaitUntil(
      [&] {
        return n.NodeAnnotations()["hami.io/node-hcu-register"].rfind(
                   std::string(kSn0) + ",4,65520,100,HCU-K100_AI,0,false,0,hami:", 0) == 0;
      },
      milliseconds(8000)));
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
  grpc::Status s =
      n.Allocate({{std::string(kSn0) + "-fake-0", std::string(kSn0) + "-fake-1"}}, &response);
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
  for (const char* resource : {"hygon.com/hcunum", "hygon.com/hcucores"}) {
    v1beta1::DevicePluginOptions options;
    BOOST_REQUIRE(n.h().kubelet().GetOptions(resource, &options).ok());
    BOOST_TEST(!options.get_preferred_allocation_available(), resource);
  }
  v1beta1::AllocateResponse response;
  grpc::Status s = n.Allocate({{"0", "1"}, {"2"}}, &response, "hygon.com/hcucores");
  BOOST_REQUIRE_MESSAGE(s.ok(), s.error_message());
  BOOST_REQUIRE_EQUAL(response.container_responses_size(), 1);
  BOOST_TEST(
      DeviceSpecs(response.container_responses(0)) == (std::set<std::string>{kKfdRwm, kMkfdRwm}),
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
  // A sweep that sees the job Running: started by another pod's deletion
  // (after the job's phase change in the watch), over when it logs what it
  // reclaimed. It took the other pod's vHCU and kept the live job's.
  n.SchedulePod({"other", {{"main", std::string(kSn1) + ",HCU,8192,30:"}}});
  n.MustAllocate(1);
  BOOST_REQUIRE_EQUAL(n.Confs().size(), 2u);
  const std::set<std::string> both = n.Marks();
  n.api().MustRequest("DELETE", "/api/v1/namespaces/default/pods/other");
  BOOST_REQUIRE(n.h().daemon().WaitForLog("HAMi: reclaimed 1 vHCUs", milliseconds(10000)));
  BOOST_TEST(n.Confs().size() == 1u);  // a live pod's vHCU stays
  BOOST_TEST(n.Marks().size() == 1u);
  BOOST_TEST(both.count(*n.Marks().begin()) == 1u);
  n.SetPhase("job", "Succeeded");
  BOOST_TEST(WaitUntil([&] { return n.Confs().empty() && n.Marks().empty(); }));
}

// kill -9 after each step of a vHCU creation (HCUDP_TEST_ONLY_CRASH_AFTER
// makes the test copy of the daemon, hcu-dp-daemon-crashpoints, SIGKILL
// itself there), then a restart of the shipped daemon: the journal leaves
// no vHCU without a mark, a live pod's vHCU survives, and the node lock the
// dead Allocate held is released with its pod failed (issue 9 item 6).
BOOST_AUTO_TEST_CASE(a_kill_at_any_step_of_a_create_leaks_nothing_and_keeps_live_vhcus) {
  for (const std::string step :
       {"intent-recorded", "vhcu-created", "id-recorded", "mark-written"}) {
    BOOST_TEST_CONTEXT("crash after " << step) {
      HamiNode n;
      n.Start();
      const std::string live_uid =
          n.SchedulePod({"live", {{"main", std::string(kSn0) + ",HCU,8192,30:"}}});
      n.MustAllocate(1);
      n.SetPhase("live", "Running");
      BOOST_REQUIRE_EQUAL(n.Confs().size(), 1u);
      const std::set<std::string> live_conf = n.Confs();
      const std::string live_mark = *n.Marks().begin();

      n.h().daemon().Stop();
      std::vector<std::string> crashing = n.h().argv();
      crashing[0] = BinaryPath("test/integration/hcu-dp-daemon-crashpoints");
      BOOST_REQUIRE_EQUAL(
          n.h().daemon().Start(crashing, n.h().log_path(), {"HCUDP_TEST_ONLY_CRASH_AFTER=" + step},
                               DaemonEnvVars()),
          "");
      n.h().RequireRegistered(kCount, 2);
      const std::string victim_uid =
          n.SchedulePod({"victim", {{"main", std::string(kSn1) + ",HCU,4096,50:"}}});
      v1beta1::AllocateResponse response;
      BOOST_TEST(!n.Allocate({{std::string(kSn1) + "-fake-0"}}, &response).ok());
      BOOST_REQUIRE(n.h().daemon().WaitForExit(milliseconds(5000)).has_value());

      // Restart: recovery runs before the plugin serves again.
      BOOST_REQUIRE_EQUAL(n.h().daemon().Start(n.h().argv(), n.h().log_path(), {}, DaemonEnvVars()),
                          "");
      n.h().RequireRegistered(kCount, 3);
      // The victim's Allocate died with the old process (kubelet got an
      // error): its node lock is released, the pod marked failed, and every
      // vHCU it had is reclaimed; the live pod's stays.
      BOOST_TEST(n.NodeAnnotations().count("hami.io/mutex.lock") == 0u);
      BOOST_TEST(n.PodAnnotation("victim", "hami.io/bind-phase") == "failed");
      BOOST_TEST(WaitUntil([&] { return n.Confs() == live_conf; }));
      BOOST_TEST(n.Marks() == std::set<std::string>{live_mark}, boost::test_tools::per_element());
      std::error_code ec;
      BOOST_TEST(std::filesystem::is_empty(n.HostPath("/var/lib/hcu-device-plugin/intents"), ec));
      BOOST_TEST(live_mark.rfind(live_uid, 0) == 0);
      BOOST_TEST(victim_uid != live_uid);
    }
  }
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
