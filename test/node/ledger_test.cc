// The ownership ledger (hcudp/ledger.h): every record kind holds what it
// names, and a record that cannot be read makes every answer unknown.
#include "hcudp/ledger.h"

#include <boost/test/unit_test.hpp>
#include <string>

#include "hcudp/backend.h"
#include "hcudp/dra/checkpoint.h"
#include "node/ledger_read.h"
#include "testing/testutil.h"
#include "vhcu/intent_record.h"

namespace hcudp {
namespace {

using testing::TempDir;
using testing::WriteFile;

const std::string kLedgerBdf = "0000:0b:00.0";

Vhcu VhcuOn(int id, int card = 0, const std::string& bdf = kLedgerBdf, int cu = 30,
            uint64_t mib = 16376) {
  Vhcu v;
  v.id = id;
  v.card = card;
  v.card_bdf = bdf;
  v.compute_units = cu;
  v.memory_mib = mib;
  return v;
}

Card CardAt(int index, const std::string& bdf) {
  Card c;
  c.index = index;
  c.bdf = bdf;
  return c;
}

struct LedgerNode {
  TempDir dir;
  std::string Path(const std::string& host_path) const { return HostPath(dir.path(), host_path); }
  Holdings Read() const {
    internal::LedgerSources s;
    s.host_root = dir.path();
    s.cdi_dir = Path("/var/run/cdi");
    return internal::ReadLedger(s);
  }
  void Claim(const std::string& uid, dra::PreparedDevice device) const {
    dra::PreparedClaim c;
    c.uid = uid;
    c.namespace_name = "ns";
    c.name = "claim-" + uid;
    c.owner = uid;
    c.state = dra::ClaimState::kPrepared;
    c.devices.push_back(std::move(device));
    BOOST_REQUIRE(dra::CheckpointStore(dir.path()).Write(c).ok());
  }
};

dra::PreparedDevice PreSplit(int vhcu_id) {
  dra::PreparedDevice d;
  d.request = "hcu";
  d.pool = "node";
  d.device = "vhcu-" + std::to_string(vhcu_id);
  d.kind = dra::PreparedKind::kVhcu;
  d.card = 0;
  d.card_bdf = kLedgerBdf;
  d.vhcu_id = vhcu_id;
  return d;
}

BOOST_AUTO_TEST_CASE(an_empty_node_holds_nothing_and_is_known) {
  LedgerNode node;
  Holdings h = node.Read();
  BOOST_TEST(h.Known());
  BOOST_TEST((h.Of(DeviceRef::OfVhcu(VhcuOn(3))).certainty() == Certainty::kAbsent));
}

BOOST_AUTO_TEST_CASE(a_mark_file_holds_its_vhcu_and_a_whole_card_mark_its_card) {
  LedgerNode node;
  WriteFile(node.Path("/etc/vdev/dynamic/pod1_main_0_3"), "2026-01-01 00:00:00");
  WriteFile(node.Path("/etc/vdev/dynamic/pod2_main_1_-1"), "2026-01-01 00:00:00");
  Holdings h = node.Read();
  Holders v3 = h.Of(DeviceRef::OfVhcu(VhcuOn(3)));
  BOOST_TEST((v3.certainty() == Certainty::kFound));
  BOOST_TEST(v3.Describe().find("pod pod1") != std::string::npos, v3.Describe());
  BOOST_TEST((h.Of(DeviceRef::OfVhcu(VhcuOn(4))).certainty() == Certainty::kAbsent));
  BOOST_TEST((h.Of(DeviceRef::OfCard(CardAt(1, "0000:0c:00.0"))).certainty() == Certainty::kFound));
  BOOST_TEST((h.Of(DeviceRef::OfCard(CardAt(0, kLedgerBdf))).certainty() == Certainty::kAbsent));
}

BOOST_AUTO_TEST_CASE(an_intent_without_an_id_holds_a_new_vhcu_of_its_size_on_its_card) {
  LedgerNode node;
  internal::IntentRecord r;
  r.pod_uid = "pod1";
  r.container = "main";
  r.card = 0;
  r.card_bdf = kLedgerBdf;
  r.compute_units = 30;
  r.memory_mib = 16376;
  r.prior_vhcu_ids = {1, 2};
  WriteFile(node.Path("/var/lib/hcu-device-plugin/intents/pod1_main_0_1.intent"),
            internal::FormatIntentRecord(r));
  Holdings h = node.Read();
  BOOST_TEST((h.Of(DeviceRef::OfVhcu(VhcuOn(3))).certainty() == Certainty::kFound));
  // There before the create: not the one it made.
  BOOST_TEST((h.Of(DeviceRef::OfVhcu(VhcuOn(2))).certainty() == Certainty::kAbsent));
  // Another size.
  BOOST_TEST((h.Of(DeviceRef::OfVhcu(VhcuOn(5, 0, kLedgerBdf, 15, 8188))).certainty() ==
              Certainty::kAbsent));
}

BOOST_AUTO_TEST_CASE(a_dra_claim_holds_its_pre_split_vhcu_without_any_mark) {
  LedgerNode node;
  node.Claim("uid-1", PreSplit(3));
  Holders v3 = node.Read().Of(DeviceRef::OfVhcu(VhcuOn(3)));
  BOOST_TEST((v3.certainty() == Certainty::kFound));
  BOOST_TEST(v3.Describe().find("claim ns/claim-uid-1") != std::string::npos, v3.Describe());
}

BOOST_AUTO_TEST_CASE(an_undecodable_checkpoint_entry_makes_every_answer_unknown) {
  LedgerNode node;
  WriteFile(node.Path("/var/lib/hcu-device-plugin/dra/uid-9.json"), "{\"torn");
  Holdings h = node.Read();
  BOOST_TEST(!h.Known());
  Holders v3 = h.Of(DeviceRef::OfVhcu(VhcuOn(3)));
  BOOST_TEST((v3.certainty() == Certainty::kUnknown));
  BOOST_TEST(v3.why().find("uid-9.json") != std::string::npos, v3.why());
}

BOOST_AUTO_TEST_CASE(an_unreadable_checkpoint_directory_makes_every_answer_unknown) {
  LedgerNode node;
  // A file where the directory should be: it cannot be listed.
  WriteFile(node.Path("/var/lib/hcu-device-plugin/dra"), "not a directory");
  BOOST_TEST((node.Read().Of(DeviceRef::OfVhcu(VhcuOn(3))).certainty() == Certainty::kUnknown));
}

BOOST_AUTO_TEST_CASE(a_set_aside_checkpoint_entry_holds_nothing) {
  LedgerNode node;
  WriteFile(node.Path("/var/lib/hcu-device-plugin/dra/uid-9.json.undecodable"), "{\"torn");
  Holdings h = node.Read();
  BOOST_TEST(h.Known());
  BOOST_TEST((h.Of(DeviceRef::OfVhcu(VhcuOn(3))).certainty() == Certainty::kAbsent));
}

BOOST_AUTO_TEST_CASE(an_unreadable_intent_makes_every_answer_unknown) {
  LedgerNode node;
  WriteFile(node.Path("/var/lib/hcu-device-plugin/intents/pod1_main_0_1.intent"), "pod_uid: x\n");
  BOOST_TEST((node.Read().Of(DeviceRef::OfVhcu(VhcuOn(3))).certainty() == Certainty::kUnknown));
}

BOOST_AUTO_TEST_CASE(a_hygon_claim_not_yet_adopted_holds_its_vhcu) {
  LedgerNode node;
  WriteFile(
      node.Path("/var/run/cdi/hcu-dra-driver-prepared-state.state"),
      "{\"prepared\": {\"uid-h\": [{\"claimUID\": \"uid-h\", \"parentDevice\": "
      "\"hcu-0000-0b-00-0\", \"requestName\": \"hcu\", \"poolName\": \"node-a\", "
      "\"wholeCard\": false, \"vdvInd\": 3, \"pciBusNumber\": \"\", \"cdiName\": \"vdev3\", "
      "\"cdiDeviceID\": \"dra.hygon.com/vhcu=vdev3\", \"dynamicMarkFile\": "
      "\"pod1_main_0_3\", \"podUID\": \"pod1\", \"containerName\": \"main\", \"dvInd\": 0}]}}");
  Holders v3 = node.Read().Of(DeviceRef::OfVhcu(VhcuOn(3)));
  BOOST_TEST((v3.certainty() == Certainty::kFound));
  BOOST_TEST(v3.Describe().find("Hygon") != std::string::npos, v3.Describe());
}

BOOST_AUTO_TEST_CASE(a_hygon_state_that_does_not_parse_makes_every_answer_unknown) {
  LedgerNode node;
  WriteFile(node.Path("/var/run/cdi/hcu-dra-driver-prepared-state.state"), "{\"prepared\": [");
  BOOST_TEST((node.Read().Of(DeviceRef::OfVhcu(VhcuOn(3))).certainty() == Certainty::kUnknown));
}

BOOST_AUTO_TEST_CASE(pod_resources_that_do_not_answer_are_a_note_not_a_gap) {
  LedgerNode node;
  internal::LedgerSources s;
  s.host_root = node.dir.path();
  s.pod_resources = [] { return StatusOr<std::vector<Holder>>(UnavailableError("no kubelet")); };
  Holdings h = internal::ReadLedger(s);
  BOOST_TEST(h.Known());
  BOOST_TEST(h.notes.size() == 1u);
}

}  // namespace
}  // namespace hcudp
