// vHCU state that cannot be read is never read as "no vHCUs" (issue 9
// item 2): node files written non-atomically (empty, truncated), /etc/vdev
// swapped for a regular file, the host-root removed. A card whose state is
// unknown keeps its last good vHCUs and is not offered whole; the daemon
// logs the path; it recovers as soon as the files are readable again.
// Every daemon runs with --pulse=0: the recovery is an event, not a pulse.
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <ostream>

#include "integration/daemon_harness.h"

namespace hcudp::testing {
namespace {

namespace fs = std::filesystem;

constexpr milliseconds kEventDeadline{1000};
constexpr milliseconds kLogDeadline{3000};

const char kCard0[] = "0000:0b:00.0";  // z100l-mixed: whole cards 0 and 1,
const char kCard1[] = "0000:0e:00.0";  // vdev0-3 on card 2, vdev4-5 on card 3
const char kCard3[] = "0000:8e:00.0";
const char k15[] = "hygon.com/hcu-share-15c-8g";
const char k30[] = "hygon.com/hcu-share-30c-16g";

// Rewrites `path` in place as a careless writer does (open with O_TRUNC,
// write, close): no temp file, no rename.
void WriteInPlace(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  BOOST_REQUIRE_MESSAGE(out.good(), "cannot open " << path);
  out << text;
}

std::string Conf(DaemonHarness& h, int id) {
  return h.host_root() + "/etc/vdev/vdev" + std::to_string(id) + ".conf";
}

void RequireUnreadableLogged(DaemonHarness& h, const std::string& path) {
  BOOST_REQUIRE_MESSAGE(h.daemon().WaitForLog("cannot read vHCU state " + path + ":", kLogDeadline),
                        "no warning naming " << path);
}

void RequireRecoveryLogged(DaemonHarness& h, const std::string& path) {
  BOOST_REQUIRE_MESSAGE(h.daemon().WaitForLog("vHCU state readable again: " + path, kLogDeadline),
                        "no recovery logged for " << path);
}

// The devices of `resource` as the daemon lists them now.
std::set<std::string> Listed(DaemonHarness& h, const std::string& resource) {
  auto snap = h.kubelet().Snapshot(resource);
  BOOST_REQUIRE_MESSAGE(snap.has_value(), resource << " never registered");
  return Ids(snap->devices);
}

void RequireMixedStart(DaemonHarness& h) {
  h.Start();
  h.RequireIds("hygon.com/hcu", {kCard0, kCard1});
  h.RequireIds(k15, {"vdev0", "vdev1", "vdev2", "vdev3"});
  h.RequireIds(k30, {"vdev4", "vdev5"});
}

BOOST_AUTO_TEST_SUITE(fail_closed)

BOOST_AUTO_TEST_CASE(an_emptied_conf_keeps_its_vhcu_and_recovers_when_rewritten) {
  DaemonHarness h("demo/nodes/z100l-mixed.yaml", {"--pulse=0"});
  RequireMixedStart(h);
  const std::string conf = Conf(h, 4);
  const std::string text = ReadFile(conf);

  WriteInPlace(conf, "");
  RequireUnreadableLogged(h, conf);
  BOOST_TEST(Listed(h, k30) == (std::set<std::string>{"vdev4", "vdev5"}),
             boost::test_tools::per_element());
  BOOST_TEST(Listed(h, "hygon.com/hcu") == (std::set<std::string>{kCard0, kCard1}),
             boost::test_tools::per_element());

  WriteInPlace(conf, text);
  RequireRecoveryLogged(h, conf);
  BOOST_TEST(Listed(h, k30) == (std::set<std::string>{"vdev4", "vdev5"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_card_whose_confs_are_truncated_is_never_offered_whole) {
  DaemonHarness h("demo/nodes/z100l-mixed.yaml", {"--pulse=0"});
  RequireMixedStart(h);
  std::map<int, std::string> texts;
  for (int id : {4, 5}) {
    texts[id] = ReadFile(Conf(h, id));
    WriteInPlace(Conf(h, id), texts[id].substr(0, 20));
  }
  RequireUnreadableLogged(h, Conf(h, 4));
  RequireUnreadableLogged(h, Conf(h, 5));
  BOOST_TEST(Listed(h, "hygon.com/hcu") == (std::set<std::string>{kCard0, kCard1}),
             boost::test_tools::per_element());
  BOOST_TEST(Listed(h, k30) == (std::set<std::string>{"vdev4", "vdev5"}),
             boost::test_tools::per_element());
  v1beta1::AllocateResponse response;
  BOOST_TEST(!h.kubelet().Allocate("hygon.com/hcu", {{kCard3}}, &response).ok(),
             "card 3 allocated whole while its vHCU confs were truncated");

  for (int id : {4, 5}) WriteInPlace(Conf(h, id), texts[id]);
  RequireRecoveryLogged(h, Conf(h, 4));
  RequireRecoveryLogged(h, Conf(h, 5));
}

// A conf that is being written (empty) may belong to any card: no card is
// offered whole until it can be read.
BOOST_AUTO_TEST_CASE(a_half_written_new_conf_withholds_whole_cards_until_complete) {
  DaemonHarness h("demo/nodes/z100l-mixed.yaml", {"--pulse=0"});
  RequireMixedStart(h);
  const std::string conf = Conf(h, 6);
  WriteInPlace(conf, "");
  h.RequireIds("hygon.com/hcu", {}, kEventDeadline);
  BOOST_TEST(Listed(h, k15).size() == 4u);
  BOOST_TEST(Listed(h, k30).size() == 2u);

  WriteInPlace(conf, kZ100lCard0Vdev6Conf);
  h.RequireIds("hygon.com/hcu", {kCard1}, kEventDeadline);
  h.RequireRegistered("hygon.com/hcu-share-20c-4g");
  h.RequireIds("hygon.com/hcu-share-20c-4g", {"vdev6"});
}

BOOST_AUTO_TEST_CASE(a_vdev_directory_swapped_for_a_file_keeps_the_last_good_vhcus) {
  DaemonHarness h("demo/nodes/z100l-mixed.yaml", {"--pulse=0"});
  RequireMixedStart(h);
  const std::string vdev = h.host_root() + "/etc/vdev";
  fs::rename(vdev, vdev + ".away");
  WriteInPlace(vdev, "not a directory\n");
  RequireUnreadableLogged(h, vdev);
  // Any card may carry vHCUs now: none is offered whole; the known vHCUs stay.
  h.RequireIds("hygon.com/hcu", {}, kEventDeadline);
  BOOST_TEST(Listed(h, k15).size() == 4u);
  BOOST_TEST(Listed(h, k30).size() == 2u);

  fs::remove(vdev);
  fs::rename(vdev + ".away", vdev);
  h.RequireIds("hygon.com/hcu", {kCard0, kCard1}, kEventDeadline);
  RequireRecoveryLogged(h, vdev);
}

BOOST_AUTO_TEST_CASE(a_host_root_removed_and_restored_recovers_without_a_node_edit) {
  DaemonHarness h("demo/nodes/z100l-mixed.yaml", {"--pulse=0"});
  RequireMixedStart(h);
  const std::string root = h.host_root();
  fs::rename(root, root + ".away");
  RequireUnreadableLogged(h, root + "/etc/vdev");
  h.RequireIds("hygon.com/hcu", {}, kEventDeadline);
  BOOST_TEST(Listed(h, k15).size() == 4u);
  BOOST_TEST(Listed(h, k30).size() == 2u);

  fs::rename(root + ".away", root);
  h.RequireIds("hygon.com/hcu", {kCard0, kCard1}, kEventDeadline);
  h.RequireIds(k30, {"vdev4", "vdev5"});
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
