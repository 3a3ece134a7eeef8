// NodeLabelPublisher: the features.d file (content, expiry, refresh on
// change and before expiry, in simulated time) and the node mode against the
// fake API server (our keys added, changed and removed; others untouched).
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "fake_apiserver/fake_apiserver_process.h"
#include "hcudp/kube_ops.h"
#include "hcudp/node_labels.h"
#include "kube/kube_test_util.h"
#include "testing/sim_clock.h"
#include "testing/testutil.h"

namespace hcudp {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::FakeApiServer;
using testing::SimClock;
using testing::TempDir;

// Polls `done` every 10 ms for up to `timeout` of real time.
bool Eventually(const std::function<bool()>& done, milliseconds timeout = milliseconds(5000)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return true;
}

// Holds a double (a file write, a response callback) inside the publisher's
// thread until the test releases it.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool entered = false;
  bool released = false;
  bool returned = false;
};

const NodeLabels kK100 = {
    {"hygon.com/hcu", "true"}, {"hygon.com/hcu.count", "8"}, {"hygon.com/hcu.name", "K100_AI"}};

BOOST_AUTO_TEST_SUITE(label_publisher)

BOOST_AUTO_TEST_CASE(nfd_file_is_written_on_change_and_refreshed_before_expiry) {
  TempDir dir;
  SimClock clock;  // wall 1'800'000'000 s = 2027-01-15T08:00:00Z
  NodeLabelPublisherOptions o;
  o.mode = NodeLabelMode::kNfd;
  o.nfd_features_dir = dir.Join("features.d");  // created by the publisher
  o.nfd_ttl = seconds(600);
  o.refresh = seconds(300);
  NodeLabelPublisher pub(o, clock);
  BOOST_REQUIRE(pub.Start().ok());
  const std::string file = dir.Join("features.d/hcu-device-plugin");

  pub.Update(kK100);
  BOOST_REQUIRE(Eventually([&] { return pub.publishes() == 1; }));
  std::string text = testing::ReadFile(file);
  BOOST_TEST(text.find("# +expiry-time=2027-01-15T08:10:00Z\n") != std::string::npos, text);
  BOOST_TEST(text.find("\nhygon.com/hcu.name=K100_AI\n") != std::string::npos, text);
  // Only the final file is visible: no temp file left beside it.
  auto names = testing::Run({"/bin/ls", "-A", dir.Join("features.d")});
  BOOST_TEST(names.out == "hcu-device-plugin\n");

  // An inventory change is written at once, with no time passing.
  NodeLabels changed = kK100;
  changed["hygon.com/hcu.count"] = "7";
  pub.Update(changed);
  BOOST_REQUIRE(Eventually([&] { return pub.publishes() == 2; }));
  BOOST_TEST(testing::ReadFile(file).find("hygon.com/hcu.count=7\n") != std::string::npos);
  // The same labels again change nothing.
  pub.Update(changed);

  // Before the expiry (at the refresh, 300 s later) the file is rewritten
  // with a later expiry, so NFD never drops a live node's labels.
  BOOST_REQUIRE(clock.WaitForSleepers(1, milliseconds(5000)));
  BOOST_TEST(pub.publishes() == 2u);
  clock.Advance(seconds(299));
  BOOST_REQUIRE(clock.WaitForSleepers(1, milliseconds(5000)));
  BOOST_TEST(pub.publishes() == 2u);  // not yet
  clock.Advance(seconds(1));
  BOOST_REQUIRE(Eventually([&] { return pub.publishes() == 3; }));
  BOOST_TEST(testing::ReadFile(file).find("# +expiry-time=2027-01-15T08:15:00Z\n") !=
             std::string::npos);
  pub.Stop();
  // Kept on exit: the labels lapse by themselves only if no daemon returns.
  BOOST_TEST(testing::PathExists(file));
}

