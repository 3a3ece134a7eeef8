// `hcuctl names --strategy=dra` (the device names DRA mode publishes, from the
// same pool as `hcuctl dra slices`) and `hcuctl doctor --strategy=dra` (the
// DRA checks of doctor_dra.h on rendered trees, and through the binary).
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cerrno>
#include <cstring>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "doctor_dra.h"
#include "testing/testutil.h"

namespace hcudp::testing {
namespace {

using hcuctl::DraDoctorOptions;
using hcuctl::RunDraChecks;

RunResult OnNode(const TempDir& root, const std::string& node, std::vector<std::string> args) {
  std::vector<std::string> argv = {BinaryPath("hcuctl/hcuctl"), "--backend=sim",
                                   "--sim-node=" + SourcePath("demo/nodes/" + node + ".yaml"),
                                   "--host-root=" + root.Join("root")};
  argv.insert(argv.end(), args.begin(), args.end());
  return Run(argv);
}

std::vector<std::string> AllMatches(const std::string& text, const std::string& pattern) {
  std::vector<std::string> out;
  const std::regex re(pattern);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
       ++it) {
    out.push_back((*it)[1].str());
  }
  return out;
}

BOOST_AUTO_TEST_SUITE(hcuctl_dra_cli)

// The names are the slices' names (one builder), in PCI order even where the
// driver probed the cards in another order, and are hcu-<bdf> of each card.
BOOST_AUTO_TEST_CASE(names_dra_lists_the_published_device_names) {
  TempDir root;
  const std::string node = "k100ai-8-probe-order";
  RunResult names = OnNode(root, node, {"names", "--strategy=dra", "--node-name=n1", "-o", "json"});
  BOOST_REQUIRE_MESSAGE(names.exit_code == 0, names.err);
  RunResult slices = OnNode(root, node, {"dra", "slices", "--node-name=n1", "-o", "json"});
  BOOST_REQUIRE_MESSAGE(slices.exit_code == 0, slices.err);
  RunResult devices = OnNode(root, node, {"devices", "-o", "json"});
  BOOST_REQUIRE_MESSAGE(devices.exit_code == 0, devices.err);

  const std::vector<std::string> got = AllMatches(names.out, R"re("name": "(hcu-[^"]+)")re");
  const std::vector<std::string> published = AllMatches(slices.out, R"re("name": "(hcu-[^"]+)")re");
  // 7 whole cards and the 2 pre-split vHCUs of the eighth (not offered whole).
  BOOST_TEST(got.size() == 9u, names.out);
  BOOST_TEST(got == published, names.out << "\nvs\n" << slices.out);
  BOOST_TEST(std::is_sorted(got.begin(), got.end()), "not in PCI order");
  std::vector<std::string> bdfs = AllMatches(devices.out, R"re("bdf": "([0-9a-f:.]+)")re");
  std::sort(bdfs.begin(), bdfs.end());
  bdfs.erase(std::unique(bdfs.begin(), bdfs.end()), bdfs.end());
  BOOST_TEST(bdfs.size() == 8u, devices.out);
  for (std::string b : bdfs) {
    std::replace(b.begin(), b.end(), ':', '-');
    std::replace(b.begin(), b.end(), '.', '-');
    const std::string card = "hcu-" + b;
    BOOST_TEST(std::count_if(got.begin(), got.end(),
                             [&](const std::string& n) {
                               return n == card || n.rfind(card + "-vdev", 0) == 0;
                             }) >= 1,
               card << " (or its vHCUs) missing");
  }
  BOOST_TEST(names.out.find(R"("strategy": "dra")") != std::string::npos);
  BOOST_TEST(names.out.find(R"("pool": "n1")") != std::string::npos);

  // The table: one device a row with its card and slice.
  RunResult table = OnNode(root, node, {"names", "--strategy=dra", "--node-name=n1"});
  BOOST_TEST(table.exit_code == 0);
  BOOST_TEST(table.out.find("driver dra.hygon.com, pool n1") != std::string::npos, table.out);
  BOOST_TEST(std::regex_search(
                 table.out, std::regex(R"(\nhcu-0000-09-00-0 +hcu +0000:09:00.0 +0 +healthy\n)")),
             table.out);
}

// MIG nodes offer MIG instances, never the cards carrying them; a pre-split
// vHCU is a device of its own and its card is no longer offered whole.
BOOST_AUTO_TEST_CASE(names_dra_on_mig_and_vhcu_nodes) {
  TempDir mig_root;
  RunResult mig = OnNode(mig_root, "bw-mig", {"names", "--strategy=dra", "--node-name=n1"});
  BOOST_REQUIRE_MESSAGE(mig.exit_code == 0, mig.err);
  BOOST_TEST(std::regex_search(mig.out, std::regex(R"(\nhcu-0000-09-00-0-mig-\d+-\d+ +mig )")),
             mig.out);
  BOOST_TEST(!std::regex_search(mig.out, std::regex(R"(\nhcu-0000-09-00-0 )")), mig.out);

  TempDir root;
  RunResult made = OnNode(root, "z100l-mixed",
                          {"vhcu", "create", "--card", "1", "--cu", "10", "--mem-mib", "1024"});
  BOOST_REQUIRE_MESSAGE(made.exit_code == 0, made.out << made.err);
  RunResult names =
      OnNode(root, "z100l-mixed", {"names", "--strategy=dra", "--node-name=n1", "-o", "json"});
  BOOST_REQUIRE_MESSAGE(names.exit_code == 0, names.err);
  const std::vector<std::string> vhcus =
      AllMatches(names.out, R"re("name": "(hcu-[^"]+-vdev\d+)")re");
  BOOST_TEST(!vhcus.empty(), names.out);
  RunResult slices = OnNode(root, "z100l-mixed", {"dra", "slices", "--node-name=n1", "-o", "json"});
  BOOST_TEST(AllMatches(names.out, R"re("name": "(hcu-[^"]+)")re") ==
             AllMatches(slices.out, R"re("name": "(hcu-[^"]+)")re"));
}

BOOST_AUTO_TEST_CASE(names_dra_refuses_a_bad_node_name) {
  TempDir root;
  RunResult r = OnNode(root, "k100ai-8", {"names", "--strategy=dra", "--node-name=Not_A_Node"});
  BOOST_TEST(r.exit_code == 2, r.out << r.err);
  BOOST_TEST(r.err.find("Not_A_Node") != std::string::npos, r.err);
  // Still refused: a strategy nobody has.
  r = OnNode(root, "k100ai-8", {"names", "--strategy=dras"});
  BOOST_TEST(r.exit_code == 2);
}

// --- doctor --strategy=dra ---------------------------------------------------

const hcudp::DoctorCheck* Find(const std::vector<hcudp::DoctorCheck>& checks,
                               const std::string& name) {
  for (const auto& c : checks) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

// A unix socket at `path`: bound at `short_path` (sun_path holds 108 bytes;
// the same file system as `path`), then renamed into place.
int BindSocket(const std::string& short_path, const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  BOOST_REQUIRE(fd >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  BOOST_REQUIRE_MESSAGE(short_path.size() < sizeof addr.sun_path, short_path);
  std::strncpy(addr.sun_path, short_path.c_str(), sizeof addr.sun_path - 1);
  BOOST_REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  BOOST_REQUIRE_MESSAGE(::rename(short_path.c_str(), path.c_str()) == 0,
                        "rename to " << path << ": " << std::strerror(errno));
  return fd;
}

// A node where everything DRA mode needs is in place.
struct DraTree {
  TempDir dir;
  DraDoctorOptions o;
  int sock = -1;
  DraTree() {
    o.host_root = dir.Join("root");
    WriteFile(dir.Join("root/var/lib/kubelet/plugins_registry/.keep"), "");
    WriteFile(dir.Join("root/var/run/cdi/.keep"), "");
    WriteFile(dir.Join("root/var/lib/hcu-device-plugin/dra/.keep"), "");
    WriteFile(dir.Join("root/var/lib/kubelet/plugins/dra.hygon.com/.keep"), "");
    sock = BindSocket(dir.Join("s.sock"),
                      dir.Join("root/var/lib/kubelet/plugins/dra.hygon.com/dra.sock"));
    WriteFile(dir.Join("token"), "sa-token\n");
    WriteFile(dir.Join("kubeconfig"),
              "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
              "clusters:\n- name: c\n  cluster:\n    server: https://10.0.0.1:6443\n"
              "    insecure-skip-tls-verify: true\n"
              "contexts:\n- name: c\n  context:\n    cluster: c\n    user: u\n"
              "users:\n- name: u\n  user:\n    tokenFile: " +
                  dir.Join("token") + "\n");
    o.kubeconfig = dir.Join("kubeconfig");
    o.node_name = "node-a";
    o.home = dir.Join("home");
  }
  ~DraTree() { ::close(sock); }
};

BOOST_AUTO_TEST_CASE(doctor_dra_passes_a_ready_node) {
  DraTree t;
  const auto checks = RunDraChecks(t.o);
  std::vector<std::string> names;
  for (const auto& c : checks) {
    names.push_back(c.name);
    BOOST_TEST((c.status == hcudp::CheckStatus::kOk), c.name << ": " << c.detail << " / " << c.fix);
  }
  BOOST_TEST(names == (std::vector<std::string>{"dra-plugins-dir", "dra-registry-dir", "dra-socket",
                                                "cdi-dir", "dra-checkpoint", "node-name",
                                                "kube-credentials"}));
  const auto* creds = Find(checks, "kube-credentials");
  BOOST_REQUIRE(creds != nullptr);
  BOOST_TEST(creds->detail.find("https://10.0.0.1:6443") != std::string::npos, creds->detail);
  BOOST_TEST(creds->detail.find("sa-token") == std::string::npos, "a secret in " << creds->detail);
}

BOOST_AUTO_TEST_CASE(doctor_dra_names_each_broken_prerequisite) {
  DraTree t;
  // kubelet's registry missing: nothing would ever register the driver.
  t.o.registry_dir = "/var/lib/k0s/kubelet/plugins_registry";
  // The plugins dir is a file; the CDI dir is missing (the daemon makes it).
  t.o.plugins_dir = "/var/lib/kubelet/plugins-file";
  WriteFile(t.dir.Join("root/var/lib/kubelet/plugins-file"), "");
  t.o.cdi_spec_dir = "/run/cdi-elsewhere";
  // A corrupt checkpoint entry; an empty token file; a bad node name.
  WriteFile(
      t.dir.Join("root/var/lib/hcu-device-plugin/dra/0b8e7c3e-1111-2222-3333-444455556666.json"),
      "{not json");
  WriteFile(t.dir.Join("token"), "\n");
  t.o.node_name = "Node_A";
  const auto checks = RunDraChecks(t.o);
  auto status = [&](const std::string& name) {
    const auto* c = Find(checks, name);
    BOOST_REQUIRE_MESSAGE(c != nullptr, name);
    BOOST_TEST_MESSAGE(name << ": " << hcudp::CheckStatusName(c->status) << " " << c->detail);
    BOOST_TEST(!c->detail.empty());
    if (c->status != hcudp::CheckStatus::kOk) BOOST_TEST(!c->fix.empty(), name << " has no fix");
    return std::string(hcudp::CheckStatusName(c->status)) + " " + c->detail;
  };
  BOOST_TEST(
      status("dra-registry-dir").rfind("fail /var/lib/k0s/kubelet/plugins_registry missing", 0) ==
      0u);
  BOOST_TEST(
      status("dra-plugins-dir").rfind("fail /var/lib/kubelet/plugins-file is not a directory", 0) ==
      0u);
  BOOST_TEST(status("dra-socket").rfind("warn ", 0) == 0u);
  BOOST_TEST(status("cdi-dir").rfind("warn /run/cdi-elsewhere missing; the daemon creates it", 0) ==
             0u);
  BOOST_TEST(status("dra-checkpoint").find("1 unreadable entry") != std::string::npos);
  BOOST_TEST(status("dra-checkpoint").rfind("warn ", 0) == 0u);
  BOOST_TEST(status("node-name").rfind("fail ", 0) == 0u);
  BOOST_TEST(status("node-name").find("Node_A") != std::string::npos);
  BOOST_TEST(status("kube-credentials").rfind("fail ", 0) == 0u);
  BOOST_TEST(status("kube-credentials").find("is empty") != std::string::npos);

  // No credentials anywhere: no --kubeconfig, no service account, no $HOME one.
  t.o.kubeconfig.clear();
  t.o.in_cluster.token_file = t.dir.Join("no-such-token");
  t.o.in_cluster.ca_file = t.dir.Join("no-such-ca");
  BOOST_TEST(status("kube-credentials").rfind("fail ", 0) == 0u);
  // ... checked again on a fresh run: the list is rebuilt every time.
  const auto again = RunDraChecks(t.o);
  BOOST_TEST((Find(again, "kube-credentials")->status == hcudp::CheckStatus::kFail));
}

// Through the binary: the DRA checks replace the device-plugin directory
// checks, and as a user who cannot write kubelet's directories every
// writable check fails (access(2) is what the daemon tests at start-up).
BOOST_AUTO_TEST_CASE(doctor_strategy_dra_through_the_binary) {
  DraTree t;
  ::chmod(t.dir.path().c_str(), 0755);
  ::chmod(t.dir.Join("token").c_str(), 0644);
  ::chmod(t.dir.Join("kubeconfig").c_str(), 0644);
  std::vector<std::string> argv = {BinaryPath("hcuctl/hcuctl"),
                                   "--host-root=" + t.o.host_root,
                                   "--kubeconfig=" + t.o.kubeconfig,
                                   "doctor",
                                   "--strategy=dra",
                                   "--node-name=node-a"};
  RunResult r = Run(argv);
  BOOST_TEST(r.exit_code == 1, r.out << r.err);  // no driver in the tree
  for (const char* name : {"dra-plugins-dir", "dra-registry-dir", "dra-socket", "cdi-dir",
                           "dra-checkpoint", "node-name", "kube-credentials"}) {
    BOOST_TEST(std::regex_search(r.out, std::regex(std::string("\nok +") + name + " ")),
               name << " not ok:\n"
                    << r.out);
  }
  for (const char* dp : {"kubelet-plugin-dir", "kubelet-socket", "plugin-sockets"}) {
    BOOST_TEST(r.out.find(dp) == std::string::npos, dp << " in DRA mode:\n" << r.out);
  }
  // The device-plugin strategies keep theirs.
  argv = {BinaryPath("hcuctl/hcuctl"), "--host-root=" + t.o.host_root, "doctor"};
  RunResult dp = Run(argv);
  BOOST_TEST(dp.out.find("kubelet-socket") != std::string::npos, dp.out);
  BOOST_TEST(dp.out.find("dra-registry-dir") == std::string::npos, dp.out);

  if (::geteuid() != 0) return;  // the non-root half needs to switch users
  argv.clear();
  argv = {"/usr/bin/setpriv",
          "--reuid=65534",
          "--regid=65534",
          "--clear-groups",
          BinaryPath("hcuctl/hcuctl"),
          "--host-root=" + t.o.host_root,
          "--kubeconfig=" + t.o.kubeconfig,
          "doctor",
          "--strategy=dra",
          "--node-name=node-a"};
  if (!PathExists(argv[0])) return;
  RunResult nobody = Run(argv);
  for (const char* name : {"dra-plugins-dir", "dra-registry-dir", "cdi-dir", "dra-checkpoint"}) {
    BOOST_TEST(std::regex_search(
                   nobody.out, std::regex(std::string("\nfail +") + name + " .* is not writable")),
               name << " should fail as nobody:\n"
                    << nobody.out << nobody.err);
  }
}

// Issue 23: checkpoint entries that are not regular files or nest 200,000
// levels deep (RapidJSON recursed until SIGSEGV) are named by `hcuctl dra
// prepared`, which exits 1, and by `doctor --strategy=dra`; neither crashes,
// nor blocks on the FIFO; every entry is left in place.
BOOST_AUTO_TEST_CASE(hostile_checkpoint_entries_are_named_by_prepared_and_doctor) {
  DraTree t;
  const std::string dir = t.dir.Join("root/var/lib/hcu-device-plugin/dra");
  BOOST_REQUIRE(::mkfifo((dir + "/f1.json").c_str(), 0644) == 0);
  BOOST_REQUIRE(::mkdir((dir + "/d1.json").c_str(), 0755) == 0);
  BOOST_REQUIRE(::symlink("/dev/zero", (dir + "/z1.json").c_str()) == 0);
  WriteFile(dir + "/deep1.json", std::string(200000, '['));
  RunResult r =
      Run({BinaryPath("hcuctl/hcuctl"), "--host-root=" + t.o.host_root, "dra", "prepared"});
  BOOST_TEST(r.exit_code == 1, r.out << r.err);
  for (const char* want :
       {"d1.json: a directory, not a regular file", "f1.json: a FIFO, not a regular file",
        "z1.json: a symbolic link, not a regular file",
        "deep1.json: checkpoint: nests deeper than 512 levels"}) {
    BOOST_TEST(r.out.find(want) != std::string::npos, want << " in:\n" << r.out << r.err);
  }
  RunResult d =
      Run({BinaryPath("hcuctl/hcuctl"), "--host-root=" + t.o.host_root,
           "--kubeconfig=" + t.o.kubeconfig, "doctor", "--strategy=dra", "--node-name=node-a"});
  BOOST_TEST(d.exit_code == 1, d.out << d.err);  // the checks ran (no driver in the tree)
  BOOST_TEST(
      std::regex_search(d.out, std::regex("\nwarn +dra-checkpoint .*0 prepared claim\\(s\\), "
                                          "4 unreadable entry\\(ies\\)")),
      d.out);
  for (const char* name : {"f1.json", "d1.json", "z1.json", "deep1.json"}) {
    BOOST_TEST(PathExists(dir + "/" + name), name);
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
