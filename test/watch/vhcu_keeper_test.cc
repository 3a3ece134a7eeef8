#include "watch/vhcu_keeper.h"

#include <boost/test/unit_test.hpp>

namespace hcudp {
namespace {

Vhcu MakeVhcu(int id, int card) {
  Vhcu v;
  v.id = id;
  v.card = card;
  v.compute_units = 15;
  v.memory_mib = 8188;
  return v;
}

// Four cards; vdev0-1 on card 2, vdev4 on card 3.
NodeInventory Readable() {
  NodeInventory inv;
  for (int i = 0; i < 4; ++i) {
    Card c;
    c.index = i;
    inv.cards.push_back(c);
  }
  inv.vhcus = {MakeVhcu(0, 2), MakeVhcu(1, 2), MakeVhcu(4, 3)};
  return inv;
}

std::vector<int> Ids(const NodeInventory& inv) {
  std::vector<int> ids;
  for (const Vhcu& v : inv.vhcus) ids.push_back(v.id);
  return ids;
}

VhcuStateGap Gap(int vhcu_id) {
  VhcuStateGap g;
  g.vhcu_id = vhcu_id;
  g.path = vhcu_id < 0 ? "/etc/vdev" : "/etc/vdev/vdev" + std::to_string(vhcu_id) + ".conf";
  g.reason = "empty";
  return g;
}

BOOST_AUTO_TEST_SUITE(vhcu_keeper)

BOOST_AUTO_TEST_CASE(an_unreadable_conf_keeps_its_vhcu_and_only_its_card_is_unknown) {
  const NodeInventory first = Readable();
  NodeInventory inv = Readable();
  inv.vhcus.erase(inv.vhcus.begin() + 2);  // vdev4 unreadable
  inv.vhcu_gaps = {Gap(4)};
  VhcuKeeper::Apply(first.vhcus, &inv);
  BOOST_TEST(Ids(inv) == (std::vector<int>{0, 1, 4}), boost::test_tools::per_element());
  BOOST_TEST(inv.vhcu_gaps.at(0).card == 3);
  BOOST_TEST(!inv.VhcuStateKnown(3));
  BOOST_TEST(inv.VhcuStateKnown(0));
  BOOST_TEST(inv.VhcuStateKnown(2));
}

BOOST_AUTO_TEST_CASE(a_conf_never_read_leaves_every_card_unknown) {
  const NodeInventory first = Readable();
  NodeInventory inv = Readable();
  inv.vhcu_gaps = {Gap(6)};
  VhcuKeeper::Apply(first.vhcus, &inv);
  BOOST_TEST(Ids(inv) == (std::vector<int>{0, 1, 4}), boost::test_tools::per_element());
  for (int card = 0; card < 4; ++card) BOOST_TEST(!inv.VhcuStateKnown(card), card);
}

BOOST_AUTO_TEST_CASE(an_unreadable_directory_keeps_every_vhcu) {
  const NodeInventory first = Readable();
  NodeInventory inv = Readable();
  inv.vhcus.clear();
  inv.vhcu_gaps = {Gap(-1)};
  VhcuKeeper::Apply(first.vhcus, &inv);
  BOOST_TEST(Ids(inv) == (std::vector<int>{0, 1, 4}), boost::test_tools::per_element());
  BOOST_TEST(!inv.VhcuStateKnown(0));
  // Still unreadable on the next look: the same state is kept.
  NodeInventory again = Readable();
  again.vhcus.clear();
  again.vhcu_gaps = {Gap(-1)};
  VhcuKeeper::Apply(inv.vhcus, &again);
  BOOST_TEST(Ids(again) == (std::vector<int>{0, 1, 4}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_readable_node_replaces_the_last_good_state) {
  const NodeInventory first = Readable();
  NodeInventory destroyed = Readable();
  destroyed.vhcus.pop_back();                  // vdev4 destroyed, read fine
  VhcuKeeper::Apply(first.vhcus, &destroyed);  // no gap: the look stands as read
  NodeInventory inv = Readable();
  inv.vhcus.clear();
  inv.vhcu_gaps = {Gap(-1)};
  VhcuKeeper::Apply(destroyed.vhcus, &inv);
  BOOST_TEST(Ids(inv) == (std::vector<int>{0, 1}), boost::test_tools::per_element());
}

// A card missed renumbers the cards after it (model P9.0.7,P9.7.14,
// T8.13.14,M10.4.0): the torn conf's gap and its kept vHCU follow their
// card's BDF to its new index, never the old index's new card.
BOOST_AUTO_TEST_CASE(a_gap_follows_its_card_when_the_cards_are_renumbered) {
  NodeInventory first;
  for (int i = 0; i < 4; ++i) {
    Card c;
    c.index = i;
    c.bdf = "0000:0" + std::to_string(i) + ":00.0";
    first.cards.push_back(c);
  }
  Vhcu v3 = MakeVhcu(3, 3);
  v3.card_bdf = first.cards[3].bdf;
  first.vhcus = {v3};
  // Card 2 missed: card 3 answers at index 2; vdev3.conf torn.
  NodeInventory inv = first;
  inv.cards.erase(inv.cards.begin() + 2);
  inv.cards[2].index = 2;
  inv.vhcus.clear();
  inv.vhcu_gaps = {Gap(3)};
  VhcuKeeper::Apply(first.vhcus, &inv);
  BOOST_TEST(inv.vhcu_gaps.at(0).card == 2);
  BOOST_TEST(!inv.VhcuStateKnown(2));
  BOOST_TEST(!inv.CardStateKnown("0000:03:00.0"));
  BOOST_TEST(inv.VhcuStateKnown(0));
  BOOST_TEST(inv.VhcuStateKnown(1));
  BOOST_REQUIRE(inv.vhcus.size() == 1u);
  BOOST_TEST(inv.vhcus[0].card == 2);
  BOOST_TEST(inv.VhcuCount(2) == 1);
  // Its card not discovered at all now: the gap names no particular card.
  NodeInventory without = first;
  without.cards.pop_back();
  without.vhcus.clear();
  without.vhcu_gaps = {Gap(3)};
  VhcuKeeper::Apply(first.vhcus, &without);
  BOOST_TEST(without.vhcu_gaps.at(0).card == -1);
  for (int card = 0; card < 3; ++card) BOOST_TEST(!without.VhcuStateKnown(card), card);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp
