// kill -9 at every step of Prepare and Unprepare (and inside the vHCU
// lifecycle): a child process runs the call and SIGKILLs itself at the step
// (test hooks only); a fresh preparer then recovers. Nothing may leak, and an
// administrator's vHCU of the same size on the same card must survive.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <random>
#include <thread>

#include "dra_prepare/prepare_fixture.h"

namespace hcudp::testing {
namespace {

const std::string kRequest = "[" + ExactRequest("hcu", R"({"cores":"30","memory":"8Gi"})") + "," +
                             ExactRequest("card") + "]";

// Runs `body` in a child; true when it died of SIGKILL.
bool DiesOfSigkill(const std::function<void()>& body) {
  pid_t pid = fork();
  if (pid == 0) {
    body();
    _exit(0);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

void ExpectClean(SimDraNode& node, int admin_id, const std::string& what) {
  NodeInventory inv = node.Inventory();
  BOOST_TEST(inv.vhcus.size() == 1u, what << ": vHCUs left " << inv.vhcus.size());
  BOOST_TEST((inv.LookupVhcu(admin_id).certainty() == Certainty::kFound),
             what << ": the admin's vHCU was destroyed");
  BOOST_TEST(node.Files("/etc/vdev/dynamic").empty(), what);
  BOOST_TEST(node.Files("/var/lib/hcu-device-plugin/intents").empty(), what);
  BOOST_TEST(node.Files("/var/lib/hcu-device-plugin/dra").empty(), what);
  for (const auto& f : node.Files("/var/run/cdi")) {
    BOOST_TEST(f == "dra.hygon.com-hcu.json", what << ": " << f);
  }
}

BOOST_AUTO_TEST_CASE(kill_9_inside_prepare_leaks_nothing) {
  struct Point {
    std::string name;
    std::optional<dra::PrepareStep> step;
    std::optional<VhcuCreateStep> vhcu_step;
  };
  const std::vector<Point> points = {
      {"after preparing entry", dra::PrepareStep::kCheckpointPreparing, {}},
      {"after first device", dra::PrepareStep::kDeviceMade, {}},
      {"after claim spec", dra::PrepareStep::kClaimSpecWritten, {}},
      {"vhcu intent", {}, VhcuCreateStep::kIntentRecorded},
      {"vhcu created", {}, VhcuCreateStep::kVhcuCreated},
      {"vhcu id recorded", {}, VhcuCreateStep::kIdRecorded},
      {"vhcu mark", {}, VhcuCreateStep::kMarkWritten},
  };
  for (const Point& p : points) {
    SimDraNode node("k100ai-8.yaml");
    BOOST_REQUIRE(node.preparer->Recover().ok());
    auto ref = node.AllocateAndStore(ClaimJson("uid-k", "k", kRequest), "pod-k");
    // The admin's vHCU: same card and size as ours will be.
    auto admin = node.backend->CreateVhcu(0, 30, 8192);
    BOOST_REQUIRE(admin.ok());
    const bool killed = DiesOfSigkill([&] {
      dra::PreparerOptions o;
      if (p.step) {
        o.crash_after = [&](dra::PrepareStep s) {
          if (s == *p.step) ::raise(SIGKILL);
          return false;
        };
      }
      std::function<bool(VhcuCreateStep)> vhcu_crash;
      if (p.vhcu_step) {
        vhcu_crash = [&](VhcuCreateStep s) {
          if (s == *p.vhcu_step) ::raise(SIGKILL);
          return false;
        };
      }
      node.Restart(o, vhcu_crash);
      (void)node.preparer->Prepare(ref);
    });
    BOOST_REQUIRE_MESSAGE(killed, p.name << ": the crash point was not reached");
    // The crash left a half-made claim behind (else the test proves nothing).
    BOOST_REQUIRE_MESSAGE(!node.Files("/var/lib/hcu-device-plugin/dra").empty(), p.name);
    node.Restart();
    auto r = node.preparer->Recover();
    BOOST_REQUIRE_MESSAGE(r.ok(), p.name << ": " << r.status().ToString());
    BOOST_TEST(r->rolled_back == 1, p.name);
    ExpectClean(node, admin->id, p.name);
    // kubelet asks again: it works.
    auto again = node.preparer->Prepare(ref);
    BOOST_REQUIRE(again.ok());
    BOOST_TEST(again->error.empty(), p.name << ": " << again->error);
    BOOST_REQUIRE(node.preparer->Unprepare(ref).ok());
    ExpectClean(node, admin->id, p.name + " (after re-prepare)");
  }
}

// Without a vHCU the entry is written "prepared" first: a crash leaves a
// recorded claim whose mark is missing; the next Prepare repairs it, and a
// deleted claim is cleaned up by Recover.
BOOST_AUTO_TEST_CASE(kill_9_inside_a_whole_card_prepare_leaks_nothing) {
  for (dra::PrepareStep step :
       {dra::PrepareStep::kCheckpointPreparing, dra::PrepareStep::kDeviceMade}) {
    for (bool deleted : {false, true}) {
      SimDraNode node("k100ai-8.yaml");
      BOOST_REQUIRE(node.preparer->Recover().ok());
      auto ref = node.AllocateAndStore(
          ClaimJson("uid-c", "c", "[" + ExactRequest("a") + "," + ExactRequest("b") + "]"),
          "pod-c");
      auto admin = node.backend->CreateVhcu(0, 30, 8192);
      BOOST_REQUIRE(admin.ok());
      BOOST_REQUIRE(DiesOfSigkill([&] {
        dra::PreparerOptions o;
        o.crash_after = [&](dra::PrepareStep s) {
          if (s == step) ::raise(SIGKILL);
          return false;
        };
        node.Restart(o);
        (void)node.preparer->Prepare(ref);
      }));
      if (deleted) node.claims.Delete("uid-c");
      node.Restart();
      auto r = node.preparer->Recover();
      BOOST_REQUIRE(r.ok());
      const std::string what = std::string(deleted ? "deleted" : "kept") + " claim, step " +
                               std::to_string(static_cast<int>(step));
      if (!deleted) {
        // Recorded, and its marks are back (both whole cards).
        BOOST_TEST(r->kept == 1, what);
        BOOST_TEST(node.Files("/etc/vdev/dynamic").size() == 2u, what);
        auto again = node.preparer->Prepare(ref);
        BOOST_REQUIRE(again.ok() && again->error.empty());
        BOOST_TEST(again->devices.size() == 2u);
        BOOST_REQUIRE(node.preparer->Unprepare(ref).ok());
      } else {
        BOOST_TEST(r->unprepared == 1, what);
      }
      ExpectClean(node, admin->id, what);
    }
  }
}

// A whole card's mark is not forced to disk (its name is in the durable
// entry first): a power cut after Prepare answered may lose it or leave it
// empty. The restarted daemon's Recover, and a repeated Prepare without a
// restart, write it again with its content (the local time, as the vendor's).
BOOST_AUTO_TEST_CASE(a_whole_card_mark_lost_or_emptied_by_a_power_cut_is_written_again) {
  for (bool emptied : {false, true}) {
    for (bool restart : {true, false}) {
      const std::string what = std::string(emptied ? "emptied" : "lost") + " mark, " +
                               (restart ? "Recover after a restart" : "Prepare again");
      SimDraNode node("k100ai-8.yaml");
      BOOST_REQUIRE(node.preparer->Recover().ok());
      auto ref =
          node.AllocateAndStore(ClaimJson("uid-p", "p", "[" + ExactRequest("card") + "]"), "pod-p");
      auto a = node.preparer->Prepare(ref);
      BOOST_REQUIRE(a.ok() && a->error.empty());
      const std::vector<std::string> marks = node.Files("/etc/vdev/dynamic");
      BOOST_REQUIRE_EQUAL(marks.size(), 1u);
      const std::string mark = node.Path("/etc/vdev/dynamic/" + marks[0]);
      if (emptied) {
        BOOST_REQUIRE(::truncate(mark.c_str(), 0) == 0);
      } else {
        BOOST_REQUIRE(::unlink(mark.c_str()) == 0);
      }
      if (restart) {
        node.Restart();
        auto r = node.preparer->Recover();
        BOOST_REQUIRE(r.ok());
        BOOST_TEST(r->kept == 1, what);
      } else {
        auto again = node.preparer->Prepare(ref);
        BOOST_REQUIRE(again.ok() && again->error.empty());
      }
      BOOST_TEST(node.Files("/etc/vdev/dynamic") == marks, what);
      const std::string content = ReadFile(mark);
      // "2006-01-02 15:04:05"
      BOOST_TEST(content.size() == 19u, what << ": mark content \"" << content << "\"");
      BOOST_REQUIRE(node.preparer->Unprepare(ref).ok());
      BOOST_TEST(node.Files("/etc/vdev/dynamic").empty(), what);
      BOOST_TEST(node.Files("/var/lib/hcu-device-plugin/dra").empty(), what);
    }
  }
}

BOOST_AUTO_TEST_CASE(kill_9_inside_unprepare_leaks_nothing) {
  for (dra::PrepareStep step :
       {dra::PrepareStep::kUnprepareDeviceFreed, dra::PrepareStep::kUnprepareSpecRemoved}) {
    for (bool deleted : {false, true}) {
      SimDraNode node("k100ai-8.yaml");
      BOOST_REQUIRE(node.preparer->Recover().ok());
      auto ref = node.AllocateAndStore(ClaimJson("uid-u", "u", kRequest), "pod-u");
      auto admin = node.backend->CreateVhcu(0, 30, 8192);
      BOOST_REQUIRE(admin.ok());
      auto a = node.preparer->Prepare(ref);
      BOOST_REQUIRE(a.ok() && a->error.empty());
      BOOST_REQUIRE(DiesOfSigkill([&] {
        dra::PreparerOptions o;
        o.crash_after = [&](dra::PrepareStep s) {
          if (s == step) ::raise(SIGKILL);
          return false;
        };
        node.Restart(o);
        (void)node.preparer->Unprepare(ref);
      }));
      if (deleted) node.claims.Delete("uid-u");
      node.Restart();
      BOOST_REQUIRE(node.preparer->Recover().ok());
      // Claim still there: kubelet retries Unprepare; deleted: Recover did it.
      if (!deleted) BOOST_REQUIRE(node.preparer->Unprepare(ref).ok());
      ExpectClean(node, admin->id, std::string(deleted ? "deleted" : "kept") + " claim");
    }
  }
}

}  // namespace
}  // namespace hcudp::testing

namespace hcudp::testing {
namespace {

// kill -9 at a random moment (not a hook): a child prepares and unprepares
// claims in a loop; the parent kills it 5-80 ms after the loop started,
// deletes every claim from the API and recovers. Twenty rounds; 0 leaks, the
// admin's vHCU intact. The delay counts from the child's "looping" byte: the
// child's start (Restart, under ASan on a loaded machine) can take longer
// than 80 ms, and a kill before the loop proves nothing.
BOOST_AUTO_TEST_CASE(kill_9_at_random_moments_leaks_nothing) {
  std::mt19937 rng(20261201);
  int recovered = 0;  // rounds whose kill left something to clean up
  for (int round = 0; round < 20; ++round) {
    SimDraNode node("k100ai-8.yaml");
    BOOST_REQUIRE(node.preparer->Recover().ok());
    std::vector<dra::ClaimRef> refs;
    for (int i = 0; i < 4; ++i) {
      refs.push_back(
          node.AllocateAndStore(ClaimJson("uid-r" + std::to_string(i), "r" + std::to_string(i),
                                          i % 2 == 0 ? kRequest : "[" + ExactRequest("card") + "]"),
                                "pod-r" + std::to_string(i)));
    }
    auto admin = node.backend->CreateVhcu(0, 30, 8192);
    BOOST_REQUIRE(admin.ok());
    const int delay_ms = std::uniform_int_distribution<int>(5, 80)(rng);
    int started[2];
    BOOST_REQUIRE(::pipe(started) == 0);
    pid_t pid = fork();
    if (pid == 0) {
      node.Restart();
      const char byte = 1;
      if (::write(started[1], &byte, 1) != 1) ::_exit(3);
      for (int loop = 0;; ++loop) {
        for (const auto& ref : refs) (void)node.preparer->Prepare(ref);
        for (const auto& ref : refs) (void)node.preparer->Unprepare(ref);
      }
    }
    ::close(started[1]);
    pollfd looping{started[0], POLLIN, 0};
    const bool in_loop = ::poll(&looping, 1, 60000) == 1;
    ::close(started[0]);
    if (in_loop) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    ::kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    BOOST_REQUIRE(WIFSIGNALED(status));
    BOOST_REQUIRE_MESSAGE(in_loop,
                          "round " << round << ": the child did not start its loop in 60 s");
    for (int i = 0; i < 4; ++i) node.claims.Delete("uid-r" + std::to_string(i));
    node.Restart();
    auto r = node.preparer->Recover();
    BOOST_REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    BOOST_TEST(r->pending == 0);
    if (r->rolled_back + r->unprepared > 0) ++recovered;
    ExpectClean(node, admin->id,
                "round " + std::to_string(round) + " (" + std::to_string(delay_ms) + " ms)");
  }
  // Some kill must have landed inside an operation, or the rounds proved nothing.
  BOOST_TEST(recovered > 0, "rounds that left work for recovery: " << recovered);
}

}  // namespace
}  // namespace hcudp::testing
