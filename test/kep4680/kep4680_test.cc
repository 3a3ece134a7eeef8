// KEP-4680 readiness (issue 15 item 5, reference/ops.md §4): kubelet copies
// each ListAndWatch device's health into the pod's allocatedResourcesStatus,
// keyed by the device ID. So when a card fails, every ID derived from it —
// the card itself, its vHCUs, its MIG instances, its HAMi hcunum "fake" IDs
// and its share of hcucores — must turn Unhealthy, every other ID must stay
// Healthy, and no ID may change. One case per strategy, on the SimNodes, with
// --pulse=0 so that the change has to arrive promptly as an event: a node
// file change on the sim backend, an RSMI event on the host backend.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <map>
#include <ostream>

#include "integration/hami_node.h"
#include "testing/sanitizer.h"

namespace hcudp::testing {
namespace {

using IdsByResource = std::map<std::string, std::set<std::string>>;

struct FailCase {
  std::string label;
  std::string node;
  std::vector<std::string> flags;
  int card = 0;  // SimNode index of the card that fails
  // Every resource the strategy registers, with the IDs derived from `card`
  // (possibly none): exactly these must turn Unhealthy.
  IdsByResource derived;
};

std::ostream& operator<<(std::ostream& os, const FailCase& c) { return os << c.label; }

std::set<std::string> Range(int from, int to) {  // "from" .. "to - 1"
  std::set<std::string> ids;
  for (int i = from; i < to; ++i) ids.insert(std::to_string(i));
  return ids;
}

std::set<std::string> FakeIds(const std::string& serial, int split) {
  std::set<std::string> ids;
  for (int i = 0; i < split; ++i) ids.insert(serial + "-fake-" + std::to_string(i));
  return ids;
}

const FailCase kCases[] = {
    {"hcu: the card",
     "demo/nodes/k100ai-8.yaml",
     {"--strategy=hcu"},
     3,
     {{"hygon.com/hcu", {"0000:69:00.0"}}}},
    {"vhcu: the card's four vHCUs",
     "demo/nodes/z100l-mixed.yaml",
     {"--strategy=vhcu"},
     2,
     {{"hygon.com/hcu-share-15c-8g", {"vdev0", "vdev1", "vdev2", "vdev3"}},
      {"hygon.com/hcu-share-30c-16g", {}}}},
    {"mixed: the card's vHCUs, no whole card",
     "demo/nodes/z100l-mixed.yaml",
     {"--strategy=mixed"},
     3,
     {{"hygon.com/hcu", {}},
      {"hygon.com/hcu-share-15c-8g", {}},
      {"hygon.com/hcu-share-30c-16g", {"vdev4", "vdev5"}}}},
    {"mixed: a whole card",
     "demo/nodes/z100l-mixed.yaml",
     {"--strategy=mixed"},
     0,
     {{"hygon.com/hcu", {"0000:0b:00.0"}},
      {"hygon.com/hcu-share-15c-8g", {}},
      {"hygon.com/hcu-share-30c-16g", {}}}},
    {"mig: the card's instances of two profiles",
     "demo/nodes/bw-mig.yaml",
     {"--strategy=mig"},
     3,
     {{"hygon.com/hcu-mig-2g-15gb", {"MIG-a170b338-3926-4059-b28c-105d1fb17c23"}},
      {"hygon.com/hcu-mig-4g-31gb", {"MIG-0fd630f1-f29d-4da9-953f-48f1a09f76b5"}},
      {"hygon.com/hcu-mig-8g-63gb", {}}}},
};

// Waits until each resource lists exactly `unhealthy` as its Unhealthy IDs,
// and returns every resource's IDs at that point.
IdsByResource RequireUnhealthy(DaemonHarness& h, const IdsByResource& unhealthy) {
  IdsByResource ids;
  for (const auto& entry : unhealthy) {
    // Named, not a structured binding: the lambda below captures it (C++17).
    const std::string& resource = entry.first;
    const std::set<std::string>& bad = entry.second;
    auto seen = h.kubelet().WaitForDevices(
        resource,
        [&](const std::vector<v1beta1::Device>& devices) {
          std::set<std::string> now;
          for (const auto& d : devices) {
            if (d.health() != "Healthy") now.insert(d.id());
          }
          return now == bad;
        },
        // What this test asserts is which IDs turn Unhealthy, not how fast (the
        // benches and the health tests bound that): under ASan with the stand-in
        // vendor libraries on a loaded machine 5 s was once too short.
        kHealthTimeout * kSanitizerSlowdown);
    BOOST_REQUIRE_MESSAGE(seen.has_value(), resource << ": the Unhealthy IDs never became exactly "
                                                     << bad.size() << " expected ones");
    for (const auto& d : seen->devices) {
      BOOST_TEST((d.health() == "Healthy" || d.health() == "Unhealthy"), d.health());
    }
    ids[resource] = Ids(seen->devices);
  }
  return ids;
}

// On --backend=host nothing watches the SimNode file the stand-in libraries
// answer from (a real node has no such file): the change is announced the
// way a real runtime does, with an RSMI event (GPU reset, 3) through the
// stand-in's control file. The sim backend sees the file change itself.
class Announcer {
 public:
  std::vector<std::string> Env() const {
    if (!UsingHostBackend()) return {};
    return {"HCUDP_STUB_CONTROL=" + control_};
  }
  void Announce(int card) {
    if (!UsingHostBackend()) return;
    WriteFile(control_,
              "rsmi_event=" + std::to_string(++seq_) + ":" + std::to_string(card) + ":3\n");
  }

