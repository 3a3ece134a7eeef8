// HAMi's node registration by the one offer rule (issue 28, repro 3): unknown
// vHCU state is never free capacity, and vHCUs no HAMi pod holds (an admin's
// pre-split ones) are taken from the full list HAMi's scheduler reads.
#include <boost/test/unit_test.hpp>
#include <string>

#include "hcudp/hami/node_devices.h"
#include "hcudp/offer.h"

namespace hcudp::hami {
namespace {

// One K100_AI: 120 CU, 65520 MiB.
NodeInventory OneCardNode() {
  NodeInventory inv;
  Card c;
  c.index = 0;
  c.bdf = "0000:09:00.0";
  c.model = "K100_AI";
  c.serial = "T6T8290019020401";
  c.compute_units = 120;
  c.memory_bytes = 65520 * kMiB;
  c.numa_node = 0;
  inv.cards.push_back(c);
  return inv;
}

Vhcu VhcuOnCard0(int id, int cu, uint64_t mib) {
  Vhcu v;
  v.id = id;
  v.card = 0;
  v.card_bdf = "0000:09:00.0";
  v.compute_units = cu;
  v.memory_mib = mib;
  return v;
}

Holder MarkOf(int vhcu_id) {
  Holder h;
  h.source = HolderSource::kHamiMark;
  h.owner = "pod-1";
  h.device.kind = DeviceRef::Kind::kVhcu;
  h.device.card = 0;
  h.device.vhcu_id = vhcu_id;
  h.dynamic = true;
  return h;
}

NodeRegistration Register(const NodeInventory& inv, const Holdings& holdings) {
  return BuildNodeRegistration(inv, DecideOffers(inv, holdings, OfferMode::kHami), 4);
}

void ExpectNothingFree(const NodeDevice& d) {
  BOOST_TEST(d.count == 0);
  BOOST_TEST(d.devmem_mib == 0);
  BOOST_TEST(d.devcore_percent == 0);
}

// A restart while a running pod's vdev3.conf is torn: the vHCU was never
// read by this process, so the gap may be on any card. Main registered the
// card at full capacity in both lists (count 4 > 3, MiB 65520 > 57328).
BOOST_AUTO_TEST_CASE(a_torn_conf_after_a_restart_gives_no_capacity_back) {
  NodeInventory inv = OneCardNode();
  inv.vhcu_gaps.push_back({3, -1, "/etc/vdev/vdev3.conf", "empty", UnknownReason::kConfTorn});
  Holdings holdings;
  holdings.holders.push_back(MarkOf(3));
  NodeRegistration reg = Register(inv, holdings);
  BOOST_REQUIRE(reg.full.size() == 1u);
  ExpectNothingFree(reg.remaining[0]);
  ExpectNothingFree(reg.full[0]);
  // Still registered: the card is there, its health as read.
  BOOST_TEST(reg.full[0].healthy);
}

// An admin's four pre-split vHCUs fill the card. HAMi's scheduler subtracts
// only pods from the full list: main reported it whole, and every Allocate
// placed there failed.
BOOST_AUTO_TEST_CASE(pre_split_vhcus_that_fill_a_card_leave_nothing_in_the_full_list) {
  NodeInventory inv = OneCardNode();
  for (int id = 0; id < 4; ++id) inv.vhcus.push_back(VhcuOnCard0(id, 30, 16380));
  NodeRegistration reg = Register(inv, Holdings{});
  BOOST_REQUIRE(reg.full.size() == 1u);
  ExpectNothingFree(reg.full[0]);
  ExpectNothingFree(reg.remaining[0]);
}

BOOST_AUTO_TEST_CASE(a_hami_pods_vhcu_stays_in_the_full_list_and_leaves_the_remaining_one) {
  NodeInventory inv = OneCardNode();
  inv.vhcus.push_back(VhcuOnCard0(3, 30, 16380));
  Holdings holdings;
  holdings.holders.push_back(MarkOf(3));
  NodeRegistration reg = Register(inv, holdings);
  BOOST_REQUIRE(reg.full.size() == 1u);
  BOOST_TEST(reg.full[0].count == 4);
  BOOST_TEST(reg.full[0].devmem_mib == 65520);
  BOOST_TEST(reg.full[0].devcore_percent == 100);
  BOOST_TEST(reg.remaining[0].count == 3);
  BOOST_TEST(reg.remaining[0].devmem_mib == 65520 - 16380);
  BOOST_TEST(reg.remaining[0].devcore_percent == 75);
}

BOOST_AUTO_TEST_CASE(a_card_a_dra_claim_holds_whole_has_nothing_free) {
  NodeInventory inv = OneCardNode();
  Holdings holdings;
  Holder claim;
  claim.source = HolderSource::kDraClaim;
  claim.device = DeviceRef::OfCard(inv.cards[0]);
  holdings.holders.push_back(claim);
  NodeRegistration reg = Register(inv, holdings);
  ExpectNothingFree(reg.full[0]);
  ExpectNothingFree(reg.remaining[0]);
}

BOOST_AUTO_TEST_CASE(nothing_is_free_while_the_mig_mode_is_unknown) {
  NodeInventory inv = OneCardNode();
  inv.mig_gaps.push_back({"MIG mode", "query failed", UnknownReason::kMigModeUnknown});
  NodeRegistration reg = Register(inv, Holdings{});
  ExpectNothingFree(reg.full[0]);
  ExpectNothingFree(reg.remaining[0]);
}

}  // namespace
}  // namespace hcudp::hami