// Issue 29 item 6: a labels file someone deleted or changed (a cleanup
// script, a node image update, a hand edit) is written again within `retry`,
// not only at the next refresh: NFD would otherwise drop the node's labels,
// hygon.com/hcu=true with them, for up to `refresh`.
BOOST_AUTO_TEST_CASE(nfd_file_deleted_or_changed_is_written_again_within_the_retry_period) {
  TempDir dir;
  SimClock clock;
  NodeLabelPublisherOptions o;
  o.mode = NodeLabelMode::kNfd;
  o.nfd_features_dir = dir.Join("features.d");
  o.nfd_ttl = seconds(600);
  o.refresh = seconds(300);
  o.retry = seconds(5);
  NodeLabelPublisher pub(o, clock);
  BOOST_REQUIRE(pub.Start().ok());
  const std::string file = dir.Join("features.d/hcu-device-plugin");
  pub.Update(kK100);
  BOOST_REQUIRE(Eventually([&] { return pub.publishes() == 1; }));
  const std::string written = testing::ReadFile(file);

  // Deleted: back within one retry period, the same labels.
  BOOST_REQUIRE(clock.WaitForSleepers(1, milliseconds(5000)));
  BOOST_REQUIRE(::unlink(file.c_str()) == 0);
  clock.Advance(seconds(5));
  BOOST_REQUIRE_MESSAGE(Eventually([&] { return testing::PathExists(file); }),
                        "the deleted labels file was not written again within 5 s");
  BOOST_TEST(testing::ReadFile(file).find("\nhygon.com/hcu.name=K100_AI\n") != std::string::npos);
  BOOST_TEST(testing::ReadFile(file).find("\nhygon.com/hcu=true\n") != std::string::npos);

  // Changed: our text again within one retry period.
  BOOST_REQUIRE(clock.WaitForSleepers(1, milliseconds(5000)));
  const uint64_t before = pub.publishes();
  testing::WriteFile(file, "hygon.com/hcu=false\n");
  clock.Advance(seconds(5));
  BOOST_REQUIRE_MESSAGE(Eventually([&] { return pub.publishes() > before; }),
                        "the changed labels file was not written again within 5 s");
  BOOST_TEST(testing::ReadFile(file).find("\nhygon.com/hcu.name=K100_AI\n") != std::string::npos);

  // Left alone, it is not rewritten before the refresh.
  BOOST_REQUIRE(clock.WaitForSleepers(1, milliseconds(5000)));
  const uint64_t settled = pub.publishes();
  clock.Advance(seconds(5));
  BOOST_REQUIRE(clock.WaitForSleepers(1, milliseconds(5000)));
  clock.Advance(seconds(5));
  BOOST_REQUIRE(clock.WaitForSleepers(1, milliseconds(5000)));
  BOOST_TEST(pub.publishes() == settled);
}

BOOST_AUTO_TEST_CASE(a_first_inventory_without_cards_is_published_too) {
  // A node whose driver is still loading has no cards at start: the empty
  // label set must still be written (it replaces an earlier run's file).
  TempDir dir;
  SimClock clock;
  NodeLabelPublisherOptions o;
  o.mode = NodeLabelMode::kNfd;
  o.nfd_features_dir = dir.Join("features.d");
  NodeLabelPublisher pub(o, clock);
  BOOST_REQUIRE(pub.Start().ok());
  pub.Update({});
  BOOST_REQUIRE(Eventually([&] { return pub.publishes() == 1; }));
  const std::string text = testing::ReadFile(dir.Join("features.d/hcu-device-plugin"));
  BOOST_TEST(text.find("hygon.com/") == std::string::npos, text);
  pub.Stop();
}

