// Two claims naming the same exclusive device (a pre-split vHCU) prepared at
// once: exactly one gets it, the other a per-claim error, nothing leaks.
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "dra_prepare/prepare_fixture.h"

namespace hcudp::testing {
namespace {

// A claim allocated (as a scheduler with a stale view might) to `device`.
std::string ClaimOnDevice(const std::string& uid, const std::string& name,
                          const std::string& device) {
  return "{\"metadata\":{\"namespace\":\"ns1\",\"name\":\"" + name + "\",\"uid\":\"" + uid +
         "\"},\"status\":{\"allocation\":{\"devices\":{\"results\":[{\"request\":\"v\","
         "\"driver\":\"dra.hygon.com\",\"pool\":\"node-a\",\"device\":\"" +
         device + "\"}]}},\"reservedFor\":[{\"resource\":\"pods\",\"name\":\"p\",\"uid\":\"pod-" +
         uid + "\"}]}}";
}

BOOST_AUTO_TEST_CASE(two_claims_on_one_pre_split_vhcu_only_one_prepares) {
  // The first Prepare past the in-use check waits (at its first durable
  // step) until the other call has reached that step too or has returned:
  // the window in which both passed the check before claims were reserved.
  std::mutex mu;
  std::condition_variable cv;
  int at_step = 0;
  int returned = 0;
  dra::PreparerOptions options;
  options.crash_after = [&](dra::PrepareStep step) {
    if (step != dra::PrepareStep::kCheckpointPreparing) return false;
    std::unique_lock<std::mutex> lock(mu);
    ++at_step;
    cv.notify_all();
    cv.wait_for(lock, std::chrono::seconds(10), [&] { return at_step >= 2 || returned >= 1; });
    return false;
  };
  SimDraNode node("z100l-mixed.yaml");
  node.Restart(options);
  BOOST_REQUIRE(node.preparer->Recover().ok());
  const NodeInventory before = node.Inventory();
  BOOST_REQUIRE(!before.vhcus.empty());
  const std::string device = dra::VhcuDeviceName(before.vhcus[0]);
  node.claims.Put(ClaimOnDevice("uid-a", "ca", device));
  node.claims.Put(ClaimOnDevice("uid-b", "cb", device));

  StatusOr<dra::PrepareAnswer> answers[2] = {InternalError("not run"), InternalError("not run")};
  const dra::ClaimRef refs[2] = {{"ns1", "ca", "uid-a"}, {"ns1", "cb", "uid-b"}};
  std::thread threads[2];
  for (int i = 0; i < 2; ++i) {
    threads[i] = std::thread([&, i] {
      answers[i] = node.preparer->Prepare(refs[i]);
      std::lock_guard<std::mutex> lock(mu);
      ++returned;
      cv.notify_all();
    });
  }
  for (auto& t : threads) t.join();

  int prepared = 0;
  int refused = 0;
  for (int i = 0; i < 2; ++i) {
    BOOST_REQUIRE_MESSAGE(answers[i].ok(), answers[i].status().ToString());
    if (answers[i]->error.empty()) {
      ++prepared;
      BOOST_REQUIRE_EQUAL(answers[i]->devices.size(), 1u);
      BOOST_TEST(answers[i]->devices[0].device_name == device);
    } else {
      ++refused;
      BOOST_TEST(answers[i]->error.find(device) != std::string::npos, answers[i]->error);
      BOOST_TEST(answers[i]->devices.empty());
    }
  }
  BOOST_TEST(prepared == 1);
  BOOST_TEST(refused == 1);
  BOOST_TEST(node.preparer->Prepared().size() == 1u);
  BOOST_TEST(node.Files("/var/lib/hcu-device-plugin/dra").size() == 1u);

  // No leak: once the winner is unprepared, the loser's retry gets the
  // device (its reservation was released), and everything goes again.
  const int winner = answers[0]->error.empty() ? 0 : 1;
  BOOST_REQUIRE(node.preparer->Unprepare(refs[winner]).ok());
  auto retry = node.preparer->Prepare(refs[1 - winner]);
  BOOST_REQUIRE(retry.ok());
  BOOST_TEST(retry->error.empty(), retry->error);
  BOOST_REQUIRE(node.preparer->Unprepare(refs[1 - winner]).ok());
  BOOST_TEST(node.preparer->Prepared().empty());
  BOOST_TEST(node.Files("/var/lib/hcu-device-plugin/dra").empty());
  BOOST_TEST(node.Inventory().vhcus.size() == before.vhcus.size());  // pre-split: kept
}

// kubelet (before its fix of the prepare/unprepare race) may send the
// Unprepare of a claim while that claim's Prepare still waits for the API
// server. The Unprepare must not answer "done" then: the Prepare goes on to
// make a vHCU after it, which nobody would unprepare. It is told to retry,
// and its retry after the Prepare frees the vHCU.
BOOST_AUTO_TEST_CASE(an_unprepare_during_the_prepares_get_is_retried_not_done) {
  SimDraNode node("k100ai-8.yaml");
  BOOST_REQUIRE(node.preparer->Recover().ok());
  const dra::ClaimRef ref = node.AllocateAndStore(
      ClaimJson("uid-r", "r", "[" + ExactRequest("hcu", R"({"cores":"20","memory":"4Gi"})") + "]"),
      "pod-r");
  std::mutex mu;
  std::condition_variable cv;
  bool in_get = false;
  bool release = false;
  dra::ClaimFetcher real = node.claims.Fetcher();
  node.UseFetcher([&, real](const dra::ClaimRef& r,
                            std::optional<Clock::TimePoint> deadline) -> StatusOr<std::string> {
    {
      std::unique_lock<std::mutex> lock(mu);
      in_get = true;
      cv.notify_all();
      cv.wait_for(lock, std::chrono::seconds(10), [&] { return release; });
    }
    return real(r, deadline);
  });
  BOOST_REQUIRE(node.preparer->Recover().ok());
  StatusOr<dra::PrepareAnswer> answer = InternalError("not run");
  std::thread prepare([&] { answer = node.preparer->Prepare(ref); });
  {
    std::unique_lock<std::mutex> lock(mu);
    BOOST_REQUIRE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return in_get; }));
  }
  const Status early = node.preparer->Unprepare(ref);
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
    cv.notify_all();
  }
  prepare.join();
  BOOST_TEST(!early.ok(), "Unprepare answered done while the claim's Prepare was running");
  BOOST_REQUIRE_MESSAGE(answer.ok(), answer.status().ToString());
  BOOST_REQUIRE_MESSAGE(answer->error.empty(), answer->error);
  BOOST_TEST(node.Inventory().vhcus.size() == 1u);
  // kubelet's retry of the Unprepare frees what the Prepare made.
  BOOST_REQUIRE(node.preparer->Unprepare(ref).ok());
  BOOST_TEST(node.Inventory().vhcus.empty());
  BOOST_TEST(node.preparer->Prepared().empty());
}

}  // namespace
}  // namespace hcudp::testing