 private:
  TempDir dir_;
  std::string control_ = dir_.Join("control");
  int seq_ = 0;
};

// Fails card `card`, checks the derived IDs go Unhealthy with stable IDs,
// heals it and checks they all come back.
void FailAndHeal(DaemonHarness& h, Announcer& announcer, int card, const IdsByResource& derived) {
  IdsByResource before;
  IdsByResource none;
  for (const auto& [resource, bad] : derived) {
    before[resource] = Ids(h.RequireRegistered(resource).devices);
    none[resource] = {};
    for (const std::string& id : bad) BOOST_REQUIRE_MESSAGE(before[resource].count(id), id);
  }
  RequireUnhealthy(h, none);

  h.SetCardHealth(card, "Unhealthy");
  announcer.Announce(card);
  IdsByResource failed = RequireUnhealthy(h, derived);
  BOOST_TEST(failed == before);  // the same IDs, only their health changed

  h.SetCardHealth(card, "Healthy");
  announcer.Announce(card);
  IdsByResource healed = RequireUnhealthy(h, none);
  BOOST_TEST(healed == before);
}

BOOST_AUTO_TEST_SUITE(kep4680)

BOOST_DATA_TEST_CASE(every_id_derived_from_a_failed_card_turns_unhealthy,
                     boost::unit_test::data::make(kCases), c) {
  std::vector<std::string> flags = c.flags;
  flags.push_back("--pulse=0");
  Announcer announcer;
  DaemonHarness h(c.node, flags, announcer.Env());
  h.Start();
  FailAndHeal(h, announcer, c.card, c.derived);
}

BOOST_AUTO_TEST_CASE(hami_the_cards_hcunum_ids_and_its_share_of_hcucores_turn_unhealthy) {
  Announcer announcer;
  HamiNode n({"--pulse=0", "--resource-multiple=true"}, announcer.Env());
  n.Start();
  // k100ai-8 card 1: its four fake IDs and hcucores 100..199 (100 a card,
  // in card order, as the vendor numbers them).
  FailAndHeal(n.h(), announcer, 1,
              {{kHamiCount, FakeIds(kSn1, 4)}, {"hygon.com/hcucores", Range(100, 200)}});
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
