// Issue 29 item 5: Hygon's prepared-state file as migration input.
//   - It is read only as a regular file, opened without blocking: a FIFO (or
//     any special file) at its path must not hold Recover, and with it the
//     DRA daemon's start, for ever.
//   - A vHCU index recorded by two claims (left by an older bug of Hygon's
//     driver, which its own code expects) rejects those claims only; the
//     others are adopted.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <filesystem>
#include <future>
#include <string>
#include <thread>

#include "dra/hygon_state.h"
#include "dra_prepare/hygon_fixture.h"
#include "dra_prepare/prepare_fixture.h"
#include "hcudp/dra/checkpoint.h"

namespace hcudp::testing {
namespace {

using std::chrono::milliseconds;

// A vHCU device of claim `uid` as Hygon's driver records it.
std::string VhcuDevice(const std::string& uid, int vdev, int card = 0) {
  const std::string v = std::to_string(vdev);
  const std::string c = std::to_string(card);
  return R"({"claimUID":")" + uid +
         R"(","parentDevice":"hcu-0000-09-00-0","requestName":"hcu","poolName":"node-a",)"
         R"("wholeCard":false,"vdvInd":)" +
         v + R"(,"cdiDeviceID":"dra.hygon.com/vhcu=vdev)" + v +
         R"(","dynamicMarkFile":"pod-1_main_)" + c + "_" + v + R"(","podUID":"pod-1","dvInd":)" +
         c + "}";
}

BOOST_AUTO_TEST_SUITE(hygon_state_input)

BOOST_AUTO_TEST_CASE(a_duplicated_vhcu_index_rejects_only_the_claims_that_record_it) {
  const std::string text = R"({"prepared":{"c-1":[)" + VhcuDevice("c-1", 3) + R"(],"c-2":[)" +
                           VhcuDevice("c-2", 3) + R"(],"c-3":[)" + VhcuDevice("c-3", 4) +
                           R"(],"c-4":[)" + VhcuDevice("c-4", 5) + "," + VhcuDevice("c-4", 5) +
                           "]}}";
  auto claims = dra::ParseHygonState(text);
  BOOST_REQUIRE_MESSAGE(claims.ok(), claims.status().ToString());
  BOOST_REQUIRE_EQUAL(claims->size(), 4u);
  const auto& c = *claims;  // sorted by UID
  BOOST_TEST(c[0].uid == "c-1");
  BOOST_TEST(c[0].rejected.find("vdvInd: vHCU 3 is also recorded at prepared[\"c-2\"][0]") !=
                 std::string::npos,
             c[0].rejected);
  BOOST_TEST(
      c[1].rejected.find("vHCU 3 is also recorded at prepared[\"c-1\"][0]") != std::string::npos,
      c[1].rejected);
  BOOST_TEST(c[2].rejected.empty(), c[2].rejected);
  BOOST_TEST(c[2].devices.size() == 1u);
  // Twice in one claim: that claim.
  BOOST_TEST(
      c[3].rejected.find("vHCU 5 is also recorded at prepared[\"c-4\"][1]") != std::string::npos,
      c[3].rejected);
  // A rejected claim keeps its devices: it is still Hygon's, not gone.
  BOOST_TEST(c[0].devices.size() == 1u);
}

BOOST_AUTO_TEST_CASE(the_state_file_is_read_only_as_a_regular_file_without_blocking) {
  TempDir dir;
  const std::string fifo = dir.Join("state");
  BOOST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const auto start = std::chrono::steady_clock::now();
  auto got = dra::ReadHygonState(fifo);
  BOOST_TEST((std::chrono::steady_clock::now() - start < milliseconds(500)));
  BOOST_REQUIRE(!got.ok());
  BOOST_TEST((got.status().code() == StatusCode::kFailedPrecondition));
  BOOST_TEST(
      std::string(got.status().message()).find(fifo + ": not a regular file") != std::string::npos,
      got.status().message());

  BOOST_TEST((dra::ReadHygonState(dir.path()).status().code() == StatusCode::kFailedPrecondition));
  BOOST_TEST((dra::ReadHygonState(dir.Join("none")).status().code() == StatusCode::kNotFound));
  WriteFile(dir.Join("file"), R"({"prepared":{}})");
  BOOST_TEST(*dra::ReadHygonState(dir.Join("file")) == R"({"prepared":{}})");
  WriteFile(dir.Join("big"), std::string(dra::kMaxHygonStateBytes + 1, ' '));
  BOOST_TEST(
      (dra::ReadHygonState(dir.Join("big")).status().code() == StatusCode::kInvalidArgument));
}