// The plugin's DaemonSet is placed by hygon.com/hcu. A restart while the
// driver reloads (no cards for a moment) must not write a file without it:
// NFD would drop the label, Kubernetes would evict the plugin, and nothing
// would write the file again. The expiring keys do go.
BOOST_AUTO_TEST_CASE(nfd_keeps_the_placement_label_of_an_earlier_file_when_no_cards_are_seen) {
  TempDir dir;
  SimClock clock;
  const std::string file = dir.Join("features.d/hcu-device-plugin");
  testing::WriteFile(file,
                     "hygon.com/hcu=true\n# +expiry-time=2027-01-15T08:10:00Z\n"
                     "hygon.com/hcu.count=8\n");
  NodeLabelPublisherOptions o;
  o.mode = NodeLabelMode::kNfd;
  o.nfd_features_dir = dir.Join("features.d");
  NodeLabelPublisher pub(o, clock);
  BOOST_REQUIRE(pub.Start().ok());
  pub.Update({});
  BOOST_REQUIRE(Eventually([&] { return pub.publishes() == 1; }));
  std::string text = testing::ReadFile(file);
  BOOST_TEST(text.find("\nhygon.com/hcu=true\n") != std::string::npos, text);
  BOOST_TEST(text.find("hygon.com/hcu.count") == std::string::npos, text);
  // The same within one run: cards seen, then gone.
  pub.Update(kK100);
  BOOST_REQUIRE(Eventually([&] { return pub.publishes() == 2; }));
  pub.Update({});
  BOOST_REQUIRE(Eventually([&] { return pub.publishes() == 3; }));
  text = testing::ReadFile(file);
  BOOST_TEST(text.find("\nhygon.com/hcu=true\n") != std::string::npos, text);
  BOOST_TEST(text.find("hygon.com/hcu.name") == std::string::npos, text);
  pub.Stop();
}

// --nfd-features-dir pointing at a symbolic link whose target does not
// exist (yet) is an error the publisher retries, not a crash.
BOOST_AUTO_TEST_CASE(nfd_dir_that_is_a_dangling_symlink_is_an_error) {
  TempDir dir;
  SimClock clock;
  BOOST_REQUIRE(::symlink(dir.Join("nowhere").c_str(), dir.Join("features.d").c_str()) == 0);
  NodeLabelPublisherOptions o;
  o.mode = NodeLabelMode::kNfd;
  o.nfd_features_dir = dir.Join("features.d");
  NodeLabelPublisher pub(o, clock);
  BOOST_REQUIRE(pub.Start().ok());
  pub.Update(kK100);
  BOOST_REQUIRE(Eventually([&] { return !pub.last_status().ok(); }));
  BOOST_TEST(pub.last_status().message().find(dir.Join("features.d")) != std::string::npos,
             pub.last_status().ToString());
  pub.Stop();
}

BOOST_AUTO_TEST_CASE(nfd_write_failure_is_retried) {
  TempDir dir;
  SimClock clock;
  testing::WriteFile(dir.Join("not-a-dir"), "x");
  NodeLabelPublisherOptions o;
  o.mode = NodeLabelMode::kNfd;
  o.nfd_features_dir = dir.Join("not-a-dir");
  o.retry = seconds(5);
  NodeLabelPublisher pub(o, clock);
  BOOST_REQUIRE(pub.Start().ok());
  pub.Update(kK100);
  BOOST_REQUIRE(Eventually([&] { return !pub.last_status().ok(); }));
  BOOST_TEST(pub.last_status().message().find("--nfd-features-dir") != std::string::npos,
             pub.last_status().ToString());
  // The operator fixes the directory; the retry 5 s later writes the file.
  BOOST_REQUIRE(clock.WaitForSleepers(1, milliseconds(5000)));
  ::unlink(dir.Join("not-a-dir").c_str());
  clock.Advance(seconds(5));
  BOOST_REQUIRE(Eventually([&] { return pub.publishes() == 1; }));
  BOOST_TEST(testing::PathExists(dir.Join("not-a-dir/hcu-device-plugin")));
}

BOOST_AUTO_TEST_CASE(bad_options_are_refused) {
  NodeLabelPublisherOptions nfd;
  nfd.mode = NodeLabelMode::kNfd;
  nfd.nfd_ttl = seconds(60);
  nfd.refresh = seconds(60);
  BOOST_TEST(!NodeLabelPublisher(nfd).Start().ok());
  NodeLabelPublisherOptions node;
  node.mode = NodeLabelMode::kNode;
  BOOST_TEST(!NodeLabelPublisher(node).Start().ok());
  NodeLabelPublisherOptions off;
  BOOST_TEST(NodeLabelPublisher(off).Start().ok());
}

