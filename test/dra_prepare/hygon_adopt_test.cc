// Migration from Hygon's k8s-hcu-dra-driver (doc/dra.md): its prepared-state
// file parsed strictly, its claims adopted by Recover, freed by Unprepare,
// answered by a re-Prepare; a file that cannot be trusted destroys nothing.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "dra/hygon_state.h"
#include "dra_prepare/hygon_fixture.h"
#include "dra_prepare/prepare_fixture.h"
#include "hcudp/dra/checkpoint.h"

namespace hcudp::testing {
namespace {

// One device as Hygon's driver writes it, with fields replaced (raw JSON
// values) or removed (an empty value).
std::string Device(const std::map<std::string, std::string>& changes = {}) {
  const std::vector<std::pair<std::string, std::string>> fields = {
      {"claimUID", R"("c-1")"},
      {"parentDevice", R"("hcu-0000-09-00-0")"},
      {"requestName", R"("hcu")"},
      {"poolName", R"("node-a")"},
      {"wholeCard", "false"},
      {"vdvInd", "3"},
      {"pciBusNumber", R"("0000:09:00.0")"},
      {"cdiName", R"("vdev3")"},
      {"cdiDeviceID", R"("dra.hygon.com/vhcu=vdev3")"},
      {"dynamicMarkFile", R"("pod-1_main_0_3")"},
      {"podUID", R"("pod-1")"},
      {"containerName", R"("main")"},
      {"dvInd", "0"}};
  std::string out;
  auto add = [&out](const std::string& k, const std::string& v) {
    if (!v.empty()) out += (out.empty() ? "" : ",") + ("\"" + k + "\":") + v;
  };
  for (const auto& [k, v] : fields) {
    auto it = changes.find(k);
    add(k, it == changes.end() ? v : it->second);
  }
  for (const auto& change : changes) {  // fields a later version adds
    const std::string& k = change.first;
    if (std::none_of(fields.begin(), fields.end(), [&k](const auto& f) { return f.first == k; }))
      add(k, change.second);
  }
  return "{" + out + "}";
}
std::string Device(const std::string& field, const std::string& value = "") {
  return Device(std::map<std::string, std::string>{{field, value}});
}

std::string State(const std::string& device) { return R"({"prepared":{"c-1":[)" + device + "]}}"; }

BOOST_AUTO_TEST_CASE(hygon_state_reads_what_the_driver_writes) {
  const std::string whole =
      Device({{"wholeCard", "true"}, {"dynamicMarkFile", R"("pod-1_main_0_-1")"}, {"vdvInd", "0"}});
  auto claims =
      dra::ParseHygonState(R"({"prepared":{"c-2":null,"c-1":[)" + Device() + "," + whole + "]}}");
  BOOST_REQUIRE_MESSAGE(claims.ok(), claims.status().ToString());
  BOOST_REQUIRE_EQUAL(claims->size(), 2u);
  const dra::HygonClaim& c = (*claims)[0];
  BOOST_TEST(c.uid == "c-1");
  BOOST_REQUIRE_EQUAL(c.devices.size(), 2u);
  BOOST_TEST(c.devices[0].parent_device == "hcu-0000-09-00-0");
  BOOST_TEST(!c.devices[0].whole_card);
  BOOST_TEST(c.devices[0].vhcu_id == 3);
  BOOST_TEST(c.devices[0].cdi_id == "dra.hygon.com/vhcu=vdev3");
  BOOST_TEST(c.devices[0].mark == "pod-1_main_0_3");
  BOOST_TEST(c.devices[1].whole_card);
  BOOST_TEST(c.devices[1].vhcu_id == -1);
  BOOST_TEST((*claims)[1].devices.empty());
  // As Hygon's driver reads them: an empty file, a null map.
  BOOST_TEST(dra::ParseHygonState("")->empty());
  BOOST_TEST(dra::ParseHygonState(R"({"prepared":null})")->empty());
  // A field a later version adds is no reason to refuse.
  BOOST_TEST(dra::ParseHygonState(State(Device("newField", R"({"x":1})"))).ok());
}

BOOST_AUTO_TEST_CASE(hygon_state_rejections_name_the_field) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{", "not valid JSON"},
      {"[]", "not a JSON object"},
      {"{}", "prepared: required"},
      {R"({"prepared":[]})", "prepared: must be an object"},
      {R"({"prepared":{"../x":[]}})", "prepared[\"../x\"]"},
      {R"({"prepared":{"c-1":{}}})", "must be a list of devices"},
      {R"({"prepared":{"c-1":[],"c-1":[]}})", "listed twice"},
      {State(Device("claimUID", R"("c-9")")), "[0].claimUID"},
      {State(Device("parentDevice", R"("../../etc")")), "[0].parentDevice"},
      {State(Device("parentDevice")), "[0].parentDevice"},
      {State(Device("wholeCard", R"("no")")), "[0].wholeCard"},
      {State(Device("vdvInd", "-1")), "[0].vdvInd"},
      {State(Device("vdvInd")), "[0].vdvInd: required"},
      {State(Device("dvInd", "1.5")), "[0].dvInd"},
      {State(Device("cdiDeviceID", R"("vdev3")")), "[0].cdiDeviceID"},
      {State(Device("cdiDeviceID", R"("a/b=c d")")), "[0].cdiDeviceID"},
      {State(Device("dynamicMarkFile", R"("../../../etc/passwd")")), "[0].dynamicMarkFile"},
      {State(Device("dynamicMarkFile", R"("pod-1_main_0_4")")), "not the device's card 0 vHCU 3"},
      {State(Device("podUID", R"("a/b")")), "[0].podUID"},
      {std::string(dra::kMaxHygonStateBytes + 1, ' '), "more than the"},
      {std::string(100000, '[') + std::string(100000, ']'), "nested deeper than 32"},
      {R"({"prepared":{"c-1":[{"x":"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}]}})", "[0].claimUID"},
  };
  for (const auto& [text, want] : cases) {
    auto parsed = dra::ParseHygonState(text);
    BOOST_TEST_CONTEXT(text.substr(0, 120)) {
      BOOST_REQUIRE(!parsed.ok());
      BOOST_TEST(parsed.status().message().find(want) != std::string::npos,
                 parsed.status().message() << " should contain " << want);
    }
  }
}

