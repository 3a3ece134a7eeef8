// Hostile DRA input (issue 23): checkpoint entries that are not regular
// files, nest 200,000 levels deep, are corrupt or of a newer format; an
// Unprepare whose entry does not decode; consumedCapacity larger than the
// card; claim names and namespaces that break the Kubernetes name rules.
#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <string>

#include "dra_prepare/prepare_fixture.h"
#include "hcudp/dra/checkpoint.h"

namespace hcudp::testing {
namespace {

const std::string kEntryDir = "/var/lib/hcu-device-plugin/dra";

std::string Deep(size_t levels) { return std::string(levels, '['); }

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

BOOST_AUTO_TEST_SUITE(dra_input)

BOOST_AUTO_TEST_CASE(entries_that_are_not_regular_files_are_named_and_left_in_place) {
  TempDir root;
  dra::CheckpointStore store(root.path());
  BOOST_REQUIRE(store.Write(SamplePreparedClaim()).ok());
  const std::string fifo = store.dir() + "/f1.json";
  const std::string dir = store.dir() + "/d1.json";
  const std::string zero = store.dir() + "/z1.json";
  BOOST_REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  BOOST_REQUIRE(::mkdir(dir.c_str(), 0755) == 0);
  BOOST_REQUIRE(::symlink("/dev/zero", zero.c_str()) == 0);
  std::vector<std::string> bad;
  auto all = store.ReadAll(&bad);  // never opens the FIFO: does not block
  BOOST_REQUIRE(all.ok());
  BOOST_TEST(all->size() == 1u);
  BOOST_REQUIRE_EQUAL(bad.size(), 3u);
  BOOST_TEST(bad[0] == dir + ": a directory, not a regular file");
  BOOST_TEST(bad[1] == fifo + ": a FIFO, not a regular file");
  BOOST_TEST(bad[2] == zero + ": a symbolic link, not a regular file");
  BOOST_TEST(PathExists(fifo));
  BOOST_TEST(PathExists(dir));
  BOOST_TEST(PathExists(zero));
  auto one = store.Read("f1");
  BOOST_TEST((one.status().code() == StatusCode::kFailedPrecondition));
  BOOST_TEST(dra::IsUndecodableEntry(one.status()));
  BOOST_TEST((store.Read("z1").status().code() == StatusCode::kFailedPrecondition));
}

BOOST_AUTO_TEST_CASE(deep_oversized_and_future_entries_are_refused_before_parsing) {
  // RapidJSON recurses per level: 200,000 levels overflowed the stack.
  auto deep = dra::DecodePreparedClaim(Deep(200000));
  BOOST_TEST(deep.status().message() == "checkpoint: nests deeper than 512 levels");
  auto big = dra::DecodePreparedClaim(std::string(dra::kMaxCheckpointEntryBytes + 1, ' '));
  BOOST_TEST(Contains(big.status().message(), "larger than 1048576 bytes"));
  std::string future = dra::EncodePreparedClaim(SamplePreparedClaim());
  future.replace(future.find("\"version\": 1"), 12, "\"version\": 2");
  auto newer = dra::DecodePreparedClaim(future);
  BOOST_TEST(Contains(newer.status().message(), "version: 2 is newer than this release's 1"));
  // What Recover would GET follows the name rules.
  dra::PreparedClaim dotted = SamplePreparedClaim();
  dotted.namespace_name = "..";
  auto refused = dra::DecodePreparedClaim(dra::EncodePreparedClaim(dotted));
  BOOST_TEST(refused.status().message() ==
             "claim namespace \"..\" is not a DNS label (lower-case "
             "letters, digits and '-', starting and ending with a "
             "letter or digit, at most 63)");
  auto claim = dra::ParseResourceClaim(Deep(200000), "dra.hygon.com");
  BOOST_TEST(Contains(claim.status().message(), "nests deeper than 512 levels"));

  TempDir root;
  dra::CheckpointStore store(root.path());
  WriteFile(store.dir() + "/deep1.json", Deep(200000));
  WriteFile(store.dir() + "/new1.json", future);
  std::vector<std::string> bad;
  auto all = store.ReadAll(&bad);
  BOOST_REQUIRE(all.ok());
  BOOST_REQUIRE_EQUAL(bad.size(), 2u);
  BOOST_TEST(Contains(bad[0], "deep1.json: checkpoint: nests deeper than 512 levels"));
  BOOST_TEST(Contains(bad[1], "new1.json: checkpoint field version: 2 is newer"));
}

BOOST_AUTO_TEST_CASE(recover_logs_and_keeps_a_deep_entry_and_the_daemon_goes_on) {
  SimDraNode node("k100ai-8.yaml");
  const std::string deep = node.Path(kEntryDir + "/deep1.json");
  WriteFile(deep, Deep(200000));
  auto r = node.preparer->Recover();
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  BOOST_REQUIRE_EQUAL(r->bad_entries.size(), 1u);
  BOOST_TEST(Contains(r->bad_entries[0], "nests deeper than 512 levels"));
  BOOST_TEST(PathExists(deep));
  auto ref = node.AllocateAndStore(ClaimJson("uid-w", "w", "[" + ExactRequest("hcu") + "]"), "pw");
  auto a = node.preparer->Prepare(ref);
  BOOST_TEST((a.ok() && a->error.empty()));
}

// What each way of not decoding leaves at <uid>.json.
enum class Broken { kCorrupt, kFuture, kDeep, kFifo };

void Break(const std::string& path, Broken how) {
  std::string text = ReadFile(path);
  BOOST_REQUIRE(::unlink(path.c_str()) == 0);
  switch (how) {
    case Broken::kCorrupt:
      WriteFile(path, text.substr(0, text.size() / 2));  // a torn write
      break;
    case Broken::kFuture:
      text.replace(text.find("\"version\": 1"), 12, "\"version\": 7");
      WriteFile(path, text);
      break;
    case Broken::kDeep:
      WriteFile(path, Deep(200000));
      break;
    case Broken::kFifo:
      BOOST_REQUIRE(::mkfifo(path.c_str(), 0644) == 0);
      break;
  }
}

BOOST_AUTO_TEST_CASE(unprepare_of_an_undecodable_entry_releases_what_is_proven_and_answers) {
  for (Broken how : {Broken::kCorrupt, Broken::kFuture, Broken::kDeep, Broken::kFifo}) {
    BOOST_TEST_CONTEXT("broken " << static_cast<int>(how)) {
      SimDraNode node("k100ai-8.yaml");
      BOOST_REQUIRE(node.preparer->Recover().ok());
      const std::string small = R"({"cores":"20","memory":"4Gi"})";
      // Reserved for a pod: its vHCU is proven by the claim's CDI spec.
      auto pod_claim = node.AllocateAndStore(
          ClaimJson("uid-p", "p", "[" + ExactRequest("hcu", small) + "]"), "pod-p");
      // Reserved for no pod: its marks name the claim UID.
      auto own_claim = node.AllocateAndStore(
          ClaimJson("uid-o", "o", "[" + ExactRequest("hcu", small) + "]"), "");
      // A bystander whose entry decodes: untouched.
      auto other = node.AllocateAndStore(
          ClaimJson("uid-x", "x", "[" + ExactRequest("hcu", small) + "]"), "pod-x");
      for (const auto& ref : {pod_claim, own_claim, other}) {
        auto a = node.preparer->Prepare(ref);
        BOOST_REQUIRE(a.ok() && a->error.empty());
      }
      BOOST_REQUIRE_EQUAL(node.Inventory().vhcus.size(), 3u);
      for (const auto& ref : {pod_claim, own_claim}) {
        Break(node.Path(kEntryDir + "/" + ref.uid + ".json"), how);
        node.Restart();  // what a restarted daemon meets
        auto r = node.preparer->Recover();
        BOOST_REQUIRE(r.ok());
        BOOST_TEST(!r->bad_entries.empty());
        Status st = node.preparer->Unprepare(ref);
        BOOST_TEST(st.ok(), st.ToString());
        BOOST_TEST(!PathExists(node.Path(kEntryDir + "/" + ref.uid + ".json")));
        BOOST_TEST(PathExists(node.Path(kEntryDir + "/" + ref.uid + ".json.undecodable")));
        BOOST_TEST(!PathExists(node.Path("/var/run/cdi/dra.hygon.com-vhcu_" + ref.uid + ".json")));
        BOOST_TEST(node.preparer->Unprepare(ref).ok());  // kubelet's retry: nothing left
      }
      NodeInventory inv = node.Inventory();
      BOOST_REQUIRE_EQUAL(inv.vhcus.size(), 1u);  // the bystander's
      auto marks = node.Files("/etc/vdev/dynamic");
      BOOST_REQUIRE_EQUAL(marks.size(), 1u);
      BOOST_TEST(marks[0].rfind("pod-x_", 0) == 0u);
      BOOST_TEST(PathExists(node.Path("/var/run/cdi/dra.hygon.com-vhcu_uid-x.json")));
      // An admin sees both set-aside entries; the bystander stays prepared.
      dra::CheckpointStore store(node.Root());
      std::vector<std::string> bad;
      auto all = store.ReadAll(&bad);
      BOOST_REQUIRE(all.ok());
      BOOST_TEST(all->size() == 1u);
      BOOST_REQUIRE_EQUAL(bad.size(), 2u);
      BOOST_TEST(Contains(bad[0], "uid-o.json.undecodable: set aside by an Unprepare"));
      BOOST_TEST(Contains(bad[1], "uid-p.json.undecodable: set aside by an Unprepare"));
    }
  }
}

BOOST_AUTO_TEST_CASE(consumed_capacity_larger_than_the_card_is_a_per_claim_error) {
  SimDraNode node("k100ai-8.yaml");
  BOOST_REQUIRE(node.preparer->Recover().ok());
  auto allocated = node.allocator->Allocate(
      ClaimJson("uid-big", "big",
                "[" + ExactRequest("hcu", R"({"cores":"20","memory":"4Gi"})") + "]"),
      "pod-big");
  BOOST_REQUIRE(allocated.ok());
  std::string json = *allocated;
  const std::string cores = "\"cores\":\"20\"";
  const std::string memory = "\"memory\":\"" + std::to_string(4LL << 30) + "\"";
  const size_t at = json.find("\"consumedCapacity\"");
  BOOST_REQUIRE(at != std::string::npos);
  json.replace(json.find(cores, at), cores.size(), "\"cores\":\"100000\"");
  json.replace(json.find(memory, at), memory.size(), "\"memory\":\"1Ei\"");
  node.claims.Put(json);
  auto a = node.preparer->Prepare({"ns1", "big", "uid-big"});
  BOOST_REQUIRE_MESSAGE(a.ok(), a.status().ToString());
  BOOST_TEST(a->devices.empty());
  BOOST_TEST(Contains(a->error, "100000 cores and 1152921504606846976 bytes"), a->error);
  BOOST_TEST(
      Contains(a->error, "more than the card has (120 cores, 68702699520 bytes = 65520 MiB)"),
      a->error);
  BOOST_TEST(node.Files(kEntryDir).empty());
  BOOST_TEST(node.Files("/etc/vdev/dynamic").empty());
}

BOOST_AUTO_TEST_CASE(claim_names_breaking_the_kubernetes_rules_never_reach_the_api) {
  SimDraNode node("k100ai-8.yaml");
  BOOST_REQUIRE(node.preparer->Recover().ok());
  const std::string huge(1 << 20, 'a');
  struct Case {
    dra::ClaimRef ref;
    std::string says;
  };
  for (const Case& c :
       std::vector<Case>{{{"..", "c", "uid-1"}, "claim namespace \"..\" is not a DNS label"},
                         {{"ns1", "../../nodes/x", "uid-1"},
                          "claim name \"../../nodes/x\" is not a DNS subdomain"},
                         {{"ns1", huge, "uid-1"}, "(1048576 bytes) is not a DNS subdomain"},
                         {{huge, "c", "uid-1"}, "(1048576 bytes) is not a DNS label"},
                         {{"ns1", "c", "a/b"}, "only [A-Za-z0-9-]"}}) {
    auto a = node.preparer->Prepare(c.ref);
    BOOST_TEST((a.status().code() == StatusCode::kInvalidArgument));
    BOOST_TEST(Contains(a.status().message(), c.says), a.status().message());
    BOOST_TEST(a.status().message().size() < 300u);
    Status un = node.preparer->Unprepare(c.ref);
    BOOST_TEST((un.code() == StatusCode::kInvalidArgument));
    BOOST_TEST(un.message().size() < 300u);
  }
  BOOST_TEST(node.claims.gets.load() == 0);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
