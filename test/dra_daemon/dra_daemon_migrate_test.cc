// A live migration from Hygon's k8s-hcu-dra-driver (issue 25, doc/dra.md):
// the node as that driver leaves it — its vHCUs, marks, CDI specs and
// prepared-state file — is taken over by the REAL hcu-dp-daemon at start:
// the claims stay prepared with Hygon's CDI IDs, nothing leaks, and
// kubelet's Unprepare frees their vHCUs. A state file that cannot be read is
// logged and destroys nothing.
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <thread>

#include "dra/hygon_state.h"
#include "dra_daemon/dra_daemon_node.h"
#include "dra_prepare/hygon_fixture.h"
#include "dra_prepare/prepare_fixture.h"
#include "hcudp/options.h"

namespace hcudp::testing {
namespace {

constexpr char kHygonVhcuSize[] = R"({"cores":"20","memory":"4Gi"})";

struct HygonNode {
  AllocatedClaim vhcu_claim, card_claim;
  std::vector<HygonDriverNode::Device> vhcu, card;
};

// Claims allocated from the node's slices (the names are Hygon's: same
// driver, pool and devices), then prepared by "Hygon's driver" while ours
// is stopped.
HygonNode HandOverFromHygon(DraDaemonNode& n, HygonDriverNode& hygon) {
  n.Start();
  n.RequireDevices([](const auto& d) { return d.size() == 9; }, seconds(5), "9 devices");
  HygonNode h;
  h.vhcu_claim = n.CreateAllocatedClaim("hv", ExactRequest("hcu", kHygonVhcuSize));
  h.card_claim = n.CreateAllocatedClaim("hw", ExactRequest("hcu"));
  n.StopDaemon();
  auto backend = n.SimBackend();
  h.vhcu = hygon.Prepare(*backend, h.vhcu_claim.json);
  h.card = hygon.Prepare(*backend, h.card_claim.json);
  BOOST_REQUIRE(h.vhcu.size() == 1u && !h.vhcu[0].whole_card);
  BOOST_REQUIRE(h.card.size() == 1u && h.card[0].whole_card);
  return h;
}

BOOST_AUTO_TEST_SUITE(dra_daemon_migrate)

BOOST_AUTO_TEST_CASE(a_hygon_driver_node_is_taken_over_with_no_leak,
                     *boost::unit_test::timeout(90)) {
  DraDaemonNode n(kProbeOrder);
  HygonDriverNode hygon(n.h().host_root());
  HygonNode h = HandOverFromHygon(n, hygon);
  const std::vector<Vhcu> before = n.Vhcus();

  n.StartDaemon();
  n.RequireRegistrations(2);
  const std::set<std::string> entries = n.CheckpointEntries();
  BOOST_TEST(entries.count(h.vhcu_claim.uid) == 1u);
  BOOST_TEST(entries.count(h.card_claim.uid) == 1u);
  BOOST_TEST(n.Vhcus().size() == before.size());  // none made, none destroyed
  BOOST_TEST(ReadFile(n.h().log_path()).find("adopted claim " + h.vhcu_claim.uid) !=
             std::string::npos);

  // kubelet prepares again (a container restart after a kubelet restart):
  // the same devices and Hygon's CDI IDs.
  for (const auto& [claim, made] :
       {std::pair{h.vhcu_claim, h.vhcu}, std::pair{h.card_claim, h.card}}) {
    auto devices = n.MustPrepare(claim);
    BOOST_REQUIRE_EQUAL(devices.size(), 1u);
    BOOST_TEST(devices[0].device_name() == made[0].device);
    BOOST_REQUIRE_EQUAL(devices[0].cdi_device_ids_size(), 1);
    BOOST_TEST(devices[0].cdi_device_ids(0) == made[0].cdi_id);
  }
  BOOST_TEST(n.Vhcus().size() == before.size());

  // The pods go: kubelet unprepares; Hygon's vHCU, mark and spec go with it.
  n.MustUnprepare(h.vhcu_claim);
  BOOST_TEST(n.Vhcus().size() == before.size() - 1);
  BOOST_TEST(n.Marks().count(h.vhcu[0].mark) == 0u);
  BOOST_TEST(!PathExists(hygon.CdiPath(hygon.VhcuSpecFile(h.vhcu[0].vhcu_id))));
  n.MustUnprepare(h.card_claim);
  BOOST_TEST(n.Marks().empty());
  BOOST_TEST(n.CheckpointEntries().empty());
  BOOST_TEST(n.Vhcus().size() == before.size() - 1);
  // Hygon's file lists what is still prepared (nothing) for a rollback.
  auto left = dra::ParseHygonState(ReadFile(hygon.StatePath()));
  BOOST_REQUIRE(left.ok());
  BOOST_TEST(left->empty());
  BOOST_TEST(!PathExists(hygon.CdiPath(HygonDriverNode::kCardSpecFile)));
}

BOOST_AUTO_TEST_CASE(a_corrupt_hygon_state_file_is_logged_and_destroys_nothing,
                     *boost::unit_test::timeout(90)) {
  DraDaemonNode n(kProbeOrder);
  HygonDriverNode hygon(n.h().host_root());
  HygonNode h = HandOverFromHygon(n, hygon);
  const std::string text = ReadFile(hygon.StatePath());
  const std::string partial = text.substr(0, text.size() / 2);  // a torn write
  WriteFile(hygon.StatePath(), partial);
  const size_t vhcus = n.Vhcus().size();
  const std::set<std::string> marks = n.Marks();

  n.StartDaemon();
  n.RequireRegistrations(2);
  // A state file that does not read may name any device: the ledger cannot
  // tell who holds what, so nothing is offered until it reads (issue 28).
  std::this_thread::sleep_for(seconds(2));
  BOOST_TEST(!n.Slices().empty(), "no pool published");
  BOOST_TEST(n.Devices().empty(), "devices offered while their holders are unknown");
  const std::string log = ReadFile(n.h().log_path());
  BOOST_TEST(log.find(hygon.StatePath() + " not adopted: Hygon prepared state: file: not valid "
                                          "JSON") != std::string::npos,
             log);
  BOOST_TEST(ReadFile(hygon.StatePath()) == partial);
  BOOST_TEST(n.Vhcus().size() == vhcus);
  BOOST_TEST(n.Marks() == marks);
  BOOST_TEST(n.CheckpointEntries().empty());
  BOOST_TEST(PathExists(hygon.CdiPath(hygon.VhcuSpecFile(h.vhcu[0].vhcu_id))));
  // The admin repairs it: the pool comes back on the next tick.
  WriteFile(hygon.StatePath(), text);
  n.RequireDevices([](const auto& d) { return !d.empty(); }, seconds(5), "devices offered again");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