BOOST_AUTO_TEST_CASE(removing_a_claim_keeps_the_others_field_for_field) {
  const std::string text =
      R"({"prepared":{"c-1":[)" + Device() + R"(],"c-2":[{"claimUID":"c-2","x":[1,2]}]}})";
  auto rest = dra::RemoveHygonClaims(text, {"c-1"});
  BOOST_REQUIRE(rest.ok());
  BOOST_TEST(rest->find("c-1") == std::string::npos);
  BOOST_TEST(rest->find("\"x\": [\n") != std::string::npos);  // Go's indentation
  BOOST_TEST(*dra::RemoveHygonClaims(*rest, {"c-2"}) == "{\n  \"prepared\": {}\n}");
  BOOST_TEST(!dra::RemoveHygonClaims("junk", {"c-1"}).ok());
}

// A claim Hygon's driver prepared (a vHCU) and one it gave a whole card.
struct Migrated {
  std::vector<HygonDriverNode::Device> vhcu, whole;
  dra::ClaimRef vhcu_ref, whole_ref;
};

Migrated PrepareWithHygon(SimDraNode& node, HygonDriverNode& hygon) {
  Migrated m;
  auto v = node.allocator->Allocate(
      ClaimJson("uid-hv", "hv",
                "[" + ExactRequest("hcu", R"({"cores":"20","memory":"4Gi"})") + "]"),
      "pod-hv");
  BOOST_REQUIRE_MESSAGE(v.ok(), v.status().ToString());
  node.claims.Put(*v);
  m.vhcu = hygon.Prepare(*node.backend, *v);
  auto w = node.allocator->Allocate(ClaimJson("uid-hw", "hw", "[" + ExactRequest("hcu") + "]"),
                                    "pod-hw");
  BOOST_REQUIRE_MESSAGE(w.ok(), w.status().ToString());
  node.claims.Put(*w);
  m.whole = hygon.Prepare(*node.backend, *w);
  m.vhcu_ref = {"ns1", "hv", "uid-hv"};
  m.whole_ref = {"ns1", "hw", "uid-hw"};
  return m;
}

