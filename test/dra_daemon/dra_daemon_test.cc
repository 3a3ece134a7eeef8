// hcu-dp-daemon --strategy=dra end to end (issue 14, DESIGN.md §9): the real
// binary behind the fake kubelet's plugin watcher and the fake API server.
// Registration and re-registration, the slices it publishes and how they
// follow the node (inventory, health with --pulse=0), and prepare/unprepare
// of each device kind on a node whose card order is not PCI order
// (demo/nodes/k100ai-8-probe-order.yaml: index runs 3,0,7,1,... in PCI
// rank; card 2, 0000:e9:00.0, carries two pre-split vHCUs).
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <map>

#include "dra_daemon/dra_daemon_node.h"
#include "dra_prepare/prepare_fixture.h"

namespace hcudp::testing {
namespace {

namespace fs = std::filesystem;

// PCI rank order of the probe-order node: index 1, 3, 5, 0, 7, 6, 4, 2.
const std::vector<std::string> kBdfsByPci = {"0000:09:00.0", "0000:29:00.0", "0000:49:00.0",
                                             "0000:69:00.0", "0000:89:00.0", "0000:a9:00.0",
                                             "0000:c9:00.0", "0000:e9:00.0"};

std::string DeviceOf(const std::string& bdf) {
  std::string name = "hcu-" + bdf;
  for (char& c : name) {
    if (c == ':' || c == '.') c = '-';
  }
  return name;
}

const SliceDevice* Find(const std::vector<SliceDevice>& devices, const std::string& name) {
  for (const SliceDevice& d : devices) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

RunResult Hcuctl(DraDaemonNode& n, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {BinaryPath("hcuctl/hcuctl"), "--backend=sim",
                                   "--sim-node=" + n.h().node_path(),
                                   "--host-root=" + n.h().host_root()};
  argv.insert(argv.end(), args.begin(), args.end());
  return Run(argv);
}

std::vector<std::string> CdiIds(const std::vector<drav1::Device>& devices) {
  std::vector<std::string> ids;
  for (const auto& d : devices)
    ids.insert(ids.end(), d.cdi_device_ids().begin(), d.cdi_device_ids().end());
  return ids;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(dra_daemon)

// Start: registered with kubelet, every whole card of the node published (in
// PCI order, card 2 offered as its two vHCUs), no device-plugin socket. A
// kubelet restart wipes the node's slices and registers the driver again,
// and the daemon republishes; a wiped registry directory is served anew.
BOOST_AUTO_TEST_CASE(registers_publishes_and_comes_back_after_kubelet_restart) {
  DraDaemonNode n(kProbeOrder);
  n.Start();
  std::vector<std::string> expected;
  for (const std::string& bdf : kBdfsByPci) {
    if (bdf != "0000:e9:00.0") expected.push_back(DeviceOf(bdf));
  }
  auto complete = [&](const std::vector<SliceDevice>& devices) {
    std::vector<std::string> cards;
    int vhcus = 0;
    for (const SliceDevice& d : devices) {
      if (d.type == "hcu") cards.push_back(d.name);
      if (d.type == "vhcu" && d.parent == "0000:e9:00.0") ++vhcus;
    }
    return cards == expected && vhcus == 2;
  };
  auto devices = n.RequireDevices(complete, seconds(5), "7 whole cards in PCI order + 2 vHCUs");
  BOOST_TEST(Find(devices, DeviceOf("0000:09:00.0"))->pci == "0000:09:00.0");
  BOOST_TEST(n.h().PluginSockets().empty(), "a device-plugin socket in DRA mode");
  BOOST_TEST(!fs::exists(n.h().plugin_dir()), "the device-plugin directory was touched");
  BOOST_TEST(fs::exists(n.plugins_dir() + "/dra.hygon.com/dra.sock"));

  // kubelet's wipe can also land after the driver registered and published
  // (it runs concurrently with plugin registration and is retried): the
  // daemon sees its slices deleted and publishes them again.
  const std::set<std::string> published = n.SliceUids();
  std::string wiped = n.api().MustRequest(
      "DELETE", "/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.nodeName%3D" +
                    std::string(kDraNode));
  for (const std::string& uid : published) BOOST_TEST(wiped.find(uid) != std::string::npos);
  n.RequireDevices(
      [&](const auto& d) {
        for (const std::string& uid : n.SliceUids()) {
          if (published.count(uid)) return false;
        }
        return complete(d);
      },
      seconds(2), "the pool republished after a late wipe");

  // kubelet restarts: it deletes the slices as it starts, then registers us.
  const std::set<std::string> before = n.SliceUids();
  BOOST_REQUIRE_EQUAL(n.kubelet().Restart(), "");
  n.RequireRegistrations(2);
  n.RequireDevices(complete, seconds(3), "the pool republished after the kubelet restart");
  for (const std::string& uid : n.SliceUids()) BOOST_TEST(!before.count(uid), "not recreated");

  // The registry directory wiped: a new registration socket, registered.
  for (const auto& e : fs::directory_iterator(n.registry_dir())) fs::remove(e.path());
  n.RequireRegistrations(3);
  BOOST_TEST(n.h().daemon().Running());
}

// With --pulse=0, so only events move it: a card turning unhealthy is
// tainted in the slice and reported Unhealthy on the health stream (for a
// prepared device on it) within 2 s, and both clear when it recovers; a vHCU
// an admin creates takes its card out of the pool as a whole and adds the
// vHCU as a device.
BOOST_AUTO_TEST_CASE(slices_and_health_follow_the_node, *boost::unit_test::timeout(60)) {
  DraDaemonNode n(kProbeOrder, {"--pulse=0"});
  n.Start();
  const std::string card1 = DeviceOf("0000:09:00.0");  // index 1
  const std::string card0 = DeviceOf("0000:69:00.0");  // index 0
  n.RequireDevices([&](const auto& d) { return Find(d, card1) != nullptr; }, seconds(5),
                   "card index 1");
  AllocatedClaim whole = n.CreateAllocatedClaim("whole", ExactRequest("hcu"));
  BOOST_REQUIRE_EQUAL(whole.devices.size(), 1u);
  BOOST_REQUIRE_EQUAL(whole.devices[0], card1);
  n.MustPrepare(whole);
  // Held whole, the card leaves the pool (the one offer rule, issue 28).
  n.RequireDevices([&](const auto& d) { return Find(d, card1) == nullptr; }, seconds(2),
                   card1 + " out of the pool while held");
  const std::string key = std::string(kDraNode) + "/" + card1;
  BOOST_REQUIRE(n.kubelet().WaitFor(
      [&](const WatcherSnapshot& s) {
        auto h = s.health.find(kDraDriver);
        return h != s.health.end() && h->second.devices.count(key) &&
               h->second.devices.at(key) == 1;  // HEALTHY
      },
      seconds(3)));

  // Card 1 (held) and card 0 (free) fail: card 0 is tainted in the pool and
  // the held card's device is Unhealthy on the stream, each within 2 s.
  const auto fault = std::chrono::steady_clock::now();
  n.h().SetCardHealth(1, "Unhealthy");
  n.h().SetCardHealth(0, "Unhealthy");
  n.RequireDevices(
      [&](const auto& d) {
        const SliceDevice* c = Find(d, card0);
        return c != nullptr && c->tainted;
      },
      seconds(2), "the taint on " + card0);
  auto unhealthy = n.kubelet().WaitFor(
      [&](const WatcherSnapshot& s) {
        auto h = s.health.find(kDraDriver);
        return h != s.health.end() && h->second.devices.count(key) &&
               h->second.devices.at(key) == 2;  // UNHEALTHY
      },
      seconds(2) -
          std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - fault));
  BOOST_REQUIRE_MESSAGE(unhealthy.has_value(), "health stream not Unhealthy within 2 s");
  // Only that card.
  for (const SliceDevice& d : n.Devices()) {
    if (d.name != card0) BOOST_TEST(!d.tainted, d.name << " tainted too");
  }

  // Back to Healthy: the taint goes and the stream says HEALTHY again, each
  // within 2 s of the fix.
  const auto fixed = std::chrono::steady_clock::now();
  n.h().SetCardHealth(1, "Healthy");
  n.h().SetCardHealth(0, "Healthy");
  n.RequireDevices(
      [&](const auto& d) {
        const SliceDevice* c = Find(d, card0);
        return c != nullptr && !c->tainted;
      },
      seconds(2), "the taint gone from " + card0);
  auto healthy = n.kubelet().WaitFor(
      [&](const WatcherSnapshot& s) {
        auto h = s.health.find(kDraDriver);
        return h != s.health.end() && h->second.devices.count(key) &&
               h->second.devices.at(key) == 1;  // HEALTHY
      },
      seconds(2) -
          std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - fixed));
  BOOST_REQUIRE_MESSAGE(healthy.has_value(), "health stream not back to Healthy within 2 s");

  // A vHCU made for a claim on card 3 (0000:29:00.0), then an admin's vHCU
  // on card 5 (0000:49:00.0): the pool published after both offers the
  // admin's as a device (card 5 no longer whole) but not the claim's (card 3
  // stays whole: its vHCU is consumed capacity).
  AllocatedClaim small =
      n.CreateAllocatedClaim("small", ExactRequest("hcu", R"({"cores":"30","memory":"8Gi"})"));
  BOOST_REQUIRE_EQUAL(small.devices[0], DeviceOf("0000:29:00.0"));
  n.MustPrepare(small);
  RunResult made = Hcuctl(n, {"vhcu", "create", "--card", "5", "--cu", "20", "--mem-mib", "4096"});
  BOOST_REQUIRE_MESSAGE(made.exit_code == 0, made.out << made.err);
  auto pool = n.RequireDevices(
      [&](const auto& d) {
        bool child = false;
        for (const SliceDevice& x : d) child |= x.type == "vhcu" && x.parent == "0000:49:00.0";
        return child && Find(d, DeviceOf("0000:49:00.0")) == nullptr;
      },
      seconds(2), "card 5 offered as its vHCU");
  BOOST_TEST(Find(pool, DeviceOf("0000:29:00.0")) != nullptr);
  for (const SliceDevice& d : pool) BOOST_TEST(d.parent != "0000:29:00.0", d.name);
  n.MustUnprepare(small);
  n.MustUnprepare(whole);
}

// An RMA swap: the card at a BDF is replaced by another (model and serial
// change, the BDF stays). The daemon republishes the card's slice device
// with the new productName and uuid within 2 s.
BOOST_AUTO_TEST_CASE(an_rma_swap_republishes_product_name_and_uuid) {
  DraDaemonNode n;
  n.Start();
  const std::string card = DeviceOf("0000:29:00.0");
  auto before = n.RequireDevices([&](const auto& d) { return Find(d, card) != nullptr; },
                                 seconds(5), "card index 3");
  BOOST_REQUIRE_EQUAL(Find(before, card)->product, "K100_AI");
  BOOST_REQUIRE(!Find(before, card)->uuid.empty());
  BOOST_REQUIRE(Find(before, card)->uuid != "RMA-0001");
  const auto swapped = std::chrono::steady_clock::now();
  n.h().EditNode([](YAML::Node& node) {
    for (YAML::Node c : node["cards"]) {
      if (c["bdf"].as<std::string>() != "0000:29:00.0") continue;
      c["model"] = "Z100L";
      c["pciDeviceId"] = "0x55b7";
      c["serial"] = "RMA-0001";
    }
  });
  n.RequireDevices(
      [&](const auto& d) {
        const SliceDevice* c = Find(d, card);
        return c != nullptr && c->product == "Z100L" && c->uuid == "RMA-0001";
      },
      seconds(2), "the new productName and uuid of " + card);
  BOOST_TEST_MESSAGE("swap -> slice: " << std::chrono::duration_cast<milliseconds>(
                                              std::chrono::steady_clock::now() - swapped)
                                              .count()
                                       << " ms");
}

// Each device kind, prepared and unprepared, twice each (idempotent), on the
// card the scheduler picked even though probe order is not PCI order.
// A pre-split vHCU prepared for a claim and then destroyed under it (an
// admin's --force, a driver reset): the device is gone, and the health
// stream says so (Unhealthy), as it does for a card that is gone.
BOOST_AUTO_TEST_CASE(a_prepared_pre_split_vhcu_destroyed_under_its_claim_is_unhealthy,
                     *boost::unit_test::timeout(60)) {
  DraDaemonNode n(kProbeOrder, {"--pulse=0"});
  n.Start();
  auto pool =
      n.RequireDevices([](const auto& d) { return d.size() == 9; }, seconds(5), "9 devices");
  std::string presplit;
  for (const SliceDevice& d : pool) {
    if (d.type == "vhcu" && presplit.empty()) presplit = d.name;
  }
  BOOST_REQUIRE(!presplit.empty());
  const std::string vdev = presplit.substr(presplit.rfind("-vdev") + 1);
  AllocatedClaim pre = n.CreateClaimAllocatedTo("presplit", presplit);
  n.MustPrepare(pre);
  const std::string key = std::string(kDraNode) + "/" + presplit;
  auto health_is = [&](int want) {
    return n.kubelet().WaitFor(
        [&](const WatcherSnapshot& s) {
          auto h = s.health.find(kDraDriver);
          return h != s.health.end() && h->second.devices.count(key) &&
                 h->second.devices.at(key) == want;
        },
        seconds(3));
  };
  BOOST_REQUIRE_MESSAGE(health_is(1).has_value(), key << " not HEALTHY");
  RunResult gone = Hcuctl(n, {"vhcu", "destroy", "--force", vdev});
  BOOST_REQUIRE_MESSAGE(gone.exit_code == 0, gone.out << gone.err);
  BOOST_TEST(health_is(2).has_value(), key << " not UNHEALTHY after its vHCU was destroyed");
  n.MustUnprepare(pre);
}

BOOST_AUTO_TEST_CASE(prepare_and_unprepare_each_device_kind) {
  DraDaemonNode n(kProbeOrder);
  n.Start();
  n.RequireDevices([](const auto& d) { return d.size() == 9; }, seconds(5), "9 devices");
  const auto vhcus_before = n.Vhcus();

  // A whole card: the first in PCI order is index 1, /dev/dri/card2.
  AllocatedClaim whole = n.CreateAllocatedClaim("whole", ExactRequest("hcu"));
  BOOST_REQUIRE_EQUAL(whole.devices[0], DeviceOf("0000:09:00.0"));
  auto devices = n.MustPrepare(whole);
  BOOST_REQUIRE_EQUAL(devices.size(), 1u);
  BOOST_TEST(devices[0].device_name() == DeviceOf("0000:09:00.0"));
  BOOST_TEST(devices[0].pool_name() == kDraNode);
  BOOST_TEST(CdiIds(devices) ==
             std::vector<std::string>{"dra.hygon.com/hcu=" + DeviceOf("0000:09:00.0")});
  const std::string card_spec = ReadFile(n.CdiDir() + "/dra.hygon.com-hcu.json");
  BOOST_TEST(card_spec.find("/dev/dri/card2") != std::string::npos);
  BOOST_TEST(CdiSchemaErrors(n.CdiDir() + "/dra.hygon.com-hcu.json") == "");
  // Idempotent: the same answer again.
  BOOST_TEST(CdiIds(n.MustPrepare(whole)) == CdiIds(devices));

  // A vHCU by capacity: 30 CUs and 8 GiB on the next card in PCI order
  // (0000:29:00.0, index 3).
  AllocatedClaim small =
      n.CreateAllocatedClaim("small", ExactRequest("hcu", R"({"cores":"30","memory":"8Gi"})"));
  BOOST_REQUIRE_EQUAL(small.devices[0], DeviceOf("0000:29:00.0"));
  auto vdev = n.MustPrepare(small);
  BOOST_REQUIRE_EQUAL(vdev.size(), 1u);
  BOOST_TEST(vdev[0].device_name() == DeviceOf("0000:29:00.0"));
  BOOST_TEST(vdev[0].share_id() != "");
  BOOST_REQUIRE_EQUAL(vdev[0].cdi_device_ids_size(), 1);
  BOOST_TEST(vdev[0].cdi_device_ids(0).rfind("dra.hygon.com/vhcu=" + small.uid + "-vdev", 0) == 0);
  std::vector<Vhcu> made;
  for (const Vhcu& v : n.Vhcus()) {
    if (v.card_bdf == "0000:29:00.0") made.push_back(v);
  }
  BOOST_REQUIRE_EQUAL(made.size(), 1u);
  BOOST_TEST(made[0].card == 3);
  BOOST_TEST(made[0].compute_units == 30);
  BOOST_TEST(made[0].memory_mib == 8192u);
  BOOST_TEST(n.Marks().size() == 2u);  // the whole card's and the vHCU's
  const std::string claim_spec = n.CdiDir() + "/dra.hygon.com-vhcu_" + small.uid + ".json";
  BOOST_TEST(CdiSchemaErrors(claim_spec) == "");
  n.MustPrepare(small);  // idempotent: no second vHCU
  BOOST_TEST(n.Vhcus().size() == vhcus_before.size() + 1);
  // The dynamic vHCU is capacity of its card, not a device of the pool.
  auto pool = n.Devices();
  BOOST_TEST(Find(pool, DeviceOf("0000:29:00.0")) != nullptr);
  for (const SliceDevice& d : pool) BOOST_TEST(d.parent != "0000:29:00.0");

  // A pre-split vHCU of card 2 (0000:e9:00.0).
  std::string presplit;
  for (const SliceDevice& d : pool) {
    if (d.type == "vhcu" && presplit.empty()) presplit = d.name;
  }
  BOOST_REQUIRE(!presplit.empty());
  AllocatedClaim pre = n.CreateClaimAllocatedTo("presplit", presplit);
  auto pre_devices = n.MustPrepare(pre);
  BOOST_REQUIRE_EQUAL(pre_devices.size(), 1u);
  BOOST_TEST(pre_devices[0].device_name() == presplit);
  BOOST_TEST(CdiSchemaErrors(n.CdiDir() + "/dra.hygon.com-vhcu_" + pre.uid + ".json") == "");

  // Two cards on one HSL island, in one claim.
  AllocatedClaim pair = n.CreateAllocatedClaim(
      "pair", "[" + ExactRequest("a") + "," + ExactRequest("b") + "]",
      R"([{"requests":["a","b"],"matchAttribute":"dra.hygon.com/hslIsland"}])");
  BOOST_REQUIRE_EQUAL(pair.devices.size(), 2u);
  auto pair_devices = n.MustPrepare(pair);
  BOOST_REQUIRE_EQUAL(pair_devices.size(), 2u);
  std::set<std::string> requests;
  for (const auto& d : pair_devices) requests.insert(d.request_names(0));
  BOOST_TEST((requests == std::set<std::string>{"a", "b"}));

  // Unprepare everything, twice: back to the vHCUs of before, no marks, no
  // claim specs, no checkpoint entries.
  for (int round = 0; round < 2; ++round) {
    CallOutcome out = n.Unprepare({whole, small, pre, pair});
    BOOST_REQUIRE_MESSAGE(out.ok(), out.status.error_message() << out.kubelet_error);
    for (const auto& [uid, r] : out.unprepare.claims()) BOOST_TEST(r.error() == "", uid);
  }
  BOOST_TEST(n.Vhcus().size() == vhcus_before.size());
  BOOST_TEST(n.Marks().empty());
  BOOST_TEST(n.CheckpointEntries().empty());
  BOOST_TEST((n.CdiFiles() == std::set<std::string>{"dra.hygon.com-hcu.json"}));
}

// A MIG node: the instances are the devices; one prepared and unprepared.
BOOST_AUTO_TEST_CASE(prepare_a_mig_instance) {
  DraDaemonNode n("demo/nodes/bw-mig.yaml");
  n.Start();
  auto pool = n.RequireDevices([](const auto& d) { return !d.empty(); }, seconds(5), "devices");
  for (const SliceDevice& d : pool) BOOST_TEST(d.type == "mig", d.name);
  AllocatedClaim mig = n.CreateAllocatedClaim("mig", ExactRequest("hcu"));
  BOOST_REQUIRE_EQUAL(mig.devices.size(), 1u);
  BOOST_TEST(mig.devices[0].find("-mig-") != std::string::npos);
  auto devices = n.MustPrepare(mig);
  BOOST_REQUIRE_EQUAL(devices.size(), 1u);
  BOOST_TEST(devices[0].device_name() == mig.devices[0]);
  BOOST_TEST(CdiSchemaErrors(n.CdiDir() + "/dra.hygon.com-vhcu_" + mig.uid + ".json") == "");
  n.MustUnprepare(mig);
  n.MustUnprepare(mig);
  BOOST_TEST(n.CheckpointEntries().empty());
}

// Start-up input errors are one line naming the flag, exit 2, before any
// network call.
BOOST_AUTO_TEST_CASE(bad_start_up_input_names_the_flag) {
  TempDir dir;
  const std::vector<std::string> base = {DaemonBinary(),
                                         "--strategy=dra",
                                         "--backend=sim",
                                         "--sim-node=" + SourcePath(kProbeOrder),
                                         "--host-root=" + dir.Join("root"),
                                         "--kubelet-plugins-dir=" + dir.Join("plugins"),
                                         "--kubelet-registry-dir=" + dir.Join("registry")};
  struct Case {
    std::vector<std::string> flags;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{}, "hcu-dp-daemon: --node-name: required with --strategy=dra"},
      {{"--node-name=Node_A", "--kubeconfig=" + dir.Join("none")},
       "hcu-dp-daemon: --node-name: node name \"Node_A\" is not a DNS subdomain"},
      {{"--node-name=node-a", "--dra-driver-name=Hygon", "--kubeconfig=" + dir.Join("none")},
       "hcu-dp-daemon: --dra-driver-name: "},
      {{"--node-name=node-a", "--kubeconfig=" + dir.Join("none")}, "hcu-dp-daemon: --kubeconfig: "},
  };
  for (const Case& c : cases) {
    // The runner's environment must not set what the flags leave out.
    std::vector<std::string> argv = {"/usr/bin/env"};
    for (const std::string& var : DaemonEnvVars()) {
      argv.push_back("-u");
      argv.push_back(var);
    }
    argv.insert(argv.end(), base.begin(), base.end());
    argv.insert(argv.end(), c.flags.begin(), c.flags.end());
    RunResult r = Run(argv);
    BOOST_TEST_CONTEXT(c.message) {
      BOOST_TEST(r.exit_code == 2);
      BOOST_TEST(r.err.rfind(c.message, 0) == 0, r.err);
      BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') == 1, r.err);
    }
  }
  BOOST_TEST(!fs::exists(dir.Join("plugins")));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace hcudp::testing
