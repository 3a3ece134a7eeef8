// Unknown is not absent in HAMi mode (issue 23): the vHCU of a pod that is
// gone is not destroyed, nor its mark removed, while its state cannot be
// read — a torn conf across a restart, a card whose queries fail, /etc/vdev
// unreadable at start — and is reclaimed once it reads.
#include <boost/test/unit_test.hpp>
#include <cstdio>
#include <memory>
#include <set>
#include <string>

#include "hcudp/vhcu_manager.h"
#include "testing/hostile_node.h"
#include "testing/sim_clock.h"
#include "testing/testutil.h"

namespace hcudp::testing {
namespace {

// The k100ai-8 sim with a HAMi vHCU manager; Restart() is a new daemon over
// the same host root.
struct HamiSimNode {
  TempDir dir;
  SimClock clock;
  std::shared_ptr<CardFaults> faults = std::make_shared<CardFaults>();
  std::unique_ptr<Backend> backend;
  std::unique_ptr<VhcuManager> manager;

  HamiSimNode() { Restart(); }
  void Restart() {
    manager.reset();
    backend = NewFaultySimBackend(SourcePath("demo/nodes/k100ai-8.yaml"), dir.path(), faults);
    VhcuManagerOptions o;
    o.host_root = dir.path();
    o.fresh_mark_grace = std::chrono::milliseconds(0);
    manager = std::make_unique<VhcuManager>(backend.get(), o, clock);
  }
  std::string Conf(int id) const {
    return dir.path() + "/etc/vdev/vdev" + std::to_string(id) + ".conf";
  }
  CreatedVhcu Create() {
    auto made = manager->CreateVhcu({"pod-gone", "main"}, 2, 30, 8192);
    BOOST_REQUIRE_MESSAGE(made.ok(), made.status().ToString());
    return *made;
  }
  VhcuSweepResult ReconcileNoPods() {
    auto r = manager->Reconcile(std::set<std::string>{});
    BOOST_REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    return *r;
  }
};

BOOST_AUTO_TEST_SUITE(hami_unknown)

BOOST_AUTO_TEST_CASE(a_torn_conf_across_a_restart_is_not_reclaimed_until_it_reads) {
  HamiSimNode node;
  CreatedVhcu made = node.Create();
  const std::string text = TearVhcuConf(node.dir.path(), made.vhcu.id, Tear::kHalf);
  node.Restart();
  VhcuSweepResult r = node.ReconcileNoPods();
  BOOST_TEST(r.destroyed == 0);
  BOOST_TEST(r.marks_removed == 0);
  BOOST_TEST(PathExists(made.mark.path));
  // The Allocate failure path is refused too: nothing destroyed on a guess.
  Status released = node.manager->Release(made.mark.name);
  BOOST_TEST((released.code() == StatusCode::kUnavailable), released.ToString());
  BOOST_TEST(released.message().find("vHCU " + std::to_string(made.vhcu.id)) != std::string::npos,
             released.message());
  BOOST_TEST(PathExists(made.mark.path));
  BOOST_TEST(PathExists(node.Conf(made.vhcu.id)));
  WriteFile(node.Conf(made.vhcu.id), text);  // the rewrite finishes
  node.clock.Advance(std::chrono::minutes(5));
  node.manager->Tick();
  node.ReconcileNoPods();
  BOOST_TEST(!PathExists(made.mark.path));
  BOOST_TEST(!PathExists(node.Conf(made.vhcu.id)));
}

BOOST_AUTO_TEST_CASE(a_card_whose_query_fails_keeps_its_vhcus_and_marks) {
  HamiSimNode node;
  CreatedVhcu made = node.Create();
  node.faults->Fail(2);  // at runtime
  VhcuSweepResult r = node.ReconcileNoPods();
  BOOST_TEST(r.destroyed == 0);
  BOOST_TEST(PathExists(made.mark.path));
  node.Restart();  // and at start
  r = node.ReconcileNoPods();
  BOOST_TEST(r.destroyed == 0);
  BOOST_TEST(PathExists(made.mark.path));
  BOOST_TEST(PathExists(node.Conf(made.vhcu.id)));
  node.faults->Heal(2);
  r = node.ReconcileNoPods();
  BOOST_TEST(r.destroyed == 1);
  BOOST_TEST(!PathExists(made.mark.path));
}

BOOST_AUTO_TEST_CASE(etc_vdev_unreadable_at_start_destroys_nothing) {
  HamiSimNode node;
  CreatedVhcu made = node.Create();
  node.Restart();
  const std::string vdev = node.dir.path() + "/etc/vdev";
  BOOST_REQUIRE(std::rename(vdev.c_str(), (vdev + ".away").c_str()) == 0);
  WriteFile(vdev, "not a directory\n");
  auto r = node.manager->Reconcile(std::set<std::string>{});
  if (r.ok()) BOOST_TEST(r->destroyed == 0);
  BOOST_REQUIRE(std::remove(vdev.c_str()) == 0);
  BOOST_REQUIRE(std::rename((vdev + ".away").c_str(), vdev.c_str()) == 0);
  BOOST_TEST(PathExists(made.mark.path));
  BOOST_TEST(PathExists(node.Conf(made.vhcu.id)));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