BOOST_AUTO_TEST_CASE(hygon_claims_are_adopted_answered_and_freed) {
  SimDraNode node("k100ai-8.yaml");
  HygonDriverNode hygon(node.Root());
  Migrated m = PrepareWithHygon(node, hygon);
  BOOST_REQUIRE_EQUAL(m.vhcu.size(), 1u);
  BOOST_REQUIRE(!m.vhcu[0].whole_card);
  BOOST_REQUIRE(m.whole[0].whole_card);
  const size_t vhcus_before = node.Inventory().vhcus.size();

  node.Restart();
  auto r = node.preparer->Recover();
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  BOOST_TEST(r->adopted == 2);
  BOOST_TEST(r->kept == 2);
  BOOST_TEST(r->unprepared == 0);
  BOOST_TEST(node.Inventory().vhcus.size() == vhcus_before);  // nothing made, nothing destroyed
  auto entry = dra::CheckpointStore(node.Root()).Read("uid-hv");
  BOOST_REQUIRE(entry.ok());
  BOOST_TEST(entry->adopted_from == "k8s-hcu-dra-driver");
  BOOST_TEST(entry->devices[0].vhcu_id == m.vhcu[0].vhcu_id);
  BOOST_TEST(entry->devices[0].mark == m.vhcu[0].mark);

  // A re-Prepare answers Hygon's devices and CDI IDs, and learns the name.
  for (const auto& [ref, made] : {std::pair{m.vhcu_ref, m.vhcu}, std::pair{m.whole_ref, m.whole}}) {
    auto a = node.preparer->Prepare(ref);
    BOOST_REQUIRE_MESSAGE(a.ok() && a->error.empty(), (a.ok() ? a->error : a.status().ToString()));
    BOOST_REQUIRE_EQUAL(a->devices.size(), 1u);
    BOOST_TEST(a->devices[0].device_name == made[0].device);
    BOOST_TEST(a->devices[0].cdi_device_ids == std::vector<std::string>{made[0].cdi_id});
  }
  BOOST_TEST(dra::CheckpointStore(node.Root()).Read("uid-hv")->name == "hv");
  // Our own vHCU spec is not written for it: the CDI ID is Hygon's file's.
  BOOST_TEST(!PathExists(node.Path("/var/run/cdi/dra.hygon.com-vhcu_uid-hv.json")));

  // A restart does not adopt twice.
  node.Restart();
  r = node.preparer->Recover();
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->adopted == 0);

  // Unprepare frees the vHCU, its mark and Hygon's spec of it, and the
  // claim leaves Hygon's state file; the other claim stays listed there.
  BOOST_REQUIRE(node.preparer->Unprepare(m.vhcu_ref).ok());
  BOOST_TEST(node.Inventory().vhcus.size() == vhcus_before - 1);
  BOOST_TEST(!PathExists(node.Path("/etc/vdev/dynamic/" + m.vhcu[0].mark)));
  BOOST_TEST(!PathExists(hygon.CdiPath(hygon.VhcuSpecFile(m.vhcu[0].vhcu_id))));
  auto left = dra::ParseHygonState(ReadFile(hygon.StatePath()));
  BOOST_REQUIRE(left.ok());
  BOOST_REQUIRE_EQUAL(left->size(), 1u);
  BOOST_TEST((*left)[0].uid == "uid-hw");
  BOOST_TEST(PathExists(hygon.CdiPath(HygonDriverNode::kCardSpecFile)));

  BOOST_REQUIRE(node.preparer->Unprepare(m.whole_ref).ok());
  BOOST_TEST(!PathExists(node.Path("/etc/vdev/dynamic/" + m.whole[0].mark)));
  BOOST_TEST(ReadFile(hygon.StatePath()) == "{\n  \"prepared\": {}\n}");
  BOOST_TEST(!PathExists(hygon.CdiPath(HygonDriverNode::kCardSpecFile)));
  BOOST_TEST(node.Files("/var/lib/hcu-device-plugin/dra").empty());
}

BOOST_AUTO_TEST_CASE(a_state_file_that_cannot_be_trusted_destroys_nothing) {
  SimDraNode node("k100ai-8.yaml");
  HygonDriverNode hygon(node.Root());
  Migrated m = PrepareWithHygon(node, hygon);
  const size_t vhcus = node.Inventory().vhcus.size();
  const std::string whole = ReadFile(hygon.StatePath());
  for (const std::string& bad : {whole.substr(0, whole.size() / 2), std::string("\x01\xff junk")}) {
    WriteFile(hygon.StatePath(), bad);
    node.Restart();
    auto r = node.preparer->Recover();
    BOOST_REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    BOOST_TEST(r->adopted == 0);
    BOOST_TEST(ReadFile(hygon.StatePath()) == bad);
    BOOST_TEST(node.Inventory().vhcus.size() == vhcus);
    BOOST_TEST(PathExists(node.Path("/etc/vdev/dynamic/" + m.vhcu[0].mark)));
    BOOST_TEST(PathExists(hygon.CdiPath(hygon.VhcuSpecFile(m.vhcu[0].vhcu_id))));
  }
  // A record that does not match the node (its vHCU is on another card):
  // that claim is not adopted, the other one is.
  std::string moved = whole;
  BOOST_REQUIRE(m.vhcu[0].device != m.whole[0].device);
  moved.replace(moved.find("\"parentDevice\": \"" + m.vhcu[0].device + "\""),
                std::string("\"parentDevice\": \"" + m.vhcu[0].device + "\"").size(),
                "\"parentDevice\": \"" + m.whole[0].device + "\"");
  WriteFile(hygon.StatePath(), moved);
  node.Restart();
  auto r = node.preparer->Recover();
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->adopted == 1);
  BOOST_TEST(!dra::CheckpointStore(node.Root()).Read("uid-hv").ok());
  BOOST_TEST(node.Inventory().vhcus.size() == vhcus);
}