// A features.d write that hangs (a stuck disk: fsync never returns) must
// not hold up Stop(), which the daemon calls on SIGTERM. The double blocks
// until released, or gives up by itself after 10 s so that a Stop() that
// joins it fails the test instead of hanging it.
BOOST_AUTO_TEST_CASE(stop_is_bounded_while_a_file_write_hangs) {
  auto gate = std::make_shared<Gate>();
  TempDir dir;
  NodeLabelPublisherOptions o;
  o.mode = NodeLabelMode::kNfd;
  o.nfd_features_dir = dir.Join("features.d");
  o.stop_timeout = milliseconds(200);
  o.write_file = [gate](const std::string&, const std::string&) {
    std::unique_lock<std::mutex> lock(gate->mu);
    gate->entered = true;
    gate->cv.notify_all();
    gate->cv.wait_for(lock, seconds(10), [&] { return gate->released; });
    gate->returned = true;
    gate->cv.notify_all();
    return OkStatus();
  };
  auto pub = std::make_unique<NodeLabelPublisher>(o);
  BOOST_REQUIRE(pub->Start().ok());
  pub->Update(kK100);
  {
    std::unique_lock<std::mutex> lock(gate->mu);
    BOOST_REQUIRE(gate->cv.wait_for(lock, seconds(5), [&] { return gate->entered; }));
  }
  const auto t0 = std::chrono::steady_clock::now();
  pub->Stop();
  pub.reset();  // the destructor too returns with the write still hanging
  const auto took_ms =
      std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - t0).count();
  BOOST_TEST(took_ms < 1000, "Stop took " << took_ms << " ms");
  // The write finishes later; the thread left behind then ends quietly.
  std::unique_lock<std::mutex> lock(gate->mu);
  BOOST_TEST(!gate->returned);
  gate->released = true;
  gate->cv.notify_all();
  BOOST_TEST(gate->cv.wait_for(lock, seconds(5), [&] { return gate->returned; }));
}

struct NodeFixture {
  NodeFixture() {
    client = std::move(KubeClient::New(testing::ConfigFor(api)).value());
    api.MustRequest("POST", "/api/v1/nodes",
                    R"({"metadata":{"name":"n1","labels":{"zone":"a",)"
                    R"("hygon.com/hcu.custom":"admin"}}})");
  }
  std::map<std::string, std::string> Labels() {
    auto node = GetNode(*client, "n1");
    BOOST_REQUIRE_MESSAGE(node.ok(), node.status().ToString());
    return node->metadata.labels;
  }
  FakeApiServer api;
  std::unique_ptr<KubeClient> client;
};

BOOST_FIXTURE_TEST_CASE(node_mode_adds_changes_and_removes_only_our_keys, NodeFixture) {
  SimClock clock;
  NodeLabelPublisherOptions o;
  o.mode = NodeLabelMode::kNode;
  o.node_name = "n1";
  o.client = client.get();
  o.refresh = seconds(300);
  NodeLabelPublisher pub(o, clock);
  BOOST_REQUIRE(pub.Start().ok());

  pub.Update(kK100);
  BOOST_REQUIRE(Eventually([&] { return pub.publishes() == 1; }));
  std::map<std::string, std::string> want = {{"zone", "a"},
                                             {"hygon.com/hcu.custom", "admin"},
                                             {"hygon.com/hcu", "true"},
                                             {"hygon.com/hcu.count", "8"},
                                             {"hygon.com/hcu.name", "K100_AI"}};
  BOOST_TEST(Labels() == want);

  // The node turns heterogeneous: hcu.name no longer applies and goes.
  pub.Update({{"hygon.com/hcu", "true"},
              {"hygon.com/hcu.count", "3"},
              {"hygon.com/hcu.models", "K100_AI.Z100L"}});
  BOOST_REQUIRE(Eventually([&] { return pub.publishes() == 2; }));
  want.erase("hygon.com/hcu.name");
  want["hygon.com/hcu.count"] = "3";
  want["hygon.com/hcu.models"] = "K100_AI.Z100L";
  BOOST_TEST(Labels() == want);

  // Someone edits one of our keys; the refresh puts it back. A refresh that
  // finds nothing to change sends no PATCH.
  api.MustRequest("PATCH", "/api/v1/nodes/n1",
                  R"({"metadata":{"labels":{"hygon.com/hcu.count":"99"}}})",
                  "application/merge-patch+json");
  api.ClearRequests();
  BOOST_REQUIRE(clock.WaitForSleepers(1, milliseconds(5000)));
  clock.Advance(seconds(300));
  BOOST_REQUIRE(Eventually([&] { return pub.publishes() == 3; }));
  BOOST_TEST(Labels().at("hygon.com/hcu.count") == "3");
  BOOST_REQUIRE(clock.WaitForSleepers(1, milliseconds(5000)));
  clock.Advance(seconds(300));
  BOOST_REQUIRE(Eventually([&] { return pub.publishes() == 4; }));
  auto log = api.Requests();
  BOOST_TEST(testing::CountRequests(log, "PATCH", "/api/v1/nodes/n1") == 1);
  BOOST_TEST(testing::CountRequests(log, "GET", "/api/v1/nodes/n1") >= 2);
}

