// hcu-dp-daemon --strategy=dra against hostile input (issue 23,
// reproductions 3 to 5), from outside: checkpoint entries that do not decode
// (nested 200,000 levels deep, a FIFO) at start and on Unprepare, a
// consumedCapacity larger than the card, claim names and namespaces kubelet
// could never send.
#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <string>

#include "dra_daemon/dra_daemon_node.h"
#include "dra_prepare/prepare_fixture.h"

namespace hcudp::testing {
namespace {

constexpr char kInputSmall[] = R"({"cores":"20","memory":"4Gi"})";
const std::string kInputClaimsPath = "/apis/resource.k8s.io/v1/namespaces/ns1/resourceclaims";

// `text` with the first `key: value` (JSON, with or without the space the
// fake API server writes) replaced by `to`.
std::string InputReplaceMember(std::string text, const std::string& key, const std::string& value,
                               const std::string& to) {
  for (const char* sep : {": ", ":"}) {
    const std::string from = "\"" + key + "\"" + sep + "\"" + value + "\"";
    const size_t at = text.find(from);
    if (at != std::string::npos) return text.replace(at, from.size(), to);
  }
  BOOST_FAIL(key << " " << value << " not in " << text);
  return text;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(dra_daemon_input)

// Reproductions 3 and 4: one entry nested 200,000 levels deep (it crashed
// the daemon in start-up recovery, every restart) and one that became a
// FIFO. The daemon starts and serves, logs both and leaves them; hcuctl
// names them and exits 1; kubelet's Unprepare of each claim succeeds (the
// pods were stuck Terminating), frees its vHCU and sets the entry aside.
BOOST_AUTO_TEST_CASE(undecodable_entries_neither_crash_the_daemon_nor_block_unprepare,
                     *boost::unit_test::timeout(60)) {
  DraDaemonNode n(kProbeOrder);
  n.Start();
  n.RequireDevices([](const auto& d) { return d.size() == 9; }, seconds(5), "9 devices");
  AllocatedClaim deep = n.CreateAllocatedClaim("deep", ExactRequest("hcu", kInputSmall));
  AllocatedClaim fifo = n.CreateAllocatedClaim("fifo", ExactRequest("hcu", kInputSmall));
  AllocatedClaim good = n.CreateAllocatedClaim("good", ExactRequest("hcu", kInputSmall));
  const size_t admin_vhcus = n.Vhcus().size();  // the node's pre-split ones
  for (const auto& c : {deep, fifo, good}) n.MustPrepare(c);
  BOOST_REQUIRE_EQUAL(n.Vhcus().size(), admin_vhcus + 3);
  n.StopDaemon();
  const std::string dir = n.HostPath("/var/lib/hcu-device-plugin/dra/");
  WriteFile(dir + deep.uid + ".json", std::string(200000, '['));
  BOOST_REQUIRE(::unlink((dir + fifo.uid + ".json").c_str()) == 0);
  BOOST_REQUIRE(::mkfifo((dir + fifo.uid + ".json").c_str(), 0644) == 0);

  n.StartDaemon();
  n.RequireRegistrations(2);
  BOOST_TEST(n.h().daemon().WaitForLog("nests deeper than 512 levels", seconds(5)));
  BOOST_TEST(n.h().daemon().WaitForLog("a FIFO, not a regular file", seconds(5)));
  const std::vector<std::string> prepared = {BinaryPath("hcuctl/hcuctl"),
                                             "--host-root=" + n.h().host_root(), "dra", "prepared"};
  RunResult listed = Run(prepared);
  BOOST_TEST(listed.exit_code == 1, listed.out << listed.err);
  BOOST_TEST(listed.out.find(deep.uid + ".json: checkpoint: nests deeper") != std::string::npos,
             listed.out);
  BOOST_TEST(listed.out.find(fifo.uid + ".json: a FIFO") != std::string::npos, listed.out);
  BOOST_TEST(listed.out.find("good") != std::string::npos, listed.out);

  CallOutcome un = n.Unprepare({deep, fifo});
  BOOST_REQUIRE_MESSAGE(un.ok(), un.status.error_message() << un.kubelet_error);
  BOOST_TEST(un.unprepare.claims().at(deep.uid).error() == "");
  BOOST_TEST(un.unprepare.claims().at(fifo.uid).error() == "");
  BOOST_TEST(n.Vhcus().size() == admin_vhcus + 1);  // good's
  BOOST_TEST(n.Marks().size() == 1u);
  BOOST_TEST((n.CheckpointEntries() == std::set<std::string>{good.uid}));
  BOOST_TEST(PathExists(dir + deep.uid + ".json.undecodable"));
  BOOST_TEST(PathExists(dir + fifo.uid + ".json.undecodable"));
  listed = Run(prepared);
  BOOST_TEST(listed.exit_code == 1);
  BOOST_TEST(listed.out.find(deep.uid + ".json.undecodable: set aside") != std::string::npos,
             listed.out);
  n.MustUnprepare(good);
  BOOST_TEST(n.Vhcus().size() == admin_vhcus);
  BOOST_TEST(n.h().daemon().Running());
}

// Reproduction 5: more than the card is refused for that claim, naming the
// card's capacity, and nothing is made; a namespace or name kubelet could
// not send never reaches the API server, and a 1 MiB name makes a short
// error, while the other claims of the call are prepared.
BOOST_AUTO_TEST_CASE(over_capacity_and_bad_names_are_per_claim_errors,
                     *boost::unit_test::timeout(60)) {
  DraDaemonNode n(kProbeOrder);
  n.Start();
  n.RequireDevices([](const auto& d) { return d.size() == 9; }, seconds(5), "9 devices");
  const size_t admin_vhcus = n.Vhcus().size();
  AllocatedClaim big = n.CreateAllocatedClaim("big", ExactRequest("hcu", kInputSmall));
  // The scheduler's consumedCapacity (not the spec's request) says 100000
  // cores and 1 EiB.
  std::string json = big.json;
  const size_t consumed = json.find("\"consumedCapacity\"");
  BOOST_REQUIRE(consumed != std::string::npos);
  json = json.substr(0, consumed) +
         InputReplaceMember(
             InputReplaceMember(json.substr(consumed), "cores", "20", R"("cores":"100000")"),
             "memory", std::to_string(4LL << 30), R"("memory":"1Ei")");
  big.json = n.api().MustRequest("PUT", kInputClaimsPath + "/big/status", json);
  AllocatedClaim ok = n.CreateAllocatedClaim("fine", ExactRequest("hcu"));

  AllocatedClaim huge = ok;
  huge.name = std::string(1 << 20, 'a');
  huge.uid = "uid-huge";
  n.api().ClearRequests();
  CallOutcome out = n.Prepare({big, ok, huge});
  BOOST_REQUIRE_MESSAGE(out.ok(), out.status.error_message() << out.kubelet_error);
  const std::string big_error = out.prepare.claims().at(big.uid).error();
  BOOST_TEST(big_error.find("more than the card has (") != std::string::npos, big_error);
  BOOST_TEST(out.prepare.claims().at(ok.uid).error() == "");
  BOOST_TEST(out.prepare.claims().at(ok.uid).devices_size() == 1);
  const std::string huge_error = out.prepare.claims().at("uid-huge").error();
  BOOST_TEST(huge_error.find("(1048576 bytes) is not a DNS subdomain") != std::string::npos);
  BOOST_TEST(huge_error.size() < 300u);
  BOOST_TEST(n.Vhcus().size() == admin_vhcus);
  BOOST_TEST(n.Marks().size() == 1u);  // the whole card of "fine"

  drav1::Claim bad_ns;
  bad_ns.set_namespace_("..");
  bad_ns.set_name("x");
  bad_ns.set_uid("uid-dots");
  CallOutcome dotted = n.kubelet().NodePrepareResources(kDraDriver, {bad_ns});
  BOOST_REQUIRE(dotted.ok());
  BOOST_TEST(dotted.prepare.claims()
                 .at("uid-dots")
                 .error()
                 .find("claim namespace \"..\" is not a DNS label") != std::string::npos);
  for (const FakeRequest& r : n.api().Requests()) {
    BOOST_TEST(r.path.find("..") == std::string::npos, r.path);
    BOOST_TEST(r.path.find("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa") ==
                   std::string::npos,
               r.path.substr(0, 128));
  }
  BOOST_TEST(n.h().daemon().Log().size() < 200000u);  // the 1 MiB name was never logged
  n.MustUnprepare(ok);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace hcudp::testing
