// VhcuManager: mark files after create, destroy before unmark, retries with
// backoff, and no leak and no wrong destroy whatever the crash point.
#include "hcudp/vhcu_manager.h"

#include <sys/stat.h>

#include <atomic>
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <thread>

#include "hami/fake_backend.h"
#include "testing/sim_clock.h"
#include "testing/testutil.h"
#include "vhcu/vhcu_manager_impl.h"

namespace hcudp {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using std::chrono::system_clock;
using testing::FakeBackend;
using testing::PathExists;
using testing::TempDir;

const VhcuOwner kOwner{"0f6e2c1a-7d3b-4a4e-9a1e-2f7c9b1d0e11", "main"};
const std::set<std::string> kNoPods;
const std::set<std::string> kOwnerLive{kOwner.pod_uid};

// A node: a temporary host-root, a fake backend and a hand-driven clock.
struct Node {
  TempDir root;
  FakeBackend backend{root.path()};
  testing::SimClock clock{system_clock::time_point(seconds(1772330400))};

  VhcuManagerOptions Options(std::function<bool(VhcuCreateStep)> crash = nullptr) {
    VhcuManagerOptions o;
    o.host_root = root.path();
    o.initial_retry_delay = milliseconds(1000);
    o.max_retry_delay = milliseconds(8000);
    o.fresh_mark_grace = milliseconds(0);
    o.crash_after = std::move(crash);
    return o;
  }
  std::string MarkPath(const std::string& name) const {
    return root.Join("etc/vdev/dynamic/" + name);
  }
  std::string IntentDir() const { return root.Join("var/lib/hcu-device-plugin/intents"); }
  std::vector<MarkFile> Marks() {
    auto marks = ListMarkFiles(root.path(), nullptr);
    BOOST_REQUIRE(marks.ok());
    return *marks;
  }
  size_t Intents() {
    size_t n = 0;
    if (PathExists(IntentDir())) {
      for (auto& e : std::filesystem::directory_iterator(IntentDir())) {
        (void)e;
        ++n;
      }
    }
    return n;
  }
};

mode_t ModeOf(const std::string& path) {
  struct stat st;
  BOOST_REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

auto Never() {
  return [](const std::string&) { return false; };
}
auto Always() {
  return [](const std::string&) { return true; };
}

BOOST_AUTO_TEST_CASE(create_makes_the_vhcu_and_its_mark_file_with_vendor_content_and_modes) {
  Node node;
  VhcuManager manager(&node.backend, node.Options(), node.clock);
  auto created = manager.CreateVhcu(kOwner, 0, 36, 8192);
  BOOST_REQUIRE_MESSAGE(created.ok(), created.status().ToString());

  BOOST_TEST(created->vhcu.card == 0);
  BOOST_TEST(created->vhcu.compute_units == 36);
  BOOST_TEST(created->vhcu.memory_mib == 8192u);
  BOOST_TEST(created->mark.name.vhcu_id == created->vhcu.id);
  std::string path = node.MarkPath(kOwner.pod_uid + "_main_0_" + std::to_string(created->vhcu.id));
  BOOST_TEST(created->mark.path == path);
  BOOST_REQUIRE(PathExists(path));
  BOOST_TEST(testing::ReadFile(path) == hami::FormatMarkFileTime(node.clock.WallNow()));
  BOOST_TEST(ModeOf(path) == 0644u);
  BOOST_TEST(ModeOf(node.root.Join("etc/vdev/dynamic")) == 0755u);
  BOOST_TEST(node.Intents() == 0u);  // completed
}

BOOST_AUTO_TEST_CASE(whole_card_mark_uses_vdev_index_minus_one) {
  Node node;
  VhcuManager manager(&node.backend, node.Options(), node.clock);
  auto mark = manager.MarkWholeCard(kOwner, 1);
  BOOST_REQUIRE(mark.ok());
  BOOST_TEST(PathExists(node.MarkPath(kOwner.pod_uid + "_main_1_-1")));
  BOOST_TEST(node.backend.vhcus().empty());
}

// kRecoverable (the DRA Preparer's) only skips the fsyncs: the same file,
// content and mode as the durable mark, and an emptied mark is rewritten.
BOOST_AUTO_TEST_CASE(a_recoverable_whole_card_mark_is_the_durable_marks_file) {
  Node node;
  VhcuManager manager(&node.backend, node.Options(), node.clock);
  auto durable = manager.MarkWholeCard(kOwner, 1);
  BOOST_REQUIRE(durable.ok());
  const std::string content = testing::ReadFile(durable->path);
  BOOST_TEST(content.size() == 19u);                         // "2006-01-02 15:04:05", local time
  BOOST_REQUIRE(::truncate(durable->path.c_str(), 0) == 0);  // as a power cut may leave it
  auto recoverable = manager.MarkWholeCard(kOwner, 1, VhcuManager::MarkDurability::kRecoverable);
  BOOST_REQUIRE(recoverable.ok());
  BOOST_TEST(recoverable->path == durable->path);
  BOOST_TEST((recoverable->name == durable->name));
  BOOST_TEST(testing::ReadFile(recoverable->path) == content);
  struct stat st {};
  BOOST_REQUIRE(::stat(recoverable->path.c_str(), &st) == 0);
  BOOST_TEST((st.st_mode & 07777) == 0644u);
  BOOST_TEST(node.Marks().size() == 1u);
}

BOOST_AUTO_TEST_CASE(create_rejects_owners_that_cannot_name_a_mark_file) {
  Node node;
  VhcuManager manager(&node.backend, node.Options(), node.clock);
  for (const VhcuOwner& bad :
       {VhcuOwner{"", "main"}, VhcuOwner{"uid", "a_b"}, VhcuOwner{"u/id", "main"}}) {
    auto created = manager.CreateVhcu(bad, 0, 36, 8192);
    BOOST_REQUIRE(!created.ok());
    BOOST_TEST((created.status().code() == StatusCode::kInvalidArgument));
  }
  BOOST_TEST(node.backend.vhcus().empty());
}

BOOST_AUTO_TEST_CASE(reconcile_destroys_a_dead_pods_vhcu_before_removing_its_mark) {
  Node node;
  VhcuManager manager(&node.backend, node.Options(), node.clock);
  auto created = manager.CreateVhcu(kOwner, 0, 36, 8192);
  BOOST_REQUIRE(created.ok());
  bool mark_present_at_destroy = false;
  node.backend.on_destroy = [&](int) { mark_present_at_destroy = PathExists(created->mark.path); };

  auto result = manager.Reconcile(kNoPods);
  BOOST_REQUIRE(result.ok());
  BOOST_TEST(result->destroyed == 1);
  BOOST_TEST(result->marks_removed == 1);
  BOOST_TEST(mark_present_at_destroy);
  BOOST_TEST(!node.backend.HasVhcu(created->vhcu.id));
  BOOST_TEST(!PathExists(created->mark.path));
}

// A dead pod's vHCU whose conf cannot be read in this pass (a torn rewrite,
// /etc/vdev briefly unreadable) is not "already gone": dropping its mark
// would leak it for good. It is reclaimed once the conf reads again.
BOOST_AUTO_TEST_CASE(reconcile_keeps_the_mark_of_a_vhcu_whose_conf_cannot_be_read) {
  Node node;
  VhcuManager manager(&node.backend, node.Options(), node.clock);
  auto created = manager.CreateVhcu(kOwner, 0, 36, 8192);
  BOOST_REQUIRE(created.ok());
  node.backend.unreadable = {created->vhcu.id};
  auto hidden = manager.Reconcile(kNoPods);
  BOOST_REQUIRE(hidden.ok());
  BOOST_TEST(hidden->marks_removed == 0);
  BOOST_TEST(PathExists(created->mark.path));

  node.backend.unreadable.clear();
  auto readable = manager.Reconcile(kNoPods);
  BOOST_REQUIRE(readable.ok());
  BOOST_TEST(readable->destroyed == 1);
  BOOST_TEST(!node.backend.HasVhcu(created->vhcu.id));
}

// The same for an intent whose vHCU (recorded id) cannot be read: the intent
// stays, and the vHCU is destroyed once it reads again.
BOOST_AUTO_TEST_CASE(recovery_keeps_an_intent_whose_vhcu_conf_cannot_be_read) {
  Node node;
  {
    VhcuManager crashing(&node.backend, node.Options([](VhcuCreateStep step) {
      return step == VhcuCreateStep::kIdRecorded;
    }),
                         node.clock);
    BOOST_REQUIRE(!crashing.CreateVhcu(kOwner, 0, 36, 8192).ok());
  }
  BOOST_REQUIRE(node.backend.vhcus().size() == 1u);
  const int id = node.backend.vhcus()[0].id;
  node.backend.unreadable = {id};
  VhcuManager manager(&node.backend, node.Options(), node.clock);
  auto hidden = manager.Recover(Never());
  BOOST_REQUIRE(hidden.ok());
  BOOST_TEST(node.Intents() == 1u);

  node.backend.unreadable.clear();
  auto readable = manager.Reconcile(kNoPods);
  BOOST_REQUIRE(readable.ok());
  BOOST_TEST(!node.backend.HasVhcu(id));
  BOOST_TEST(node.Intents() == 0u);
}

// A queued destroy whose vHCU cannot be read when it falls due is retried
// later, not forgotten with its mark.
BOOST_AUTO_TEST_CASE(a_queued_destroy_outlives_a_pass_that_cannot_read_its_vhcu) {
  Node node;
  VhcuManager manager(&node.backend, node.Options(), node.clock);
  auto created = manager.CreateVhcu(kOwner, 0, 36, 8192);
  BOOST_REQUIRE(created.ok());
  node.backend.busy_destroys = 1;
  BOOST_REQUIRE(manager.Reconcile(kNoPods).ok());
  node.backend.unreadable = {created->vhcu.id};
  node.clock.Advance(seconds(1));
  manager.Tick();
  BOOST_TEST(PathExists(created->mark.path));

  node.backend.unreadable.clear();
  node.clock.Advance(seconds(60));
  BOOST_TEST(manager.Tick().destroyed == 1);
  BOOST_TEST(!node.backend.HasVhcu(created->vhcu.id));
  BOOST_TEST(!PathExists(created->mark.path));
}

// A dead pod's mark still names vHCU N, whose vHCU went meanwhile (a reboot,
// a vendor tool), and the driver gave N to a live pod's new vHCU. The stale
// mark must not take the live pod's vHCU with it.
BOOST_AUTO_TEST_CASE(reconcile_never_destroys_a_live_pods_vhcu_through_a_stale_mark_of_its_id) {
  Node node;
  VhcuManager manager(&node.backend, node.Options(), node.clock);
  auto created = manager.CreateVhcu(kOwner, 0, 36, 8192);
  BOOST_REQUIRE(created.ok());
  const std::string stale = node.MarkPath("dead-pod_main_0_" + std::to_string(created->vhcu.id));
  testing::WriteFile(stale, "2026-03-01 10:00:00");
  auto result = manager.Reconcile(kOwnerLive);
  BOOST_REQUIRE(result.ok());
  BOOST_TEST(result->destroyed == 0);
  BOOST_TEST(node.backend.HasVhcu(created->vhcu.id));
  BOOST_TEST(PathExists(created->mark.path));
  BOOST_TEST(!PathExists(stale));
}

// A destroy waits for its retry; meanwhile someone else destroys that vHCU
// and the driver gives its id to a new vHCU of the same size for another pod.
// The retry must not destroy the other pod's vHCU.
BOOST_AUTO_TEST_CASE(a_queued_destroy_never_takes_a_vhcu_another_pods_mark_now_holds) {
  Node node;
  VhcuManager manager(&node.backend, node.Options(), node.clock);
  auto first = manager.CreateVhcu(kOwner, 0, 36, 8192);
  BOOST_REQUIRE(first.ok());
  node.backend.busy_destroys = 1;
  BOOST_REQUIRE(manager.Reconcile(kNoPods).ok());                // queued
  BOOST_REQUIRE(node.backend.DestroyVhcu(first->vhcu.id).ok());  // a vendor tool
  auto second = manager.CreateVhcu({"other-pod", "main"}, 0, 36, 8192);
  BOOST_REQUIRE(second.ok());
  BOOST_REQUIRE_EQUAL(second->vhcu.id, first->vhcu.id);
  node.clock.Advance(seconds(1));
  manager.Tick();
  BOOST_TEST(node.backend.HasVhcu(second->vhcu.id));
  BOOST_TEST(PathExists(second->mark.path));
}

BOOST_AUTO_TEST_CASE(reconcile_never_destroys_a_live_pods_vhcu) {
  Node node;
  VhcuManager manager(&node.backend, node.Options(), node.clock);
  auto created = manager.CreateVhcu(kOwner, 0, 36, 8192);
  BOOST_REQUIRE(created.ok());
  auto result = manager.Reconcile(kOwnerLive);
  BOOST_REQUIRE(result.ok());
  BOOST_TEST(result->destroyed == 0);
  BOOST_TEST(node.backend.HasVhcu(created->vhcu.id));
  BOOST_TEST(PathExists(created->mark.path));
  BOOST_TEST(node.backend.destroy_calls == 0);
}

BOOST_AUTO_TEST_CASE(reconcile_leaves_vhcus_without_mark_or_intent_alone) {
  Node node;
  int admins = node.backend.AddVhcu(0, 30, 8192);
  VhcuManager manager(&node.backend, node.Options(), node.clock);
  auto result = manager.Reconcile(kNoPods);
  BOOST_REQUIRE(result.ok());
  BOOST_TEST(node.backend.HasVhcu(admins));
  BOOST_TEST(node.backend.destroy_calls == 0);
}

BOOST_AUTO_TEST_CASE(reconcile_keeps_a_mark_this_process_just_wrote_for_the_grace_period) {
  Node node;
  VhcuManagerOptions options = node.Options();
  options.fresh_mark_grace = seconds(60);
  VhcuManager manager(&node.backend, options, node.clock);
  auto created = manager.CreateVhcu(kOwner, 0, 36, 8192);
  BOOST_REQUIRE(created.ok());

  // The pod cache has not seen the pod yet.
  auto early = manager.Reconcile(kNoPods);
  BOOST_REQUIRE(early.ok());
  BOOST_TEST(early->left_alone == 1);
  BOOST_TEST(node.backend.HasVhcu(created->vhcu.id));

  node.clock.Advance(seconds(61));
  auto later = manager.Reconcile(kNoPods);
  BOOST_REQUIRE(later.ok());
  BOOST_TEST(later->destroyed == 1);
  BOOST_TEST(!node.backend.HasVhcu(created->vhcu.id));
}

BOOST_AUTO_TEST_CASE(reconcile_removes_whole_card_marks_of_dead_pods_without_destroying) {
  Node node;
  VhcuManager manager(&node.backend, node.Options(), node.clock);
  BOOST_REQUIRE(manager.MarkWholeCard(kOwner, 1).ok());
  auto result = manager.Reconcile(kNoPods);
  BOOST_REQUIRE(result.ok());
  BOOST_TEST(result->marks_removed == 1);
  BOOST_TEST(node.backend.destroy_calls == 0);
  BOOST_TEST(node.Marks().empty());
}

BOOST_AUTO_TEST_CASE(reconcile_drops_marks_of_vanished_or_moved_vhcus_without_destroying) {
  Node node;
  // A mark for vHCU 5 (gone after a reboot) and one for vHCU 0 on card 1
  // while vHCU 0 now sits on card 0 (index reused by an administrator).
  testing::WriteFile(node.MarkPath("dead-pod_main_0_5"), "2026-03-01 10:00:00");
  testing::WriteFile(node.MarkPath("dead-pod_side_1_0"), "2026-03-01 10:00:00");
  testing::WriteFile(node.MarkPath("not-a-mark"), "");
  int admins = node.backend.AddVhcu(0, 30, 8192);
  BOOST_REQUIRE_EQUAL(admins, 0);
  VhcuManager manager(&node.backend, node.Options(), node.clock);
  auto result = manager.Reconcile(kNoPods);
  BOOST_REQUIRE(result.ok());
  BOOST_TEST(result->marks_removed == 2);
  BOOST_TEST(node.backend.destroy_calls == 0);
  BOOST_TEST(node.backend.HasVhcu(admins));
  BOOST_TEST(PathExists(node.MarkPath("not-a-mark")));
}

// A card missed renumbers the ones after it (model M14.6.8,A5.7.7): a pod's
// vHCU made on 0000:0a:00.0 while it answered at index 0 has the mark
// "<pod>_main_0_<id>"; the card comes back and 0000:0a:00.0 is index 1
// again. The mark still names that vHCU (its conf says it was made on card
// 0): once the pod ends, the vHCU is destroyed and the mark removed. Before,
// the sweep took the mark for stale ("node reset?"), removed it and kept
// the vHCU, which then leaked.
BOOST_AUTO_TEST_CASE(reconcile_destroys_a_dead_pods_vhcu_made_while_the_cards_were_renumbered) {
  Node node;
  VhcuManager manager(&node.backend, node.Options(), node.clock);
  node.backend.MissCard("0000:09:00.0");
  auto created = manager.CreateVhcu(kOwner, 0, 36, 8192);
  BOOST_REQUIRE_MESSAGE(created.ok(), created.status().ToString());
  BOOST_REQUIRE(created->vhcu.card_bdf == "0000:0a:00.0");
  node.backend.RestoreCards();
  BOOST_REQUIRE(manager.Reconcile(kOwnerLive).ok());  // the pod runs: nothing moves
  BOOST_TEST(node.backend.HasVhcu(created->vhcu.id));
  BOOST_TEST(PathExists(created->mark.path));
  auto claims = FindVhcuClaims(node.root.path(), node.backend.vhcus().at(0));
  BOOST_REQUIRE(claims.ok());
  BOOST_TEST(claims->size() == 1u, "hcuctl vhcu destroy must see the live pod's mark");
  auto result = manager.Reconcile(kNoPods);  // the pod ended
  BOOST_REQUIRE(result.ok());
  BOOST_TEST(!node.backend.HasVhcu(created->vhcu.id), "the dead pod's vHCU leaked");
  BOOST_TEST(!PathExists(created->mark.path));
  BOOST_TEST(result->destroyed == 1);
}

// The mark names another card index than the vHCU's card answers at now,
// and the vHCU's conf cannot be read: whether the mark names it cannot be
// told, so neither goes (unknown is not absent).
BOOST_AUTO_TEST_CASE(reconcile_keeps_a_mark_it_cannot_match_to_its_vhcu) {
  Node node;
  int id = node.backend.AddVhcu(1, 30, 8192);
  const std::string mark = node.MarkPath("dead-pod_main_0_" + std::to_string(id));
  testing::WriteFile(mark, "2026-03-01 10:00:00");
  testing::WriteFile(node.root.Join("etc/vdev/vdev" + std::to_string(id) + ".conf"), "");
  VhcuManager manager(&node.backend, node.Options(), node.clock);
  auto result = manager.Reconcile(kNoPods);
  BOOST_REQUIRE(result.ok());
  BOOST_TEST(result->marks_removed == 0);
  BOOST_TEST(node.backend.destroy_calls == 0);
  BOOST_TEST(PathExists(mark));
}

// Card 1 was not discovered in this pass (its queries failed): its vHCU is on
// no card (-1). Whether the mark still names it cannot be told, so neither
// the vHCU nor the mark goes; dropping the mark would leak the vHCU for good.
BOOST_AUTO_TEST_CASE(reconcile_keeps_the_mark_of_a_vhcu_whose_card_was_not_discovered) {
  Node node;
  int id = node.backend.AddVhcu(-1, 30, 8192);
  node.backend.SetBdf(id, "0000:29:00.0");
  const std::string mark = node.MarkPath("dead-pod_main_1_" + std::to_string(id));
  testing::WriteFile(mark, "2026-03-01 10:00:00");
  VhcuManager manager(&node.backend, node.Options(), node.clock);
  auto result = manager.Reconcile(kNoPods);
  BOOST_REQUIRE(result.ok());
  BOOST_TEST(result->marks_removed == 0);
  BOOST_TEST(node.backend.destroy_calls == 0);
  BOOST_TEST(PathExists(mark));
}

// The manager's state directly (VhcuManager::Impl), to read the retry queue.
BOOST_AUTO_TEST_CASE(busy_destroy_is_retried_with_capped_exponential_backoff_until_it_succeeds) {
  Node node;
  VhcuManager::Impl manager(&node.backend, node.Options(), node.clock);
  auto created = manager.CreateVhcu(kOwner, 0, 36, 8192);
  BOOST_REQUIRE(created.ok());
  node.backend.busy_destroys = 5;

  auto result = manager.Reconcile([](const std::string&) { return false; });
  BOOST_REQUIRE(result.ok());
  BOOST_TEST(result->queued == 1);
  BOOST_TEST(manager.pending_destroys() == 1u);
  BOOST_TEST(PathExists(created->mark.path));  // kept until the destroy succeeds

  // Delays: 1 s, 2 s, 4 s, 8 s, 8 s (capped); the 6th attempt succeeds.
  const int delays_s[] = {1, 2, 4, 8, 8};
  for (int delay : delays_s) {
    auto next = manager.next_retry_time();
    BOOST_REQUIRE(next.has_value());
    BOOST_TEST((*next - node.clock.Now() == seconds(delay)));
    node.clock.Advance(seconds(delay) - milliseconds(1));
    BOOST_TEST(manager.Tick().destroyed == 0);  // not due yet: no attempt
    node.clock.Advance(milliseconds(1));
    VhcuSweepResult tick = manager.Tick();
    BOOST_TEST(PathExists(created->mark.path) == (tick.destroyed == 0));
  }
  BOOST_TEST(node.backend.destroy_calls == 6);
  BOOST_TEST(manager.pending_destroys() == 0u);
  BOOST_TEST(!node.backend.HasVhcu(created->vhcu.id));
  BOOST_TEST(!PathExists(created->mark.path));
  BOOST_TEST(!manager.next_retry_time().has_value());
}

BOOST_AUTO_TEST_CASE(reconcile_does_not_retry_a_queued_destroy_ahead_of_its_backoff) {
  Node node;
  VhcuManager manager(&node.backend, node.Options(), node.clock);
  BOOST_REQUIRE(manager.CreateVhcu(kOwner, 0, 36, 8192).ok());
  node.backend.busy_destroys = 1;
  BOOST_REQUIRE(manager.Reconcile(kNoPods).ok());
  BOOST_REQUIRE(manager.Reconcile(kNoPods).ok());
  BOOST_TEST(node.backend.destroy_calls == 1);
}

BOOST_AUTO_TEST_CASE(release_destroys_then_unmarks_and_reports_a_busy_device) {
  Node node;
  VhcuManager manager(&node.backend, node.Options(), node.clock);
  auto created = manager.CreateVhcu(kOwner, 0, 36, 8192);
  BOOST_REQUIRE(created.ok());
  node.backend.busy_destroys = 1;
  Status busy = manager.Release(created->mark.name);
  BOOST_TEST((busy.code() == StatusCode::kUnavailable));
  BOOST_TEST(PathExists(created->mark.path));
  node.clock.Advance(seconds(1));
  BOOST_TEST(manager.Tick().destroyed == 1);
  BOOST_TEST(!PathExists(created->mark.path));

  auto second = manager.CreateVhcu(kOwner, 1, 12, 1024);
  BOOST_REQUIRE(second.ok());
  BOOST_TEST(manager.Release(second->mark.name).ok());
  BOOST_TEST(!node.backend.HasVhcu(second->vhcu.id));
  BOOST_TEST(!PathExists(second->mark.path));
}

BOOST_AUTO_TEST_CASE(a_failed_backend_create_leaves_no_vhcu_and_no_intent) {
  Node node;
  VhcuManager manager(&node.backend, node.Options(), node.clock);
  node.backend.fail_create = true;
  BOOST_TEST(!manager.CreateVhcu(kOwner, 0, 36, 8192).ok());
  node.backend.fail_create = false;
  node.backend.fail_create_after_it = true;  // it made one, then failed
  BOOST_TEST(!manager.CreateVhcu(kOwner, 0, 36, 8192).ok());
  BOOST_TEST(node.backend.vhcus().empty());
  BOOST_TEST(node.Intents() == 0u);
  BOOST_TEST(node.Marks().empty());
}

// ----- crashes -----

const VhcuCreateStep kSteps[] = {VhcuCreateStep::kIntentRecorded, VhcuCreateStep::kVhcuCreated,
                                 VhcuCreateStep::kIdRecorded, VhcuCreateStep::kMarkWritten};

// Crashes CreateVhcu right after `step`, with an administrator's vHCU of the
// same size already on the card.
int CrashAt(Node& node, VhcuCreateStep step) {
  VhcuManager crashing(&node.backend, node.Options([step](VhcuCreateStep s) { return s == step; }),
                       node.clock);
  auto created = crashing.CreateVhcu(kOwner, 0, 36, 8192);
  BOOST_REQUIRE(!created.ok());
  BOOST_REQUIRE((created.status().code() == StatusCode::kAborted));
  return 0;
}

BOOST_AUTO_TEST_CASE(crash_at_any_step_then_restart_for_a_dead_pod_leaks_nothing) {
  for (VhcuCreateStep step : kSteps) {
    BOOST_TEST_CONTEXT("crash after step " << static_cast<int>(step)) {
      Node node;
      int admins = node.backend.AddVhcu(0, 36, 8192);
      CrashAt(node, step);

      VhcuManager restarted(&node.backend, node.Options(), node.clock);
      BOOST_REQUIRE(restarted.Recover(Never()).ok());
      BOOST_REQUIRE(restarted.Reconcile(kNoPods).ok());

      auto left = node.backend.vhcus();
      BOOST_REQUIRE_EQUAL(left.size(), 1u);
      BOOST_TEST(left[0].id == admins);
      BOOST_TEST(node.Intents() == 0u);
      BOOST_TEST(node.Marks().empty());
    }
  }
}

BOOST_AUTO_TEST_CASE(crash_at_any_step_then_restart_never_destroys_a_live_pods_marked_vhcu) {
  for (VhcuCreateStep step : kSteps) {
    BOOST_TEST_CONTEXT("crash after step " << static_cast<int>(step)) {
      Node node;
      int admins = node.backend.AddVhcu(0, 36, 8192);
      CrashAt(node, step);

      VhcuManager restarted(&node.backend, node.Options(), node.clock);
      BOOST_REQUIRE(restarted.Recover(Always()).ok());
      BOOST_REQUIRE(restarted.Reconcile(kOwnerLive).ok());

      // Every vHCU left is the administrator's or one the pod holds by a
      // mark file; every mark names an existing vHCU.
      std::set<int> marked;
      for (const MarkFile& m : node.Marks()) {
        BOOST_TEST(node.backend.HasVhcu(m.name.vhcu_id));
        marked.insert(m.name.vhcu_id);
      }
      for (const Vhcu& v : node.backend.vhcus()) {
        BOOST_TEST((v.id == admins || marked.count(v.id) == 1), "leaked vHCU " << v.id);
      }
      BOOST_TEST(node.backend.HasVhcu(admins));
      BOOST_TEST(node.Intents() == 0u);
      // Once the id was recorded the live, allocating pod keeps its vHCU.
      bool kept = step == VhcuCreateStep::kIdRecorded || step == VhcuCreateStep::kMarkWritten;
      BOOST_TEST(marked.size() == (kept ? 1u : 0u));
    }
  }
}

BOOST_AUTO_TEST_CASE(recovery_that_hits_a_busy_device_keeps_the_intent_across_another_crash) {
  Node node;
  CrashAt(node, VhcuCreateStep::kIdRecorded);
  node.backend.busy_destroys = 1;
  {
    VhcuManager first(&node.backend, node.Options(), node.clock);
    auto result = first.Recover(Never());
    BOOST_REQUIRE(result.ok());
    BOOST_TEST(result->queued == 1);
    BOOST_TEST(node.Intents() == 1u);
  }  // crashes again before the retry
  VhcuManager second(&node.backend, node.Options(), node.clock);
  auto result = second.Recover(Never());
  BOOST_REQUIRE(result.ok());
  BOOST_TEST(result->destroyed == 1);
  BOOST_TEST(node.backend.vhcus().empty());
  BOOST_TEST(node.Intents() == 0u);
}

BOOST_AUTO_TEST_CASE(recovery_without_an_id_destroys_only_the_new_vhcu_of_the_intents_size) {
  Node node;
  CrashAt(node, VhcuCreateStep::kVhcuCreated);     // our 36 CU vHCU, id unrecorded
  int admins = node.backend.AddVhcu(0, 12, 1024);  // made by an admin after the crash
  VhcuManager restarted(&node.backend, node.Options(), node.clock);
  auto result = restarted.Recover(Never());
  BOOST_REQUIRE(result.ok());
  BOOST_TEST(result->destroyed == 1);
  auto left = node.backend.vhcus();
  BOOST_REQUIRE_EQUAL(left.size(), 1u);
  BOOST_TEST(left[0].id == admins);
}

BOOST_AUTO_TEST_CASE(recovery_without_an_id_destroys_nothing_when_it_cannot_tell_which) {
  Node node;
  CrashAt(node, VhcuCreateStep::kVhcuCreated);
  node.backend.AddVhcu(0, 36, 8192);  // same size, made after the crash
  VhcuManager restarted(&node.backend, node.Options(), node.clock);
  auto result = restarted.Recover(Never());
  BOOST_REQUIRE(result.ok());
  BOOST_TEST(result->destroyed == 0);
  BOOST_TEST(result->left_alone == 2);
  BOOST_TEST(node.backend.vhcus().size() == 2u);
  // Ambiguous: the intent stays durable for an administrator (and later passes).
  BOOST_TEST(node.Intents() == 1u);
  BOOST_REQUIRE(restarted.Reconcile(kNoPods).ok());
  BOOST_TEST(node.backend.vhcus().size() == 2u);
  BOOST_TEST(node.Intents() == 1u);
}

// Issue 9.3: a crash after the intent, before the driver call; an admin then
// makes a vHCU of another size on that card. It is the only new vHCU there,
// but it is not provably ours: it survives.
BOOST_AUTO_TEST_CASE(recovery_without_an_id_keeps_a_single_admin_vhcu_of_another_size) {
  Node node;
  CrashAt(node, VhcuCreateStep::kIntentRecorded);  // nothing created
  int admins = node.backend.AddVhcu(0, 12, 1024);  // an admin's, after the crash
  VhcuManager restarted(&node.backend, node.Options(), node.clock);
  auto result = restarted.Recover(Never());
  BOOST_REQUIRE(result.ok());
  BOOST_TEST(result->destroyed == 0);
  BOOST_TEST(node.backend.HasVhcu(admins));
  BOOST_TEST(node.Intents() == 0u);  // no candidate of its size: nothing was created
}

// The same rule after a failed driver create at run time.
BOOST_AUTO_TEST_CASE(a_failed_create_never_destroys_a_foreign_vhcu_of_another_size) {
  Node node;
  VhcuManager manager(&node.backend, node.Options(), node.clock);
  node.backend.on_create = [&] { node.backend.AddVhcu(0, 12, 1024); };  // a concurrent admin
  node.backend.fail_create = true;
  BOOST_TEST(!manager.CreateVhcu(kOwner, 0, 36, 8192).ok());
  BOOST_TEST(node.backend.vhcus().size() == 1u);
}

// The card is identified by BDF: a vHCU of the right size whose parent BDF is
// another card's is not ours, whatever index it reports.
BOOST_AUTO_TEST_CASE(recovery_matches_the_card_by_bdf_not_by_index) {
  Node node;
  CrashAt(node, VhcuCreateStep::kIntentRecorded);
  int other = node.backend.AddVhcu(0, 36, 8192);
  node.backend.SetBdf(other, "0000:0a:00.0");  // index 0, but card 1's BDF
  VhcuManager restarted(&node.backend, node.Options(), node.clock);
  BOOST_REQUIRE(restarted.Recover(Never()).ok());
  BOOST_TEST(node.backend.HasVhcu(other));
}

// Issue 9.4: intents are resolved in every Reconcile, not only at start.
BOOST_AUTO_TEST_CASE(reconcile_resolves_an_intent_left_by_a_runtime_failure) {
  Node node;
  VhcuManager manager(
      &node.backend,
      node.Options([](VhcuCreateStep s) { return s == VhcuCreateStep::kIdRecorded; }), node.clock);
  BOOST_REQUIRE(!manager.CreateVhcu(kOwner, 0, 36, 8192).ok());  // left: a vHCU and its intent
  BOOST_REQUIRE_EQUAL(node.backend.vhcus().size(), 1u);
  BOOST_REQUIRE(manager.Reconcile(kNoPods).ok());
  BOOST_TEST(node.backend.vhcus().empty());
  BOOST_TEST(node.Intents() == 0u);
}

BOOST_AUTO_TEST_CASE(an_intent_left_by_a_runtime_failure_does_not_block_the_next_create) {
  Node node;
  bool crash = true;
  VhcuManager manager(&node.backend, node.Options([&](VhcuCreateStep s) {
    return crash && s == VhcuCreateStep::kIntentRecorded;
  }),
                      node.clock);
  BOOST_REQUIRE(!manager.CreateVhcu(kOwner, 0, 36, 8192).ok());
  crash = false;
  auto created = manager.CreateVhcu(kOwner, 0, 36, 8192);
  BOOST_TEST(created.ok(), created.status().ToString());
  // Even an intent that stays (ambiguous) does not block the owner.
  crash = true;
  VhcuOwner other{"11111111-2222-3333-4444-555555555555", "main"};
  BOOST_REQUIRE(!manager.CreateVhcu(other, 0, 20, 2048).ok());
  node.backend.AddVhcu(0, 20, 2048);  // two admins' of its size, after the intent
  node.backend.AddVhcu(0, 20, 2048);
  BOOST_REQUIRE(manager.Reconcile(kOwnerLive).ok());
  BOOST_TEST(node.Intents() == 1u);  // two candidates: kept
  crash = false;
  auto again = manager.CreateVhcu(other, 1, 20, 2048);
  BOOST_TEST(again.ok(), again.status().ToString());
}

BOOST_AUTO_TEST_CASE(concurrent_creates_and_reconciles_keep_every_live_vhcu) {
  Node node;
  VhcuManagerOptions options = node.Options();
  options.fresh_mark_grace = seconds(60);
  VhcuManager manager(&node.backend, options, node.clock);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};  // Boost.Test assertions are not thread-safe
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5; ++i) {
        VhcuOwner owner{"pod" + std::to_string(t) + "-" + std::to_string(i), "main"};
        if (!manager.CreateVhcu(owner, t % 2, 4, 512).ok()) ++failures;
        if (!manager.Reconcile(kNoPods).ok()) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  BOOST_TEST(failures.load() == 0);
  BOOST_TEST(node.backend.vhcus().size() == 20u);
  BOOST_TEST(node.Marks().size() == 20u);
}

}  // namespace
}  // namespace hcudp
