// HAMi's node registration by the one offer rule (issue 28, repro 3), from
// outside: the real daemon in HAMi mode, the fake API server playing the
// scheduler. Unknown vHCU state is never free capacity, and an admin's
// pre-split vHCUs are not offered to a scheduler that counts only pods.
#include <boost/test/unit_test.hpp>
#include <string>

#include "integration/hami_node.h"

namespace hcudp::testing {
namespace {

std::string CardRecord(HamiNode& n, const std::string& annotation, const std::string& serial) {
  const std::string list = n.NodeAnnotations()[annotation];
  const size_t at = list.find(serial + ",");
  if (at == std::string::npos) return "";
  return list.substr(at, list.find(':', at) - at);
}

BOOST_AUTO_TEST_SUITE(hami_offer)

// A power cut emptied a running pod's vdevN.conf; the daemon restarts. Main
// registered card 0 as wholly free again in the remaining list (count 4,
// 65520 MiB, 100 %) though the pod, its vHCU and its mark were still there.
BOOST_AUTO_TEST_CASE(a_torn_conf_after_a_restart_gives_no_capacity_back) {
  HamiNode n;
  n.Start();
  n.SchedulePod({"live", {{"main", std::string(kSn0) + ",HCU,8192,30:"}}});
  n.MustAllocate(1);
  n.SetPhase("live", "Running");
  BOOST_REQUIRE_EQUAL(n.Confs().size(), 1u);
  const std::string conf = *n.Confs().begin();

  n.h().daemon().Stop();
  WriteFile(n.HostPath("/etc/vdev/" + conf), "");  // torn by a power cut
  BOOST_REQUIRE_EQUAL(n.h().daemon().Start(n.h().argv(), n.h().log_path(), {}, DaemonEnvVars()),
                      "");
  n.h().RequireRegistered(kHamiCount, 2);
  BOOST_TEST(WaitUntil([&] {
               return CardRecord(n, "hygon.com/node-hcu-register", kSn0)
                          .rfind(std::string(kSn0) + ",0,0,0,", 0) == 0;
             }),
             CardRecord(n, "hygon.com/node-hcu-register", kSn0));
  // The vHCU and its mark are kept.
  BOOST_TEST(n.Confs().size() == 1u);
  BOOST_TEST(n.Marks().size() == 1u);
}

// An admin's four pre-split vHCUs fill card 0. Main registered it whole in
// the list HAMi's scheduler reads (count 4, 65520 MiB, 100 %), so every pod
// placed there failed its Allocate.
BOOST_AUTO_TEST_CASE(pre_split_vhcus_that_fill_a_card_leave_nothing_in_the_full_list) {
  HamiNode n({}, {}, "test/fixtures/k100ai-2-presplit.yaml");
  n.Start();
  BOOST_TEST(WaitUntil([&] {
               return CardRecord(n, "hami.io/node-hcu-register", kSn0)
                          .rfind(std::string(kSn0) + ",0,0,0,", 0) == 0;
             }),
             CardRecord(n, "hami.io/node-hcu-register", kSn0));
  BOOST_TEST(
      CardRecord(n, "hygon.com/node-hcu-register", kSn0).rfind(std::string(kSn0) + ",0,0,0,", 0) ==
          0,
      CardRecord(n, "hygon.com/node-hcu-register", kSn0));
  // Card 1 carries nothing: whole.
  BOOST_TEST(CardRecord(n, "hami.io/node-hcu-register", kSn1)
                     .rfind(std::string(kSn1) + ",4,65520,100,", 0) == 0,
             CardRecord(n, "hami.io/node-hcu-register", kSn1));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