// Issue 28, repro 6: the cards are unknown when Recover runs. Nothing is
// adopted then; kubelet's Unprepare of one claim adopts and frees it (no
// "never prepared here" leak), and a tick adopts the other once it reads.
BOOST_AUTO_TEST_CASE(claims_on_cards_unknown_at_start_are_adopted_by_unprepare_or_a_tick) {
  SimDraNode node("k100ai-8.yaml");
  HygonDriverNode hygon(node.Root());
  Migrated m = PrepareWithHygon(node, hygon);
  const size_t vhcus_before = node.Inventory().vhcus.size();
  node.faults->Fail(m.vhcu[0].card);
  node.faults->Fail(m.whole[0].card);
  node.Restart();
  auto r = node.preparer->Recover();
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  BOOST_TEST(r->adopted == 0);
  // Still unknown: Unprepare is an error to retry, and destroys nothing.
  BOOST_TEST(!node.preparer->Unprepare(m.vhcu_ref).ok());
  BOOST_TEST(node.Inventory().vhcus.size() == vhcus_before);

  node.faults->Heal(m.vhcu[0].card);
  node.faults->Heal(m.whole[0].card);
  BOOST_REQUIRE(node.preparer->WriteWholeCardSpec(node.Inventory()).ok());  // the watcher's news
  BOOST_REQUIRE(node.preparer->Unprepare(m.vhcu_ref).ok());
  BOOST_TEST(node.Inventory().vhcus.size() == vhcus_before - 1, "Hygon's vHCU leaked");
  BOOST_TEST(!PathExists(node.Path("/etc/vdev/dynamic/" + m.vhcu[0].mark)));
  auto left = dra::ParseHygonState(ReadFile(hygon.StatePath()));
  BOOST_REQUIRE(left.ok());
  BOOST_REQUIRE_EQUAL(left->size(), 1u);
  BOOST_TEST((*left)[0].uid == "uid-hw");

  dra::RecoverResult tick = node.preparer->Tick();
  BOOST_TEST(tick.adopted == 1);
  BOOST_TEST(dra::CheckpointStore(node.Root()).Read("uid-hw").ok());
  BOOST_TEST(node.preparer->Tick().adopted == 0);  // once
}

// Hygon's file is rewritten before our entry goes; a rewrite that fails
// fails the Unprepare (kubelet retries), so the claim is never adopted
// again at the next start.
BOOST_AUTO_TEST_CASE(a_failed_rewrite_of_hygons_file_keeps_the_entry_until_a_retry) {
  SimDraNode node("k100ai-8.yaml");
  HygonDriverNode hygon(node.Root());
  Migrated m = PrepareWithHygon(node, hygon);
  node.Restart();
  BOOST_REQUIRE(node.preparer->Recover().ok());
  const std::string text = ReadFile(hygon.StatePath());
  BOOST_REQUIRE(std::remove(hygon.StatePath().c_str()) == 0);
  BOOST_REQUIRE(std::filesystem::create_directory(hygon.StatePath()));  // unreadable now
  BOOST_TEST(!node.preparer->Unprepare(m.vhcu_ref).ok());
  BOOST_TEST(dra::CheckpointStore(node.Root()).Read("uid-hv").ok(), "our entry went first");

  std::filesystem::remove(hygon.StatePath());
  WriteFile(hygon.StatePath(), text);
  BOOST_REQUIRE(node.preparer->Unprepare(m.vhcu_ref).ok());
  BOOST_TEST(!dra::CheckpointStore(node.Root()).Read("uid-hv").ok());
  auto left = dra::ParseHygonState(ReadFile(hygon.StatePath()));
  BOOST_REQUIRE(left.ok());
  BOOST_REQUIRE_EQUAL(left->size(), 1u);
  BOOST_TEST((*left)[0].uid == "uid-hw");
  node.Restart();
  auto r = node.preparer->Recover();
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->adopted == 0);
}

}  // namespace
}  // namespace hcudp::testing
