// Containers really start (issue 29, DESIGN §8): podman + runc run busybox
// containers with the CDI devices the REAL daemon names, in device-plugin
// CDI mode (cdi and both) and in DRA mode for a whole card, a pre-split
// vHCU, a dynamic vHCU and a MIG instance. In each container: exactly the
// device nodes the spec names (against a container without devices), and
// nothing more; HCU_VISIBLE_DEVICES=void; the /dev/dri/by-path links our
// createContainer hook (hcu-cdi-hook) made; the vHCU or MIG conf mounted
// with the host's content, and /usr/local/hyhal and /opt/hyhal. Needs root
// (podman's spec directory, mknod): skipped, as CTest's "Skipped", without.
#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "dra_daemon/dra_daemon_node.h"
#include "dra_prepare/prepare_fixture.h"
#include "integration/daemon_harness.h"
#include "runtime/podman_runtime.h"

namespace hcudp::testing {
namespace {

namespace fs = std::filesystem;

constexpr char kHookPath[] = "/var/lib/hcu-device-plugin/bin/hcu-cdi-hook";
constexpr char kHySmi[] = "hy-smi of the host's /usr/local/hyhal";
constexpr char kHyhalLib[] = "a library of the host's /opt/hyhal";

// CTest's SKIP_RETURN_CODE: the runner shows the test as skipped, not passed.
struct RootOnly {
  RootOnly() {
    if (::geteuid() == 0) return;
    std::printf("SKIPPED: the runtime tests need root (podman's /var/run/cdi, mknod)\n");
    std::fflush(stdout);
    std::_Exit(77);
  }
};
BOOST_TEST_GLOBAL_FIXTURE(RootOnly);

// What a host with a vendor runtime and our DaemonSet holds, under the
// daemon's host-root: the hook, /opt/hyhal and /usr/local/hyhal.
void PrepareHostRoot(const std::string& root) {
  fs::create_directories(root + fs::path(kHookPath).parent_path().string());
  fs::copy_file(BinaryPath("hcuctl/hcu-cdi-hook"), root + kHookPath,
                fs::copy_options::overwrite_existing);
  ::chmod((root + kHookPath).c_str(), 0755);
  WriteFile(root + "/usr/local/hyhal/bin/hy-smi", kHySmi);
  WriteFile(root + HyhalPath() + "/lib/libhydmi.so", kHyhalLib);
}

std::string Unqualified(const std::string& cdi_name) {
  return cdi_name.substr(cdi_name.find('=') + 1);
}

std::string Show(const std::map<std::string, std::string>& m) {
  std::string out;
  for (const auto& [k, v] : m) out += k + " -> " + v + "; ";
  return out;
}

// The checks every container gets. `baseline` ran without devices; `edits`
// are the spec's for the device (its own and the spec's common edits);
// `bdf` the card whose by-path links must be there.
void CheckContainer(const ContainerView& v, const ContainerView& baseline, const SpecEdits& edits,
                    const std::string& bdf) {
  BOOST_REQUIRE_MESSAGE(v.exit_code == 0, "the container did not run: " << v.output);
  BOOST_TEST(edits.cdi_version == "0.5.0");
  BOOST_TEST(v.env.count("HCU_VISIBLE_DEVICES") == 1u);
  BOOST_TEST(v.env.at("HCU_VISIBLE_DEVICES") == "void", v.output);
  // Exactly the spec's nodes, their directories and the hook's links.
  std::set<std::string> want;
  for (const std::string& node : edits.device_nodes) {
    for (fs::path p = node; p != "/dev" && p != "/"; p = p.parent_path()) want.insert(p.string());
  }
  if (!edits.links.empty()) want.insert("/dev/dri/by-path");
  for (const auto& [link, target] : edits.links) want.insert(link);
  std::set<std::string> added;
  for (const std::string& d : v.dev) {
    if (baseline.dev.count(d) == 0) added.insert(d);
  }
  BOOST_TEST(added == want, boost::test_tools::per_element());
  for (const std::string& node : edits.device_nodes) {
    BOOST_TEST(v.char_devs.count(node) == 1u, node << " is no character device: " << v.output);
  }
  BOOST_TEST(edits.device_nodes.count("/dev/kfd") == 1u);
  // The hook's links, as the spec asked, for this card.
  BOOST_TEST(v.links == edits.links, "links " << Show(v.links) << ", the spec's " << Show(edits.links));
  BOOST_TEST(v.links.count("/dev/dri/by-path/pci-" + bdf + "-card") == 1u, v.output);
  BOOST_TEST(v.links.count("/dev/dri/by-path/pci-" + bdf + "-render") == 1u, v.output);
  // The vendor runtime, both copies.
  BOOST_TEST(edits.mounts.count("/usr/local/hyhal") == 1u);
  BOOST_TEST(edits.mounts.count("/opt/hyhal") == 1u);
  BOOST_TEST(v.files.at("/usr/local/hyhal/bin/hy-smi") == kHySmi, v.output);
  BOOST_TEST(v.files.at("/opt/hyhal/lib/libhydmi.so") == kHyhalLib, v.output);
}

const std::vector<std::string> kHyhalFiles = {"/usr/local/hyhal/bin/hy-smi",
                                              "/opt/hyhal/lib/libhydmi.so"};

std::vector<std::string> With(std::vector<std::string> files, const std::string& more) {
  files.push_back(more);
  return files;
}

// The one mount of `edits` under `dir` (a vHCU's or MIG instance's conf).
std::string ConfMount(const SpecEdits& edits, const std::string& dir) {
  std::string found;
  for (const std::string& m : edits.mounts) {
    if (m.rfind(dir, 0) == 0) found = m;
  }
  BOOST_REQUIRE_MESSAGE(!found.empty(), "no mount under " << dir);
  return found;
}

BOOST_AUTO_TEST_SUITE(runtime_podman)

// Debian 12's podman refused the device-plugin spec at cdiVersion 0.6.0
// ("unresolvable CDI devices hygon.com/hcu=0000:09:00.0").
BOOST_AUTO_TEST_CASE(device_plugin_cdi_mode_containers_start_with_their_card) {
  PodmanRuntime podman;
  const ContainerView baseline = podman.Run({});
  BOOST_REQUIRE_MESSAGE(baseline.exit_code == 0, "busybox without devices: " << baseline.output);
  for (const std::string mode : {"cdi", "both"}) {
    BOOST_TEST_CONTEXT("--device-list-strategy=" << mode) {
      DaemonHarness h("demo/nodes/k100ai-8.yaml", {"--device-list-strategy=" + mode});
      PrepareHostRoot(h.host_root());
      h.Start();
      h.RequireRegistered("hygon.com/hcu");
      auto r = AllocateOne(h, "hygon.com/hcu", {"0000:09:00.0"});
      BOOST_REQUIRE_EQUAL(r.cdi_devices_size(), 1);
      const std::string device = r.cdi_devices(0).name();
      const std::string spec = h.cdi_dir() + "/hygon.com-hcu.json";
      const auto dropped = podman.Install(spec, h.host_root());
      ContainerView v = podman.Run({device}, kHyhalFiles);
      podman.Uninstall();
      CheckContainer(v, baseline, EditsOf(spec, Unqualified(device)), "0000:09:00.0");
      BOOST_TEST(v.char_devs.count("/dev/dri/card1") == 1u);
      BOOST_TEST(v.char_devs.count("/dev/dri/renderD128") == 1u);
      BOOST_TEST(v.char_devs.count("/dev/mkfd") == 1u);
      for (const std::string& d : dropped) {
        BOOST_TEST(d.rfind("/sys/devices/", 0) == 0u, d << ": only the cards' sysfs directories");
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(dra_containers_start_with_a_card_a_pre_split_and_a_dynamic_vhcu) {
  PodmanRuntime podman;
  const ContainerView baseline = podman.Run({});
  BOOST_REQUIRE_MESSAGE(baseline.exit_code == 0, "busybox without devices: " << baseline.output);
  DraDaemonNode n(kProbeOrder);
  PrepareHostRoot(n.h().host_root());
  n.Start();
  auto pool =
      n.RequireDevices([](const auto& d) { return d.size() == 9; }, seconds(5), "9 devices");
  const std::string card_spec = n.CdiDir() + "/dra.hygon.com-hcu.json";

  // A whole card: 0000:09:00.0, the first in PCI order.
  AllocatedClaim whole = n.CreateAllocatedClaim("whole", ExactRequest("hcu"));
  auto devices = n.MustPrepare(whole);
  BOOST_REQUIRE_EQUAL(devices.size(), 1u);
  BOOST_REQUIRE_EQUAL(devices[0].cdi_device_ids_size(), 1);
  std::string id = devices[0].cdi_device_ids(0);
  podman.Install(card_spec, n.h().host_root());
  ContainerView v = podman.Run({id}, kHyhalFiles);
  podman.Uninstall();
  BOOST_TEST_CONTEXT("whole card " << id) {
    CheckContainer(v, baseline, EditsOf(card_spec, Unqualified(id)), "0000:09:00.0");
  }

  // A dynamic vHCU of 30 CUs and 8 GiB, on 0000:29:00.0; and a pre-split
  // one of 0000:e9:00.0. Each claim's spec names its conf.
  AllocatedClaim small =
      n.CreateAllocatedClaim("small", ExactRequest("hcu", R"({"cores":"30","memory":"8Gi"})"));
  std::string presplit;
  for (const SliceDevice& d : pool) {
    if (d.type == "vhcu" && presplit.empty()) presplit = d.name;
  }
  BOOST_REQUIRE(!presplit.empty());
  AllocatedClaim pre = n.CreateClaimAllocatedTo("presplit", presplit);
  const std::vector<std::pair<AllocatedClaim, std::string>> claims = {{small, "0000:29:00.0"},
                                                                      {pre, "0000:e9:00.0"}};
  for (const auto& [claim, bdf] : claims) {
    devices = n.MustPrepare(claim);
    BOOST_REQUIRE_EQUAL(devices.size(), 1u);
    BOOST_REQUIRE_EQUAL(devices[0].cdi_device_ids_size(), 1);
    id = devices[0].cdi_device_ids(0);
    const std::string spec = n.CdiDir() + "/dra.hygon.com-vhcu_" + claim.uid + ".json";
    const SpecEdits edits = EditsOf(spec, Unqualified(id));
    const std::string conf = ConfMount(edits, "/etc/vdev/docker/");
    podman.Install(spec, n.h().host_root());
    v = podman.Run({id}, With(kHyhalFiles, conf));
    podman.Uninstall();
    BOOST_TEST_CONTEXT(claim.name << " " << id) {
      CheckContainer(v, baseline, edits, bdf);
      const std::string host_conf =
          n.HostPath("/etc/vdev/" + conf.substr(std::string("/etc/vdev/docker/").size()));
      BOOST_TEST(v.files.at(conf) == ReadFile(host_conf), v.output);
    }
  }
  for (const AllocatedClaim& c : {whole, small, pre}) n.MustUnprepare(c);
}

BOOST_AUTO_TEST_CASE(a_dra_container_starts_with_a_mig_instance) {
  PodmanRuntime podman;
  const ContainerView baseline = podman.Run({});
  BOOST_REQUIRE_MESSAGE(baseline.exit_code == 0, "busybox without devices: " << baseline.output);
  DraDaemonNode n("demo/nodes/bw-mig.yaml");
  PrepareHostRoot(n.h().host_root());
  n.Start();
  n.RequireDevices([](const auto& d) { return !d.empty(); }, seconds(5), "devices");
  AllocatedClaim mig = n.CreateAllocatedClaim("mig", ExactRequest("hcu"));
  // Its card, read while the instance is still offered: once prepared, a
  // held MIG instance leaves the slices (the offer rule, issue 28).
  const std::string card_bdf = n.CardBdfOfDevice(mig.devices[0]);
  auto devices = n.MustPrepare(mig);
  BOOST_REQUIRE_EQUAL(devices.size(), 1u);
  BOOST_REQUIRE_EQUAL(devices[0].cdi_device_ids_size(), 1);
  const std::string id = devices[0].cdi_device_ids(0);
  const std::string spec = n.CdiDir() + "/dra.hygon.com-vhcu_" + mig.uid + ".json";
  const SpecEdits edits = EditsOf(spec, Unqualified(id));
  const std::string conf = ConfMount(edits, "/etc/dmi_mig_config/ci/");
  podman.Install(spec, n.h().host_root());
  ContainerView v = podman.Run({id}, With(kHyhalFiles, conf));
  podman.Uninstall();
  CheckContainer(v, baseline, edits, card_bdf);
  BOOST_TEST(v.files.at(conf) == ReadFile(n.HostPath(conf)), v.output);
  n.MustUnprepare(mig);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
