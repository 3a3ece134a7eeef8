// HostBackend and vHCUs: discovery from /etc/vdev, create (learning the id
// from the new conf) and destroy.
#include <boost/test/unit_test.hpp>
#include <memory>
#include <string>
#include <vector>

#include "backend/fake_vendor_lib.h"
#include "backend/node_tree.h"
#include "hcudp/backend.h"
#include "testing/testutil.h"

namespace hcudp {
namespace {

using testing::AddVhcu;
using testing::DriverView;
using testing::FakeVendorLib;
using testing::VhcuNode;  // demo node B: vdev0-3 on card 2, vdev4-5 on card 3

BOOST_AUTO_TEST_SUITE(host_backend_vhcu)

BOOST_AUTO_TEST_CASE(vhcus_come_from_the_vdev_confs) {
  VhcuNode node;
  node.fake->vhcus[4].container_id = 77;
  auto inv = node.backend->Discover();
  BOOST_REQUIRE(inv.ok());
  BOOST_REQUIRE(inv->vhcus.size() == 6u);
  const Vhcu& v = inv->vhcus[4];
  BOOST_TEST(v.id == 4);
  BOOST_TEST(v.card == 3);
  BOOST_TEST(v.card_bdf == "0000:8e:00.0");
  BOOST_TEST(v.compute_units == 30);
  BOOST_TEST(v.memory_mib == 16376u);
  BOOST_TEST(v.pipe_id == 0);
  BOOST_TEST(v.cu_mask_lo == 0x3fffffffu);
  BOOST_TEST(v.cu_mask_hi == 0u);
  BOOST_TEST(v.container_id == 77u);  // from the driver
  BOOST_TEST(v.conf_path == "/etc/vdev/vdev4.conf");
  BOOST_TEST(inv->VhcuCount(2) == 4);
}

BOOST_AUTO_TEST_CASE(vhcus_sort_by_id_numerically) {
  VhcuNode node;
  AddVhcu(node.root, node.fake, 10, 3, 1, 100, 5);
  BOOST_TEST(node.VhcuIds() == (std::vector<int>{0, 1, 2, 3, 4, 5, 10}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(invalid_confs_are_skipped) {
  VhcuNode node;
  const std::string root = node.root;
  auto bdf = node.fake->cards[3].bdf;
  // vdev6.conf saying vdev_id 5: the runtime would give the container nothing.
  testing::WriteVdevConf(root, testing::MakeVdevConf(5, 3, bdf, 1, 100, 6), 6);
  node.fake->vhcus[6] = DriverView(3, 1, 100);
  // cu_count 16 with a 15-bit mask.
  VdevConf miscounted = testing::MakeVdevConf(7, 3, bdf, 15, 100, 7);
  miscounted.cu_count = 16;
  testing::WriteVdevConf(root, miscounted);
  node.fake->vhcus[7] = DriverView(3, 16, 100);
  // Empty, and not a conf name at all.
  testing::WriteFile(node.ConfPath(8), "");
  node.fake->vhcus[8] = DriverView(3, 1, 100);
  testing::WriteFile(root + "/etc/vdev/vdevx.conf", "PciBusId: 0000:8e:00.0\n");
  testing::WriteFile(root + "/etc/vdev/dynamic/pod_c_3_4", "2026-11-29T00:00:00Z");
  BOOST_TEST(node.VhcuIds() == (std::vector<int>{0, 1, 2, 3, 4, 5}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_conf_the_driver_does_not_know_is_stale_and_skipped) {
  VhcuNode node;
  node.fake->vhcus.erase(1);
  BOOST_TEST(node.VhcuIds() == (std::vector<int>{0, 2, 3, 4, 5}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(when_the_driver_cannot_answer_the_confs_alone_are_used) {
  VhcuNode node;
  node.fake->vhcu_info_unavailable = true;
  BOOST_TEST(node.VhcuIds().size() == 6u);
}

BOOST_AUTO_TEST_CASE(the_parent_card_follows_the_conf_bdf) {
  VhcuNode node;
  // device_id says card 1, PciBusId says card 3: the BDF is the stable key.
  auto bdf = node.fake->cards[3].bdf;
  testing::WriteVdevConf(node.root, testing::MakeVdevConf(6, 1, bdf, 2, 100, 2));
  node.fake->vhcus[6] = DriverView(1, 2, 100);
  auto inv = node.backend->Discover();
  BOOST_REQUIRE(inv.ok());
  BOOST_REQUIRE(inv->LookupVhcu(6).certainty() == Certainty::kFound);
  BOOST_TEST(inv->LookupVhcu(6).value().card == 3);
}

// The conf's device_id is the driver's (DMI) index, another index space:
// when the card at PciBusId was not discovered (its queries failed), that
// index names some other card, whose DRI nodes the vHCU would be served with.
BOOST_AUTO_TEST_CASE(a_vhcu_whose_parent_card_was_not_discovered_is_on_no_card) {
  VhcuNode node;
  node.fake->failing_cards = {3};
  // Card 3 (0000:8e:00.0) is DMI card 1 on this node's probe order.
  testing::WriteVdevConf(node.root,
                         testing::MakeVdevConf(6, 1, node.fake->cards[3].bdf, 2, 100, 2));
  node.fake->vhcus[6] = DriverView(1, 2, 100);
  NodeInventory inv = node.Discover();
  BOOST_REQUIRE(inv.FindCard(3) == nullptr);
  BOOST_REQUIRE(inv.LookupVhcu(6).certainty() == Certainty::kFound);
  BOOST_TEST(inv.LookupVhcu(6).value().card == -1);
  BOOST_TEST(inv.VhcuCount(1) == 0);
}

BOOST_AUTO_TEST_CASE(create_learns_the_new_id_from_the_new_conf) {
  VhcuNode node;
  const std::string root = node.root;
  FakeVendorLib* fake = node.fake;
  fake->on_create = [&](int card, int cus, uint64_t mib) {
    // As the driver: lowest free id node-wide.
    AddVhcu(root, fake, 6, card, cus, mib, 0);
    fake->created_id = 6;
    return OkStatus();
  };
  auto vhcu = node.backend->CreateVhcu(0, 20, 4096);
  BOOST_REQUIRE_MESSAGE(vhcu.ok(), vhcu.status().ToString());
  BOOST_TEST(vhcu->id == 6);
  BOOST_TEST(vhcu->card == 0);
  BOOST_TEST(vhcu->card_bdf == "0000:0b:00.0");
  BOOST_TEST(vhcu->compute_units == 20);
  BOOST_TEST(vhcu->memory_mib == 4096u);
  BOOST_TEST(vhcu->conf_path == "/etc/vdev/vdev6.conf");
  BOOST_TEST(fake->calls.back() == "CreateVhcu 0 20 4096");
}

BOOST_AUTO_TEST_CASE(create_without_an_id_from_the_driver_is_an_internal_error) {
  VhcuNode node;
  auto vhcu = node.backend->CreateVhcu(0, 20, 4096);
  BOOST_REQUIRE(!vhcu.ok());
  BOOST_TEST(static_cast<int>(vhcu.status().code()) == static_cast<int>(StatusCode::kInternal));
  BOOST_TEST(vhcu.status().message().find("did not say which vHCU it made") != std::string::npos,
             vhcu.status().message());
}

BOOST_AUTO_TEST_CASE(create_passes_the_drivers_refusal_through) {
  VhcuNode node;
  node.fake->on_create = [](int, int, uint64_t) {
    return ResourceExhaustedError("card 2 has no CUs left");
  };
  auto vhcu = node.backend->CreateVhcu(2, 1, 100);
  BOOST_REQUIRE(!vhcu.ok());
  BOOST_TEST(static_cast<int>(vhcu.status().code()) ==
             static_cast<int>(StatusCode::kResourceExhausted));
}

BOOST_AUTO_TEST_CASE(create_with_two_new_confs_takes_the_one_the_vendor_library_reports) {
  VhcuNode node;
  const std::string root = node.root;
  FakeVendorLib* fake = node.fake;
  fake->on_create = [&](int card, int cus, uint64_t mib) {
    // Someone else created vdev6 on card 1 at the same moment.
    AddVhcu(root, fake, 6, 1, 3, 300, 0);
    AddVhcu(root, fake, 7, card, cus, mib, 1);
    fake->created_id = 7;
    return OkStatus();
  };
  auto vhcu = node.backend->CreateVhcu(0, 20, 4096);
  BOOST_REQUIRE_MESSAGE(vhcu.ok(), vhcu.status().ToString());
  BOOST_TEST(vhcu->id == 7);
}

// Issue 9.5: a concurrent same-size create on the same card (an admin's
// hcuctl, or hy-smi) must never be taken for ours: HostBackend returns the
// vHCU the vendor library reports for this call, never merely a new conf.
// How DlopenVendorLib tells (and that it refuses when it cannot) is
// test/vendor/created_vhcu_test.cc.
BOOST_AUTO_TEST_CASE(create_returns_the_vhcu_this_call_made_not_a_concurrent_same_size_one) {
  VhcuNode node;
  const std::string root = node.root;
  FakeVendorLib* fake = node.fake;
  fake->on_create = [&](int card, int cus, uint64_t mib) {
    // The admin's vdev6 appears first, then the driver makes ours, vdev7.
    AddVhcu(root, fake, 6, card, cus, mib, 0);
    AddVhcu(root, fake, 7, card, cus, mib, 1);
    fake->created_id = 7;  // what the vendor library found for this call
    return OkStatus();
  };
  auto vhcu = node.backend->CreateVhcu(0, 20, 4096);
  BOOST_REQUIRE_MESSAGE(vhcu.ok(), vhcu.status().ToString());
  BOOST_TEST(vhcu->id == 7);
}

BOOST_AUTO_TEST_CASE(destroy_stops_destroys_and_removes_the_conf) {
  VhcuNode node;
  BOOST_REQUIRE(testing::PathExists(node.ConfPath(3)));
  Status s = node.backend->DestroyVhcu(3);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
  BOOST_TEST(node.fake->calls == (std::vector<std::string>{"StopVhcu 3", "DestroyVhcu 3"}),
             boost::test_tools::per_element());
  BOOST_TEST(!testing::PathExists(node.ConfPath(3)));
  BOOST_TEST(testing::PathExists(node.ConfPath(2)));
}

BOOST_AUTO_TEST_CASE(destroy_of_an_unknown_vhcu_is_not_found) {
  VhcuNode node;
  node.fake->stop_result = NotFoundError("VDEV_NOT_EXIST");
  Status s = node.backend->DestroyVhcu(9);
  BOOST_TEST(static_cast<int>(s.code()) == static_cast<int>(StatusCode::kNotFound));
  BOOST_TEST(node.fake->calls == (std::vector<std::string>{"StopVhcu 9"}),
             boost::test_tools::per_element());
}

// Killed between the driver's destroy and the unlink: the retry finds a
// vHCU the driver no longer knows, and its conf must not stay behind.
BOOST_AUTO_TEST_CASE(destroy_of_a_vhcu_the_driver_forgot_removes_its_leftover_conf) {
  VhcuNode node;
  node.fake->vhcus.erase(1);
  node.fake->stop_result = NotFoundError("VDEV_NOT_EXIST");
  Status s = node.backend->DestroyVhcu(1);
  BOOST_TEST(static_cast<int>(s.code()) == static_cast<int>(StatusCode::kNotFound));
  BOOST_TEST(!testing::PathExists(node.ConfPath(1)));
  BOOST_TEST(testing::PathExists(node.ConfPath(2)));
}

BOOST_AUTO_TEST_CASE(destroy_keeps_the_conf_of_a_vhcu_the_driver_still_knows) {
  VhcuNode node;
  node.fake->stop_result = NotFoundError("VDEV_NOT_EXIST");
  Status s = node.backend->DestroyVhcu(1);
  BOOST_TEST(static_cast<int>(s.code()) == static_cast<int>(StatusCode::kNotFound));
  BOOST_TEST(testing::PathExists(node.ConfPath(1)));
}

BOOST_AUTO_TEST_CASE(destroy_of_a_busy_vhcu_is_unavailable_and_keeps_the_conf) {
  VhcuNode node;
  node.fake->destroy_result = UnavailableError("DEVICE_BUSY");
  Status s = node.backend->DestroyVhcu(2);
  BOOST_TEST(static_cast<int>(s.code()) == static_cast<int>(StatusCode::kUnavailable));
  BOOST_TEST(testing::PathExists(node.ConfPath(2)));
}

BOOST_AUTO_TEST_CASE(destroy_proceeds_when_stop_fails_for_another_reason) {
  VhcuNode node;
  node.fake->stop_result = FailedPreconditionError("not started");
  BOOST_TEST(node.backend->DestroyVhcu(2).ok());
  BOOST_TEST(!testing::PathExists(node.ConfPath(2)));
}

BOOST_AUTO_TEST_CASE(destroy_succeeds_when_the_driver_already_removed_the_conf) {
  VhcuNode node;
  node.fake->destroy_result = OkStatus();
  std::remove(node.ConfPath(1).c_str());
  BOOST_TEST(node.backend->DestroyVhcu(1).ok());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
