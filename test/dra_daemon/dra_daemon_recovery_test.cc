// hcu-dp-daemon --strategy=dra when things go wrong (issue 14): kill -9
// inside Prepare (the test copy hcu-dp-daemon-crashpoints SIGKILLs itself
// after a given step), a reboot (CDI directory wiped, new boot ID), the API
// server down, slow or silent during Prepare and at start, and claims
// deleted while the daemon was down.
#include <boost/test/unit_test.hpp>
#include <csignal>
#include <filesystem>
#include <thread>

#include "dra_daemon/dra_daemon_node.h"
#include "dra_prepare/prepare_fixture.h"
#include "hcudp/vhcu_lock.h"

namespace hcudp::testing {
namespace {

namespace fs = std::filesystem;

constexpr char kSmall[] = R"({"cores":"20","memory":"4Gi"})";

std::string CrashBinary() { return BinaryPath("test/integration/hcu-dp-daemon-crashpoints"); }

std::set<std::string> VhcuKeys(const std::vector<Vhcu>& vhcus) {
  std::set<std::string> out;
  for (const Vhcu& v : vhcus) {
    out.insert("vdev" + std::to_string(v.id) + "@" + v.card_bdf + "/" +
               std::to_string(v.compute_units) + "cu/" + std::to_string(v.memory_mib) + "MiB");
  }
  return out;
}

std::string Join(const std::set<std::string>& s) {
  std::string out;
  for (const auto& x : s) out += " " + x;
  return out;
}

bool IsClaimList(const FakeRequest& r) {
  return r.method == "GET" && r.path.size() >= 15 &&
         r.path.compare(r.path.size() - 15, 15, "/resourceclaims") == 0;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(dra_daemon_recovery)

// kill -9 after each step of a Prepare that creates a vHCU, with an admin's
// vHCU on the node: the restarted daemon undoes the half-made claim before
// it serves (no vHCU, mark, intent or checkpoint entry left; a claim whose
// entry was already durably "prepared" is kept as it is), never touches the
// admin's vHCU, and kubelet's retry then prepares the claim exactly once.
BOOST_AUTO_TEST_CASE(kill_9_inside_prepare_leaks_nothing, *boost::unit_test::timeout(90)) {
  BOOST_REQUIRE_MESSAGE(PathExists(CrashBinary()), "no " << CrashBinary());
  DraDaemonNode n(kProbeOrder);
  n.Start();
  n.RequireDevices([](const auto& d) { return d.size() == 9; }, seconds(5), "9 devices");
  RunResult admin = Run({BinaryPath("hcuctl/hcuctl"), "--backend=sim",
                         "--sim-node=" + n.h().node_path(), "--host-root=" + n.h().host_root(),
                         "vhcu", "create", "--card", "6", "--cu", "20", "--mem-mib", "4096"});
  BOOST_REQUIRE_MESSAGE(admin.exit_code == 0, admin.out << admin.err);
  const std::set<std::string> before = VhcuKeys(n.Vhcus());
  int registrations = 1;
  int round = 0;
  for (const char* step : {"intent-recorded", "vhcu-created", "mark-written", "dra-device-made",
                           "dra-claim-spec", "dra-prepared"}) {
    BOOST_TEST_CONTEXT("crash after " << step) {
      n.StopDaemon();
      n.StartDaemon(CrashBinary(), {std::string("HCUDP_TEST_ONLY_CRASH_AFTER=") + step});
      n.RequireRegistrations(++registrations);
      AllocatedClaim claim =
          n.CreateAllocatedClaim("crash-" + std::to_string(round++), ExactRequest("hcu", kSmall));
      CallOutcome died = n.Prepare({claim});
      BOOST_TEST(!died.status.ok(), "Prepare answered instead of crashing");
      auto exit = n.h().daemon().WaitForExit(seconds(5));
      BOOST_REQUIRE(exit.has_value());
      BOOST_REQUIRE_MESSAGE(!exit->exited && exit->signal == SIGKILL, exit->ToString());

      n.StartDaemon();
      n.RequireRegistrations(++registrations);
      BOOST_TEST(n.Intents().empty(), Join(n.Intents()));
      if (std::string(step) == "dra-prepared") {
        // Durably prepared before the crash, only the answer was lost: kept
        // (the claim still exists), and the retry is answered from it.
        BOOST_TEST((n.CheckpointEntries() == std::set<std::string>{claim.uid}));
        BOOST_TEST(n.Vhcus().size() == before.size() + 1);
        BOOST_TEST(n.Marks().size() == 1u);
      } else {
        // Recovery ran before serving: nothing of the claim is left.
        BOOST_TEST(Join(VhcuKeys(n.Vhcus())) == Join(before));
        BOOST_TEST(n.Marks().empty(), Join(n.Marks()));
        BOOST_TEST(n.CheckpointEntries().empty(), Join(n.CheckpointEntries()));
      }
      // kubelet retries: prepared (one vHCU, not two), then released.
      n.MustPrepare(claim);
      BOOST_TEST(n.Vhcus().size() == before.size() + 1);
      BOOST_TEST(n.Marks().size() == 1u);
      n.MustUnprepare(claim);
      n.DeleteClaim(claim);
      BOOST_TEST(Join(VhcuKeys(n.Vhcus())) == Join(before));
    }
  }
}

// A reboot: /var/run/cdi is empty and the boot ID new. The prepared claims'
// CDI specs and the whole-card spec are back before the driver registers,
// and kubelet's re-prepare gets the same devices.
BOOST_AUTO_TEST_CASE(reboot_recreates_the_cdi_specs) {
  DraDaemonNode n(kProbeOrder);
  n.Start();
  n.RequireDevices([](const auto& d) { return d.size() == 9; }, seconds(5), "9 devices");
  AllocatedClaim small = n.CreateAllocatedClaim("small", ExactRequest("hcu", kSmall));
  auto first = n.MustPrepare(small);
  const std::set<std::string> specs = n.CdiFiles();
  BOOST_REQUIRE_EQUAL(specs.size(), 2u);
  n.StopDaemon();
  fs::remove_all(n.CdiDir());
  WriteFile(n.HostPath("/proc/sys/kernel/random/boot_id"),
            "0c7e0000-0000-4000-8000-0000000000b2\n");
  n.StartDaemon();
  n.RequireRegistrations(2);
  BOOST_TEST(Join(n.CdiFiles()) == Join(specs));
  auto again = n.MustPrepare(small);
  BOOST_REQUIRE_EQUAL(again.size(), 1u);
  BOOST_TEST(again[0].cdi_device_ids(0) == first[0].cdi_device_ids(0));
  n.MustUnprepare(small);
}

// The claim GET fails (503): a per-claim error, nothing prepared; kubelet's
// retry succeeds once the API answers, also when it answers slowly. A GET
// that is never answered does not hold up SIGTERM.
BOOST_AUTO_TEST_CASE(api_server_down_slow_or_silent_during_prepare) {
  DraDaemonNode n(kProbeOrder);
  n.Start();
  n.RequireDevices([](const auto& d) { return d.size() == 9; }, seconds(5), "9 devices");
  AllocatedClaim claim = n.CreateAllocatedClaim("c", ExactRequest("hcu", kSmall));
  const size_t vhcus = n.Vhcus().size();

  n.api().AddFault(R"({"method":"GET","path":"resourceclaims","status":503,"count":-1,)"
                   R"("user_agent":"hcu-device-plugin"})");
  CallOutcome down = n.Prepare({claim});
  BOOST_REQUIRE_MESSAGE(down.ok(), down.status.error_message() << down.kubelet_error);
  BOOST_TEST(down.prepare.claims().at(claim.uid).error() != "");
  BOOST_TEST(down.prepare.claims().at(claim.uid).devices_size() == 0);
  BOOST_TEST(n.CheckpointEntries().empty());
  BOOST_TEST(n.Vhcus().size() == vhcus);

  n.api().ClearFaults();
  n.api().AddFault(R"({"method":"GET","path":"resourceclaims","status":0,"delay_ms":1500,)"
                   R"("count":1,"user_agent":"hcu-device-plugin"})");
  const auto start = std::chrono::steady_clock::now();
  n.MustPrepare(claim);
  BOOST_TEST((std::chrono::steady_clock::now() - start >= milliseconds(1500)));
  BOOST_TEST(n.Vhcus().size() == vhcus + 1);
  n.MustUnprepare(claim);

  // Silent: the GET hangs; SIGTERM still ends the daemon within 5 s.
  n.api().NeverAnswer("GET", "resourceclaims");
  n.api().ClearRequests();
  std::thread call([&] { n.Prepare({claim}); });
  const bool asked = PollUntil(
      [&] {
        for (const FakeRequest& r : n.api().Requests()) {
          if (r.path.find("/resourceclaims/c") != std::string::npos) return true;
        }
        return false;
      },
      seconds(5));
  BOOST_TEST(asked);
  n.StopDaemon();
  call.join();
  n.api().ClearFaults();
}

// kubelet's deadline reaches the claim GET: with the API server silent and
// a 2 s call deadline (the daemon's own GET timeout is 10 s), the claim gets
// a per-claim error before kubelet gives up on the call, and the retry
// succeeds once the API answers.
BOOST_AUTO_TEST_CASE(silent_api_server_answers_a_per_claim_error_within_the_call_deadline) {
  const milliseconds deadline(2000);
  DraDaemonNode n(kProbeOrder, {}, {}, deadline);
  n.Start();
  n.RequireDevices([](const auto& d) { return d.size() == 9; }, seconds(5), "9 devices");
  AllocatedClaim claim = n.CreateAllocatedClaim("c", ExactRequest("hcu", kSmall));
  n.api().NeverAnswer("GET", "resourceclaims");
  const auto start = std::chrono::steady_clock::now();
  CallOutcome silent = n.Prepare({claim});
  const auto took = std::chrono::steady_clock::now() - start;
  BOOST_REQUIRE_MESSAGE(silent.ok(), silent.status.error_message() << silent.kubelet_error);
  BOOST_TEST((took < deadline));
  const std::string error = silent.prepare.claims().at(claim.uid).error();
  BOOST_TEST(error.find("GET ResourceClaim ns1/c") != std::string::npos, error);
  BOOST_TEST(silent.prepare.claims().at(claim.uid).devices_size() == 0);
  BOOST_TEST(n.CheckpointEntries().empty());
  n.api().ClearFaults();
  n.MustPrepare(claim);
  n.MustUnprepare(claim);
}

// A vHCU destroy that fails in Unprepare (another process holds the
// host-wide vHCU lock past the daemon's wait) is queued and retried by the
// daemon's own 2 s tick: the vHCU and its mark go once the lock is free,
// without kubelet calling again; kubelet's retry then finds nothing left.
BOOST_AUTO_TEST_CASE(a_failed_vhcu_destroy_is_retried_by_the_daemons_tick) {
  DraDaemonNode n(kProbeOrder);
  n.Start();
  n.RequireDevices([](const auto& d) { return d.size() == 9; }, seconds(5), "9 devices");
  const size_t vhcus = n.Vhcus().size();
  const size_t marks = n.Marks().size();
  AllocatedClaim claim = n.CreateAllocatedClaim("c", ExactRequest("hcu", kSmall));
  n.MustPrepare(claim);
  BOOST_REQUIRE_EQUAL(n.Vhcus().size(), vhcus + 1);

  std::optional<CallOutcome> busy;
  {
    auto held = VhcuHostLock::Acquire(n.h().host_root(), milliseconds(0));
    BOOST_REQUIRE_MESSAGE(held.ok(), held.status().ToString());
    busy = n.Unprepare({claim});  // the daemon waits 5 s for the lock, then queues
  }                               // the lock is free from here
  BOOST_REQUIRE_MESSAGE(busy->status.ok(), busy->status.error_message());
  BOOST_TEST(busy->unprepare.claims().at(claim.uid).error() != "");
  BOOST_TEST(n.CheckpointEntries().count(claim.uid) == 1u);  // kept for kubelet's retry
  BOOST_REQUIRE_EQUAL(n.Vhcus().size(), vhcus + 1);
  BOOST_TEST(PollUntil([&] { return n.Vhcus().size() == vhcus && n.Marks().size() == marks; },
                       seconds(8), milliseconds(50)),
             "the queued destroy was not retried by the daemon");
  n.MustUnprepare(claim);
  BOOST_TEST(n.CheckpointEntries().empty());
  BOOST_TEST(n.Vhcus().size() == vhcus);
}

// Claims deleted while the daemon was down are unprepared at start, found
// by one GET per recorded claim (never a LIST); a claim that still exists
// keeps its vHCU. With the API silent at start, SIGTERM still ends it.
BOOST_AUTO_TEST_CASE(claims_deleted_while_down_are_unprepared_by_get) {
  DraDaemonNode n(kProbeOrder);
  n.Start();
  n.RequireDevices([](const auto& d) { return d.size() == 9; }, seconds(5), "9 devices");
  const size_t vhcus = n.Vhcus().size();
  AllocatedClaim gone = n.CreateAllocatedClaim("gone", ExactRequest("hcu", kSmall));
  AllocatedClaim kept = n.CreateAllocatedClaim("kept", ExactRequest("hcu", kSmall));
  n.MustPrepare(gone);
  n.MustPrepare(kept);
  BOOST_REQUIRE_EQUAL(n.Vhcus().size(), vhcus + 2);
  n.StopDaemon();
  n.DeleteClaim(gone);
  n.api().ClearRequests();
  n.StartDaemon();
  n.RequireRegistrations(2);
  BOOST_TEST((n.CheckpointEntries() == std::set<std::string>{kept.uid}));
  BOOST_TEST(n.Vhcus().size() == vhcus + 1);
  BOOST_TEST(!fs::exists(n.CdiDir() + "/dra.hygon.com-vhcu_" + gone.uid + ".json"));
  BOOST_TEST(fs::exists(n.CdiDir() + "/dra.hygon.com-vhcu_" + kept.uid + ".json"));
  int gets = 0;
  for (const FakeRequest& r : n.api().Requests()) {
    BOOST_TEST(!IsClaimList(r), "a LIST of claims: " << r.path << "?" << r.query);
    if (r.method == "GET" && r.path.find("/resourceclaims/") != std::string::npos) ++gets;
  }
  BOOST_TEST(gets == 2);

  // The API silent at the next start: recovery waits on the GET of `kept`;
  // SIGTERM ends it anyway, within 5 s, and nothing is lost.
  n.StopDaemon();
  n.api().NeverAnswer();
  n.api().ClearRequests();
  n.StartDaemon();
  BOOST_TEST(PollUntil(
      [&] {
        for (const FakeRequest& r : n.api().Requests()) {
          if (r.path.find("/resourceclaims/kept") != std::string::npos) return true;
        }
        return false;
      },
      seconds(8)));
  n.StopDaemon();
  n.api().ClearFaults();
  BOOST_TEST((n.CheckpointEntries() == std::set<std::string>{kept.uid}));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace hcudp::testing