BOOST_FIXTURE_TEST_CASE(node_mode_stop_does_not_wait_for_a_silent_api_server, NodeFixture) {
  NodeLabelPublisherOptions o;
  o.mode = NodeLabelMode::kNode;
  o.node_name = "n1";
  o.client = client.get();
  NodeLabelPublisher pub(o);
  api.NeverAnswer("GET", "/api/v1/nodes/n1$");
  BOOST_REQUIRE(pub.Start().ok());
  pub.Update(kK100);
  BOOST_REQUIRE(Eventually(
      [&] { return testing::CountRequests(api.Requests(), "GET", "/api/v1/nodes/n1") >= 1; }));
  const auto t0 = std::chrono::steady_clock::now();
  pub.Stop();
  const auto took_ms =
      std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - t0).count();
  BOOST_TEST(took_ms < 1000, "Stop took " << took_ms << " ms");
  api.ClearFaults();
}

// A node-mode call that does not see the cancel in time (here: the
// client's response callback is slow) must still be waited for: the client
// belongs to the caller, who destroys it as soon as Stop() returns. Before,
// Stop() left the thread inside the call after stop_timeout.
BOOST_AUTO_TEST_CASE(node_mode_stop_waits_for_a_call_that_misses_the_cancel) {
  auto gate = std::make_shared<Gate>();
  FakeApiServer api;
  api.MustRequest("POST", "/api/v1/nodes", R"({"metadata":{"name":"n1"}})");
  KubeClientOptions co;
  co.on_response = [gate](const std::string&, int) {
    std::unique_lock<std::mutex> lock(gate->mu);
    if (gate->entered) return;  // only the first response is slow
    gate->entered = true;
    gate->cv.notify_all();
    gate->cv.wait_for(lock, seconds(10), [&] { return gate->released; });
    gate->returned = true;
  };
  std::unique_ptr<KubeClient> client =
      std::move(KubeClient::New(testing::ConfigFor(api), co).value());
  NodeLabelPublisherOptions o;
  o.mode = NodeLabelMode::kNode;
  o.node_name = "n1";
  o.client = client.get();
  o.stop_timeout = milliseconds(100);
  auto pub = std::make_unique<NodeLabelPublisher>(o);
  BOOST_REQUIRE(pub->Start().ok());
  pub->Update(kK100);
  {
    std::unique_lock<std::mutex> lock(gate->mu);
    BOOST_REQUIRE(gate->cv.wait_for(lock, seconds(5), [&] { return gate->entered; }));
  }
  // Released well after stop_timeout, from another thread.
  std::thread releaser([gate] {
    std::this_thread::sleep_for(milliseconds(400));
    std::lock_guard<std::mutex> lock(gate->mu);
    gate->released = true;
    gate->cv.notify_all();
  });
  pub->Stop();
  bool returned;
  {
    std::lock_guard<std::mutex> lock(gate->mu);
    returned = gate->returned;
  }
  BOOST_TEST(returned, "Stop() returned while the publisher was still inside the client");
  releaser.join();
  pub.reset();
  client.reset();  // safe only if no thread is left in it
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
