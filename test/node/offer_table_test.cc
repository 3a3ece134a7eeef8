// The one offer rule (hcudp/offer.h) as a table: one row per rule, each
// naming the node, the ledger, the mode, the device asked about and the
// verdict.
#include <boost/test/unit_test.hpp>
#include <functional>
#include <string>
#include <vector>

#include "hcudp/offer.h"

namespace hcudp {
namespace {

Card MakeCard(int index, const std::string& bdf) {
  Card c;
  c.index = index;
  c.bdf = bdf;
  c.model = "K100_AI";
  c.serial = "S" + std::to_string(index);
  c.compute_units = 120;
  c.memory_bytes = 65520 * kMiB;
  return c;
}

Vhcu MakeVhcu(int id, int card, const std::string& bdf, int cu = 30, uint64_t mib = 16380) {
  Vhcu v;
  v.id = id;
  v.card = card;
  v.card_bdf = bdf;
  v.compute_units = cu;
  v.memory_mib = mib;
  v.conf_path = "/etc/vdev/vdev" + std::to_string(id) + ".conf";
  return v;
}

MigInstance MakeMig(int card, const std::string& bdf, const std::string& uuid) {
  MigInstance m;
  m.card = card;
  m.card_bdf = bdf;
  m.uuid = uuid;
  m.profile = "4g.31gb";
  return m;
}

const std::string kA = "0000:0b:00.0";
const std::string kB = "0000:0c:00.0";

// Two cards, A and B, nothing on them.
NodeInventory TwoCards() {
  NodeInventory inv;
  inv.cards = {MakeCard(0, kA), MakeCard(1, kB)};
  return inv;
}

Holder Hold(HolderSource source, DeviceRef device, bool dynamic = false) {
  Holder h;
  h.source = source;
  h.owner = "uid-1";
  h.describe = "claim ns/one (uid uid-1)";
  h.path = "/record";
  h.device = std::move(device);
  h.dynamic = dynamic;
  return h;
}

DeviceRef CardA() { return DeviceRef::OfCard(MakeCard(0, kA)); }
DeviceRef VhcuRef(int id) { return DeviceRef::OfVhcu(MakeVhcu(id, 0, kA)); }
DeviceRef MarkOnVhcu(int id) {  // a mark names card index and vHCU id only
  DeviceRef d;
  d.kind = DeviceRef::Kind::kVhcu;
  d.card = 0;
  d.vhcu_id = id;
  return d;
}

struct Row {
  const char* rule;
  std::function<void(NodeInventory*, Holdings*)> setup;
  OfferMode mode;
  DeviceRef device;
  bool free;
  NotFree reason;
  bool shared = false;
};

const std::vector<Row>& Rows() {
  static const std::vector<Row> rows = {
      {"a known card held by no one is offered", [](NodeInventory*, Holdings*) {},
       OfferMode::kDevicePlugin, CardA(), true, NotFree::kNone},
      {"a card held whole is not offered",
       [](NodeInventory*, Holdings* h) {
         h->holders.push_back(Hold(HolderSource::kDraClaim, CardA()));
       },
       OfferMode::kDra, CardA(), false, NotFree::kHeld},
      {"a whole-card mark (index only) holds the card",
       [](NodeInventory*, Holdings* h) {
         DeviceRef d;
         d.kind = DeviceRef::Kind::kCard;
         d.card = 0;
         h->holders.push_back(Hold(HolderSource::kHamiMark, d));
       },
       OfferMode::kDevicePlugin, CardA(), false, NotFree::kHeld},
      {"a card carrying an unheld pre-split vHCU is never offered whole",
       [](NodeInventory* inv, Holdings*) { inv->vhcus = {MakeVhcu(3, 0, kA)}; }, OfferMode::kDra,
       CardA(), false, NotFree::kCarriesVhcus},
      {"a card carrying held pre-split vHCUs is never offered whole (repro 1)",
       [](NodeInventory* inv, Holdings* h) {
         inv->vhcus = {MakeVhcu(3, 0, kA), MakeVhcu(4, 0, kA)};
         h->holders.push_back(Hold(HolderSource::kDraClaim, VhcuRef(3)));
         h->holders.push_back(Hold(HolderSource::kDraClaim, VhcuRef(4)));
       },
       OfferMode::kDra, CardA(), false, NotFree::kCarriesVhcus},
      {"a card carrying a vHCU kept from the last good look (conf torn) is unknown",
       [](NodeInventory* inv, Holdings*) {
         inv->vhcus = {MakeVhcu(3, 0, kA)};
         inv->vhcu_gaps.push_back(
             {3, 0, "/etc/vdev/vdev3.conf", "empty", UnknownReason::kConfTorn});
       },
       OfferMode::kDevicePlugin, CardA(), false, NotFree::kUnknown},
      {"a card carrying MIG instances is never offered whole",
       [](NodeInventory* inv, Holdings*) { inv->mig_instances = {MakeMig(0, kA, "u1")}; },
       OfferMode::kDevicePlugin, CardA(), false, NotFree::kCarriesMig},
      {"no card of a MIG node is offered whole",
       [](NodeInventory* inv, Holdings*) { inv->mig_enabled = true; }, OfferMode::kDevicePlugin,
       CardA(), false, NotFree::kMigNode},
      {"no card is offered whole while the MIG mode is unknown",
       [](NodeInventory* inv, Holdings*) {
         inv->mig_gaps.push_back({"MIG mode", "query failed", UnknownReason::kMigModeUnknown});
       },
       OfferMode::kDra, CardA(), false, NotFree::kMigModeUnknown},
      {"an unknown card is never offered",
       [](NodeInventory* inv, Holdings*) {
         UnknownCard u;
         u.last_known = inv->cards[0];
         u.reason = UnknownReason::kMissedDiscovery;
         inv->cards.erase(inv->cards.begin());
         inv->unknown_cards.push_back(u);
       },
       OfferMode::kDevicePlugin, CardA(), false, NotFree::kUnknown},
      {"a card whose vHCU state is unknown (/etc/vdev unreadable) is not offered",
       [](NodeInventory* inv, Holdings*) {
         inv->vhcu_gaps.push_back({-1, -1, "/etc/vdev", "EACCES", UnknownReason::kVdevUnreadable});
       },
       OfferMode::kDevicePlugin, CardA(), false, NotFree::kUnknown},
      {"nothing is offered while a ledger record cannot be read",
       [](NodeInventory*, Holdings* h) {
         h->gaps.push_back({"/dra/x.json", "does not decode"});
       },
       OfferMode::kDra, CardA(), false, NotFree::kHoldersUnknown},
      {"a free pre-split vHCU is offered",
       [](NodeInventory* inv, Holdings*) { inv->vhcus = {MakeVhcu(3, 0, kA)}; },
       OfferMode::kDevicePlugin, VhcuRef(3), true, NotFree::kNone},
      {"a vHCU a claim holds is not offered free",
       [](NodeInventory* inv, Holdings* h) {
         inv->vhcus = {MakeVhcu(3, 0, kA)};
         h->holders.push_back(Hold(HolderSource::kDraClaim, VhcuRef(3)));
       },
       OfferMode::kDra, VhcuRef(3), false, NotFree::kHeld},
      {"a vHCU held by a mark file is not offered free",
       [](NodeInventory* inv, Holdings* h) {
         inv->vhcus = {MakeVhcu(3, 0, kA)};
         h->holders.push_back(Hold(HolderSource::kHamiMark, MarkOnVhcu(3), true));
       },
       OfferMode::kDevicePlugin, VhcuRef(3), false, NotFree::kHeld},
      {"a vHCU a claim holds without a mark file is not offered free",
       [](NodeInventory* inv, Holdings* h) {
         inv->vhcus = {MakeVhcu(3, 0, kA)};
         h->holders.push_back(Hold(HolderSource::kDraClaim, VhcuRef(3), true));
       },
       OfferMode::kDra, VhcuRef(3), false, NotFree::kHeld},
      {"a vHCU an intent holds by card and size is not offered free",
       [](NodeInventory* inv, Holdings* h) {
         inv->vhcus = {MakeVhcu(3, 0, kA)};
         DeviceRef d = VhcuRef(3);
         d.vhcu_id = -1;
         Holder intent = Hold(HolderSource::kVhcuIntent, d, true);
         intent.prior_vhcu_ids = {1, 2};
         h->holders.push_back(intent);
       },
       OfferMode::kDevicePlugin, VhcuRef(3), false, NotFree::kHeld},
      {"a vHCU whose conf is torn is not offered",
       [](NodeInventory* inv, Holdings*) {
         inv->vhcus = {MakeVhcu(3, 0, kA)};
         inv->vhcu_gaps.push_back({3, 0, "/etc/vdev/vdev3.conf", "half", UnknownReason::kConfTorn});
       },
       OfferMode::kDevicePlugin, VhcuRef(3), false, NotFree::kUnknown},
      {"a vHCU on an unknown card is not offered",
       [](NodeInventory* inv, Holdings*) {
         inv->vhcus = {MakeVhcu(3, 0, kA)};
         UnknownCard u;
         u.last_known = inv->cards[0];
         inv->cards.erase(inv->cards.begin());
         inv->unknown_cards.push_back(u);
       },
       OfferMode::kDevicePlugin, VhcuRef(3), false, NotFree::kParentUnknown},
      {"a vHCU whose card is held whole is not offered",
       [](NodeInventory* inv, Holdings* h) {
         inv->vhcus = {MakeVhcu(3, 0, kA)};
         h->holders.push_back(Hold(HolderSource::kDraClaim, CardA()));
       },
       OfferMode::kDra, VhcuRef(3), false, NotFree::kParentHeld},
      {"a vHCU of a MIG node is not offered",
       [](NodeInventory* inv, Holdings*) {
         inv->vhcus = {MakeVhcu(3, 0, kA)};
         inv->mig_enabled = true;
       },
       OfferMode::kDevicePlugin, VhcuRef(3), false, NotFree::kMigNode},
      {"a free MIG instance is offered",
       [](NodeInventory* inv, Holdings*) {
         inv->mig_enabled = true;
         inv->mig_instances = {MakeMig(0, kA, "u1")};
       },
       OfferMode::kDevicePlugin, DeviceRef::OfMig(MakeMig(0, kA, "u1")), true, NotFree::kNone},
      {"a MIG instance a claim holds is not offered free",
       [](NodeInventory* inv, Holdings* h) {
         inv->mig_enabled = true;
         inv->mig_instances = {MakeMig(0, kA, "u1")};
         h->holders.push_back(
             Hold(HolderSource::kDraClaim, DeviceRef::OfMig(MakeMig(0, kA, "u1"))));
       },
       OfferMode::kDra, DeviceRef::OfMig(MakeMig(0, kA, "u1")), false, NotFree::kHeld},
      {"a MIG instance is not offered while the MIG mode is unknown",
       [](NodeInventory* inv, Holdings*) {
         inv->mig_instances = {MakeMig(0, kA, "u1")};
         inv->mig_gaps.push_back({"MIG mode", "query failed", UnknownReason::kMigModeUnknown});
       },
       OfferMode::kDevicePlugin, DeviceRef::OfMig(MakeMig(0, kA, "u1")), false,
       NotFree::kMigModeUnknown},
      {"DRA: a card carrying only claims' dynamic vHCUs stays offered, shared",
       [](NodeInventory* inv, Holdings* h) {
         inv->vhcus = {MakeVhcu(7, 0, kA)};
         h->holders.push_back(Hold(HolderSource::kDraClaim, VhcuRef(7), true));
       },
       OfferMode::kDra, CardA(), true, NotFree::kNone, true},
      {"DRA: a card with a claim's dynamic vHCU beside a pre-split one is not offered",
       [](NodeInventory* inv, Holdings* h) {
         inv->vhcus = {MakeVhcu(3, 0, kA), MakeVhcu(7, 0, kA)};
         h->holders.push_back(Hold(HolderSource::kDraClaim, VhcuRef(7), true));
       },
       OfferMode::kDra, CardA(), false, NotFree::kCarriesVhcus},
      {"device plugin: a card carrying a claim's dynamic vHCU is not offered whole",
       [](NodeInventory* inv, Holdings* h) {
         inv->vhcus = {MakeVhcu(7, 0, kA)};
         h->holders.push_back(Hold(HolderSource::kDraClaim, VhcuRef(7), true));
       },
       OfferMode::kDevicePlugin, CardA(), false, NotFree::kCarriesVhcus},
      {"HAMi: a card a HAMi pod holds whole stays HAMi's to account",
       [](NodeInventory*, Holdings* h) {
         DeviceRef d;
         d.kind = DeviceRef::Kind::kCard;
         d.card = 0;
         h->holders.push_back(Hold(HolderSource::kHamiMark, d));
       },
       OfferMode::kHami, CardA(), true, NotFree::kNone, true},
      {"HAMi: a card a DRA claim holds whole is not HAMi's",
       [](NodeInventory*, Holdings* h) {
         h->holders.push_back(Hold(HolderSource::kDraClaim, CardA()));
       },
       OfferMode::kHami, CardA(), false, NotFree::kHeld},
      {"HAMi: a card carrying vHCUs is shared by capacity",
       [](NodeInventory* inv, Holdings*) { inv->vhcus = {MakeVhcu(3, 0, kA)}; }, OfferMode::kHami,
       CardA(), true, NotFree::kNone, true},
  };
  return rows;
}

BOOST_AUTO_TEST_CASE(every_row_of_the_offer_rule_holds) {
  for (const Row& row : Rows()) {
    BOOST_TEST_CONTEXT(row.rule) {
      NodeInventory inv = TwoCards();
      Holdings holdings;
      row.setup(&inv, &holdings);
      OfferPlan plan = DecideOffers(inv, holdings, row.mode);
      const DeviceOffer* o = plan.Find(row.device);
      BOOST_REQUIRE(o != nullptr);
      BOOST_TEST(o->free == row.free);
      BOOST_TEST(NotFreeName(o->reason) == NotFreeName(row.reason));
      BOOST_TEST(o->shared == row.shared);
      BOOST_TEST(o->why.empty() == row.free, o->why);
    }
  }
}

BOOST_AUTO_TEST_CASE(the_other_card_is_not_affected_by_one_cards_state) {
  NodeInventory inv = TwoCards();
  inv.vhcus = {MakeVhcu(3, 0, kA)};
  Holdings holdings;
  holdings.holders.push_back(Hold(HolderSource::kDraClaim, VhcuRef(3)));
  OfferPlan plan = DecideOffers(inv, holdings, OfferMode::kDra);
  BOOST_TEST(plan.Free(DeviceRef::OfCard(MakeCard(1, kB))));
}

BOOST_AUTO_TEST_CASE(hami_cards_carry_what_their_vhcus_take_and_what_no_pod_holds) {
  NodeInventory inv = TwoCards();
  inv.vhcus = {MakeVhcu(3, 0, kA, 30, 16000), MakeVhcu(4, 0, kA, 60, 32000)};
  Holdings holdings;
  holdings.holders.push_back(Hold(HolderSource::kHamiMark, MarkOnVhcu(4), true));
  OfferPlan plan = DecideOffers(inv, holdings, OfferMode::kHami);
  const DeviceOffer* a = plan.Find(CardA());
  BOOST_REQUIRE(a != nullptr);
  BOOST_TEST(a->used_vhcus == 2);
  BOOST_TEST(a->used_compute_units == 90);
  BOOST_TEST(a->used_memory_mib == 48000u);
  // vdev3 is pre-split: HAMi's scheduler, which counts pods, cannot see it.
  BOOST_TEST(a->foreign_vhcus == 1);
  BOOST_TEST(a->foreign_compute_units == 30);
  BOOST_TEST(a->foreign_memory_mib == 16000u);
}

BOOST_AUTO_TEST_CASE(unknown_cards_are_listed_with_why) {
  NodeInventory inv = TwoCards();
  UnknownCard u;
  u.last_known = inv.cards[1];
  u.reason = UnknownReason::kQueryFailed;
  u.detail = "DMI timed out";
  inv.cards.pop_back();
  inv.unknown_cards.push_back(u);
  OfferPlan plan = DecideOffers(inv, Holdings{}, OfferMode::kDevicePlugin);
  const DeviceOffer* b = plan.Find(DeviceRef::OfCard(MakeCard(1, kB)));
  BOOST_REQUIRE(b != nullptr);
  BOOST_TEST(!b->free);
  BOOST_TEST(b->why.find("DMI timed out") != std::string::npos, b->why);
}

}  // namespace
}  // namespace hcudp
