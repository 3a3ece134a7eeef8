// hcuctl's commands that talk to running peers: plugins and allocate against
// the real hcu-dp-daemon on a simulated node, allocations and vhcu destroy
// against a fake kubelet pod-resources server.
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "daemon_bounds/bounds_util.h"
#include "fake_kubelet/daemon_process.h"
#include "fake_kubelet/fake_podresources.h"
#include "testing/testutil.h"

namespace hcudp::testing {
namespace {

// A daemon serving a SimNode in private directories, no kubelet needed.
class LiveNode {
 public:
  explicit LiveNode(const std::string& node_file) : node_file_(node_file) {
    std::filesystem::create_directories(dir_.Join("dp"));
    std::string err = daemon_.Start(
        {BinaryPath("hcu-dp-daemon/hcu-dp-daemon"), "--backend=sim", "--sim-node=" + node_file,
         "--host-root=" + dir_.Join("root"), "--device-plugin-path=" + dir_.Join("dp") + "/",
         "--strategy=mixed", "--pulse=0"},
        dir_.Join("daemon.log"));
    BOOST_REQUIRE_MESSAGE(err.empty(), err);
    WaitForSocket();
  }

  RunResult Hcuctl(std::vector<std::string> args) {
    std::vector<std::string> argv = {testing::Hcuctl(), "--backend=sim", "--sim-node=" + node_file_,
                                     "--host-root=" + dir_.Join("root"),
                                     "--device-plugin-path=" + dir_.Join("dp") + "/"};
    argv.insert(argv.end(), args.begin(), args.end());
    return Run(argv);
  }

  // hcuctl run from the node's directory with --device-plugin-path=dp/, as
  // an admin types it from the kubelet directory.
  RunResult HcuctlWithRelativePluginPath(std::vector<std::string> args) {
    std::vector<std::string> argv = {"/bin/sh",
                                     "-c",
                                     "cd \"$0\" && exec \"$@\"",
                                     dir_.path(),
                                     testing::Hcuctl(),
                                     "--backend=sim",
                                     "--sim-node=" + node_file_,
                                     "--host-root=" + dir_.Join("root"),
                                     "--device-plugin-path=dp/"};
    argv.insert(argv.end(), args.begin(), args.end());
    return Run(argv);
  }

  DaemonProcess& daemon() { return daemon_; }
  std::string plugin_dir() const { return dir_.Join("dp"); }