// Recover with a FIFO at the state file's path returns, adopts nothing and
// leaves the FIFO. (On main, it blocked in open() until a writer came: the
// test then opens the FIFO's write end itself, so that it can end.)
BOOST_AUTO_TEST_CASE(recover_is_not_held_by_a_fifo_at_the_state_path) {
  SimDraNode node("k100ai-8.yaml");
  HygonDriverNode hygon(node.Root());
  const std::string path = hygon.StatePath();
  std::filesystem::create_directories(node.Path("/var/run/cdi"));
  BOOST_REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
  node.Restart();
  auto recovered = std::async(std::launch::async, [&] { return node.preparer->Recover(); });
  const bool returned = recovered.wait_for(std::chrono::seconds(3)) == std::future_status::ready;
  if (!returned) {
    const int w = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (w >= 0) ::close(w);
  }
  auto r = recovered.get();
  BOOST_TEST(returned, "Recover was held by a FIFO at " << path);
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  BOOST_TEST(r->adopted == 0);
  struct stat st {};
  BOOST_TEST((::lstat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode)));
}

// Against a node Hygon's driver prepared: a third claim that records the
// vHCU of the first one. Those two are left to Hygon (not adopted, nothing
// destroyed); the whole-card claim is adopted.
BOOST_AUTO_TEST_CASE(recover_adopts_the_claims_a_duplicate_does_not_involve) {
  SimDraNode node("k100ai-8.yaml");
  HygonDriverNode hygon(node.Root());
  auto v = node.allocator->Allocate(
      ClaimJson("uid-hv", "hv",
                "[" + ExactRequest("hcu", R"({"cores":"20","memory":"4Gi"})") + "]"),
      "pod-hv");
  BOOST_REQUIRE_MESSAGE(v.ok(), v.status().ToString());
  node.claims.Put(*v);
  const auto vhcu = hygon.Prepare(*node.backend, *v);
  auto w = node.allocator->Allocate(ClaimJson("uid-hw", "hw", "[" + ExactRequest("hcu") + "]"),
                                    "pod-hw");
  BOOST_REQUIRE_MESSAGE(w.ok(), w.status().ToString());
  node.claims.Put(*w);
  hygon.Prepare(*node.backend, *w);
  BOOST_REQUIRE_EQUAL(vhcu.size(), 1u);
  BOOST_REQUIRE(!vhcu[0].whole_card);

  // uid-dup records uid-hv's vHCU too.
  std::string text = ReadFile(hygon.StatePath());
  const size_t open = text.find("\"prepared\": {") + std::string("\"prepared\": {").size();
  text.insert(open,
              R"("uid-dup": [)" + VhcuDevice("uid-dup", vhcu[0].vhcu_id, vhcu[0].card) + "],");
  WriteFile(hygon.StatePath(), text);
  const size_t vhcus = node.Inventory().vhcus.size();

  node.Restart();
  auto r = node.preparer->Recover();
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  BOOST_TEST(r->adopted == 1);
  dra::CheckpointStore store(node.Root());
  BOOST_TEST(store.Read("uid-hw").ok());
  BOOST_TEST(!store.Read("uid-hv").ok());
  BOOST_TEST(!store.Read("uid-dup").ok());
  BOOST_TEST(node.Inventory().vhcus.size() == vhcus);  // nothing destroyed
  BOOST_TEST(PathExists(node.Path("/etc/vdev/dynamic/" + vhcu[0].mark)));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