 private:
  void WaitForSocket() {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      for (const auto& e : std::filesystem::directory_iterator(dir_.Join("dp"))) {
        if (e.path().filename().string().rfind("hygon.com_", 0) == 0) return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    BOOST_FAIL("daemon served no socket within 10 s; log:\n" << daemon_.Log());
  }

  TempDir dir_;
  std::string node_file_;
  DaemonProcess daemon_;
};

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

BOOST_AUTO_TEST_SUITE(hcuctl_live)

BOOST_AUTO_TEST_CASE(plugins_reports_each_served_resource_with_health_counts) {
  LiveNode node(SourcePath("demo/nodes/z100l-mixed.yaml"));
  RunResult r = node.Hcuctl({"plugins", "-o", "json"});
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  BOOST_TEST(Contains(r.out, "\"resource\": \"hygon.com/hcu\""), r.out);
  BOOST_TEST(Contains(r.out, "\"resource\": \"hygon.com/hcu-share-15c-8g\""), r.out);
  BOOST_TEST(Contains(r.out, "\"resource\": \"hygon.com/hcu-share-30c-16g\""), r.out);
  BOOST_TEST(Contains(r.out, "\"healthy\": 4"), r.out);
  BOOST_TEST(Contains(r.out, "\"unhealthy\": 0"), r.out);
}

// gRPC reads "unix://dp/x" as authority "dp": a relative directory must
// still reach the plugin (resolved against the current directory).
BOOST_AUTO_TEST_CASE(plugins_and_allocate_reach_the_plugin_through_a_relative_directory) {
  LiveNode node(SourcePath("demo/nodes/k100ai-8.yaml"));
  RunResult plugins = node.HcuctlWithRelativePluginPath({"plugins", "-o", "json"});
  BOOST_TEST(plugins.exit_code == 0, plugins.err);
  BOOST_TEST(Contains(plugins.out, "\"healthy\": 8"), plugins.out << plugins.err);
  RunResult allocate =
      node.HcuctlWithRelativePluginPath({"allocate", "--resource", "hcu", "--count", "1"});
  BOOST_TEST(allocate.exit_code == 0, allocate.err);
  BOOST_TEST(Contains(allocate.out, "/dev/dri/"), allocate.out << allocate.err);
}

BOOST_AUTO_TEST_CASE(plugins_check_is_the_liveness_probe) {
  LiveNode node(SourcePath("demo/nodes/k100ai-8.yaml"));
  RunResult live = node.Hcuctl({"plugins", "--check"});
  BOOST_TEST(live.exit_code == 0, live.err);
  BOOST_TEST(live.out.empty());
  ExitStatus st = node.daemon().Stop();
  BOOST_TEST(st.exited);
  RunResult dead = node.Hcuctl({"plugins", "--check"});
  BOOST_TEST(dead.exit_code == 1);
  // No daemon left, or (tests run in parallel) none with a socket here.
  BOOST_TEST((Contains(dead.err, "no hcu-dp-daemon process") ||
              Contains(dead.err, "no socket of hcu-dp-daemon")),
             dead.err);
}

// Item 10: other instances' sockets (a stale one after a surge rollout, a
// frozen one) are not this daemon's; --check judges its own, within 1 s.
BOOST_AUTO_TEST_CASE(plugins_check_judges_only_this_instances_sockets_within_a_second) {
  LiveNode node(SourcePath("demo/nodes/k100ai-8.yaml"));
  {
    // Bound and closed: nobody listens.
    FrozenListener stale(node.plugin_dir() + "/hygon.com_hcu@zzzzzzz");
  }
  BOOST_REQUIRE(PathExists(node.plugin_dir() + "/hygon.com_hcu@zzzzzzz"));
  FrozenListener frozen(node.plugin_dir() + "/hygon.com_hcu@frozen1");
  const auto start = std::chrono::steady_clock::now();
  RunResult r = node.Hcuctl({"plugins", "--check"});
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  BOOST_TEST_MESSAGE("plugins --check with 2 foreign sockets: exit " << r.exit_code << " in " << ms
                                                                     << " ms");
  BOOST_TEST(r.exit_code == 0, r.err);
  BOOST_TEST(ms < 1000);
}

// Item 12: kubelet never asks for one device twice; neither does hcuctl.
BOOST_AUTO_TEST_CASE(allocate_refuses_a_repeated_id) {
  LiveNode node(SourcePath("demo/nodes/k100ai-8.yaml"));
  RunResult r =
      node.Hcuctl({"allocate", "--resource", "hcu", "--ids", "0000:09:00.0,0000:09:00.0"});
  BOOST_TEST(r.exit_code == 2, r.out);
  BOOST_TEST(Contains(r.err, "0000:09:00.0 is given twice"), r.err);
  BOOST_TEST(r.out.empty());
}

BOOST_AUTO_TEST_CASE(allocate_count_takes_the_plugins_topology_preference) {
  LiveNode node(SourcePath("test/fixtures/two-islands.yaml"));
  RunResult r = node.Hcuctl({"allocate", "--resource", "hcu", "--count", "4"});
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  BOOST_TEST(Contains(r.out, "plugin (GetPreferredAllocation)"), r.out);
  // Islands: cards 0-3 (NUMA 0) and 4-7 (NUMA 1); the pick is one island.
  std::set<std::string> island_a, island_b;
  for (const char* card : {"card1", "card2", "card3", "card4"}) island_a.insert(card);
  for (const char* card : {"card5", "card6", "card7", "card8"}) island_b.insert(card);
  int in_a = 0;
  int in_b = 0;
  for (const std::string& c : island_a) in_a += Contains(r.out, "/dev/dri/" + c + " ");
  for (const std::string& c : island_b) in_b += Contains(r.out, "/dev/dri/" + c + " ");
  BOOST_TEST(((in_a == 4 && in_b == 0) || (in_a == 0 && in_b == 4)), r.out);
}

BOOST_AUTO_TEST_CASE(allocate_ids_of_a_vhcu_shows_its_conf_mount) {
  LiveNode node(SourcePath("demo/nodes/z100l-mixed.yaml"));
  RunResult r = node.Hcuctl(
      {"allocate", "--resource", "hygon.com/hcu-share-30c-16g", "--ids", "vdev4", "-o", "json"});
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  BOOST_TEST(Contains(r.out, "\"hostPath\": \"/etc/vdev/vdev4.conf\""), r.out);
  BOOST_TEST(Contains(r.out, "\"containerPath\": \"/etc/vdev/docker/vdev4.conf\""), r.out);
  BOOST_TEST(Contains(r.out, "\"hostPath\": \"/dev/dri/renderD131\""), r.out);
  BOOST_TEST(Contains(r.out, "\"fromPreferredAllocation\": false"), r.out);
}

BOOST_AUTO_TEST_CASE(allocate_reports_the_plugins_refusal) {
  LiveNode node(SourcePath("demo/nodes/z100l-mixed.yaml"));
  // The plugin answers INVALID_ARGUMENT: the user's IDs are bad input (2).
  RunResult unknown = node.Hcuctl({"allocate", "--resource", "hcu", "--ids", "0000:ff:00.0"});
  BOOST_TEST(unknown.exit_code == 2);
  BOOST_TEST(Contains(unknown.err, "0000:ff:00.0"), unknown.err);
  RunResult missing = node.Hcuctl({"allocate", "--resource", "hcu-mig-2g-15gb", "--count", "1"});
  BOOST_TEST(missing.exit_code == 1);
  BOOST_TEST(Contains(missing.err, "serving: hygon.com/hcu"), missing.err);
}

BOOST_AUTO_TEST_CASE(allocations_lists_hcu_holders_and_hami_mark_files) {
  TempDir dir;
  FakePodResources kubelet(dir.Join("pod-resources/kubelet.sock"));
  BOOST_REQUIRE(kubelet.Start().empty());
  kubelet.AddContainerDevices("default", "train-0", "main", "hygon.com/hcu",
                              {"0000:09:00.0", "0000:29:00.0"});
  kubelet.AddContainerDevices("team-b", "infer", "server", "hygon.com/hcu-share-15c-8g", {"vdev2"});
  kubelet.AddContainerDevices("team-c", "cuda", "app", "nvidia.com/gpu", {"GPU-1"});
  WriteFile(dir.Join("root/etc/vdev/dynamic/7d3c-uid_server_2_5"), "2026-11-29 10:00:00");

  RunResult r = Run({Hcuctl(), "--pod-resources-socket=" + kubelet.socket_path(),
                     "--host-root=" + dir.Join("root"), "allocations"});
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  BOOST_TEST(Contains(r.out, "default    train-0  main       hygon.com/hcu"), r.out);
  BOOST_TEST(Contains(r.out, "0000:09:00.0,0000:29:00.0"), r.out);
  BOOST_TEST(Contains(r.out, "hygon.com/hcu-share-15c-8g  vdev2"), r.out);
  BOOST_TEST(!Contains(r.out, "nvidia.com/gpu"), r.out);
  BOOST_TEST(Contains(r.out, "7d3c-uid  server     2     vdev5"), r.out);

  RunResult all = Run({Hcuctl(), "--pod-resources-socket=" + kubelet.socket_path(),
                       "--host-root=" + dir.Join("root"), "allocations", "--all-resources"});
  BOOST_TEST(Contains(all.out, "nvidia.com/gpu"), all.out);
  BOOST_TEST(kubelet.list_calls() == 2);
}

// The pod-resources socket named relative to the current directory (as the
// plugin directory above): gRPC would read "unix://pod-resources/..." as an
// authority and fail to dial.
BOOST_AUTO_TEST_CASE(allocations_reach_pod_resources_through_a_relative_socket_path) {
  TempDir dir;
  FakePodResources kubelet(dir.Join("pod-resources/kubelet.sock"));
  BOOST_REQUIRE(kubelet.Start().empty());
  kubelet.AddContainerDevices("default", "train-0", "main", "hygon.com/hcu", {"0000:09:00.0"});
  RunResult r = Run({"/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", dir.path(), Hcuctl(),
                     "--pod-resources-socket=pod-resources/kubelet.sock",
                     "--host-root=" + dir.Join("root"), "allocations"});
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  BOOST_TEST(Contains(r.out, "default    train-0  main       hygon.com/hcu"), r.out);
  BOOST_TEST(kubelet.list_calls() == 1);
}

// hcuctl vhcu destroy (issue 9.5): a vHCU that kubelet's pod-resources says a
// pod holds is refused (exit 1) and the pod named, even without a mark file;
// --force destroys it anyway.
BOOST_AUTO_TEST_CASE(vhcu_destroy_refuses_a_vhcu_kubelet_says_a_pod_holds) {
  TempDir dir;
  FakePodResources kubelet(dir.Join("pod-resources/kubelet.sock"));
  BOOST_REQUIRE(kubelet.Start().empty());
  auto vhcu = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {Hcuctl(),
                                     "--backend=sim",
                                     "--sim-node=" + SourcePath("demo/nodes/z100l-mixed.yaml"),
                                     "--host-root=" + dir.Join("root"),
                                     "--pod-resources-socket=" + kubelet.socket_path(),
                                     "vhcu"};
    argv.insert(argv.end(), args.begin(), args.end());
    return Run(argv);
  };
  RunResult created = vhcu({"create", "--card", "0", "--cu", "20", "--mem-mib", "4096"});
  BOOST_REQUIRE_MESSAGE(created.exit_code == 0, created.err);
  BOOST_REQUIRE(PathExists(dir.Join("root/etc/vdev/vdev6.conf")));
  kubelet.AddContainerDevices("team-b", "infer", "server", "hygon.com/hcu-share-20c-4g", {"vdev6"});

  RunResult refused = vhcu({"destroy", "vdev6"});
  BOOST_TEST(refused.exit_code == 1, refused.err);
  BOOST_TEST(Contains(refused.err, "team-b/infer (container server"), refused.err);
  BOOST_TEST(Contains(refused.err, "--force"), refused.err);
  BOOST_TEST(PathExists(dir.Join("root/etc/vdev/vdev6.conf")));

  RunResult forced = vhcu({"destroy", "--force", "vdev6"});
  BOOST_TEST(forced.exit_code == 0, forced.err);
  BOOST_TEST(!PathExists(dir.Join("root/etc/vdev/vdev6.conf")));
}

BOOST_AUTO_TEST_CASE(allocations_without_kubelet_says_which_socket) {
  TempDir dir;
  RunResult r = Run({Hcuctl(), "--pod-resources-socket=" + dir.Join("none.sock"), "allocations"});
  BOOST_TEST(r.exit_code == 1);
  BOOST_TEST(Contains(r.err, dir.Join("none.sock")), r.err);
  BOOST_TEST(Contains(r.err, "--pod-resources-socket"), r.err);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
