#include "fleet_nodes.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>

#include "bench_util.h"
#include "integration/daemon_harness.h"

namespace hcudp::bench {
namespace {

namespace fs = std::filesystem;

std::string RandomHex(int n) {
  static std::mt19937_64 rng{std::random_device{}()};
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < n; ++i) out += kHex[rng() % 16];
  return out;
}

std::string NodeName(int index) {
  char name[32];
  std::snprintf(name, sizeof name, "node-%03d", index);
  return name;
}

}  // namespace

const char* ModeName(FleetMode mode) {
  switch (mode) {
    case FleetMode::kHami:
      return "hami";
    case FleetMode::kDra:
      return "dra";
    case FleetMode::kMixed:
      return "mixed";
  }
  return "?";
}

FleetNode::FleetNode(const std::string& root, int index, FleetMode mode,
                     const hcudp::testing::FakeApiServer& api, const std::string& sim_node)
    : dir_(root + "/" + NodeName(index)),
      name_(NodeName(index)),
      token_(name_ + "-" + RandomHex(24)),
      mode_(mode) {
  using hcudp::testing::WriteFile;
  WriteFile(dir_ + "/node.yaml", hcudp::testing::ReadFile(sim_node));
  WriteFile(dir_ + "/token", token_);
  // The node's own credentials: the fake's CA, this node's token.
  WriteFile(dir_ + "/kubeconfig",
            "apiVersion: v1\nkind: Config\ncurrent-context: fake\n"
            "clusters:\n- name: fake\n  cluster:\n    server: " +
                api.server_url() + "\n    certificate-authority: " + api.ca_file() +
                "\ncontexts:\n- name: fake\n  context:\n    cluster: fake\n    user: u\n"
                "users:\n- name: u\n  user:\n    tokenFile: " +
                dir_ + "/token\n");
  fs::create_directories(dir_ + "/root/var/run/cdi");
  fs::create_directories(dir_ + "/plugins");
  // As the chart runs each mode (charts/hcu-device-plugin/values.yaml):
  // Events on, the health pulse at its default, topologyRegister off.
  args_ = {"--backend=sim",
           "--sim-node=" + dir_ + "/node.yaml",
           "--host-root=" + dir_ + "/root",
           "--device-plugin-path=" + dir_ + "/plugins/",
           "--cdi-spec-dir=" + dir_ + "/root/var/run/cdi",
           "--node-name=" + name_,
           "--kubeconfig=" + dir_ + "/kubeconfig",
           "--events=true",
           "--log-severity=WARNING"};
  switch (mode) {
    case FleetMode::kHami:
      args_.insert(args_.end(),
                   {"--strategy=hami", "--device-split-count=4", "--topology-register=false"});
      break;
    case FleetMode::kDra:
      fs::create_directories(dir_ + "/kubelet/plugins");
      fs::create_directories(dir_ + "/kubelet/plugins_registry");
      args_.insert(args_.end(),
                   {"--strategy=dra", "--kubelet-plugins-dir=" + dir_ + "/kubelet/plugins",
                    "--kubelet-registry-dir=" + dir_ + "/kubelet/plugins_registry"});
      break;
    case FleetMode::kMixed:
      args_.push_back("--strategy=mixed");
      break;
  }
}

FleetNode::~FleetNode() {
  daemon_.Stop(std::chrono::seconds(5));
  if (kubelet_) kubelet_->Stop();
}

std::string FleetNode::Start(const std::string& daemon_binary) {
  if (mode_ != FleetMode::kDra) {
    kubelet_ = std::make_unique<hcudp::testing::KubeletStub>(dir_ + "/plugins");
    if (!kubelet_->Start(false)) return name_ + ": the kubelet stub did not start";
  }
  std::vector<std::string> argv = {daemon_binary};
  argv.insert(argv.end(), args_.begin(), args_.end());
  const std::string err =
      daemon_.Start(argv, dir_ + "/daemon.log", {}, hcudp::testing::DaemonEnvVars());
  return err.empty() ? "" : name_ + ": " + err;
}

void FleetNode::FailFirstCard() { EditHealth("health: Healthy", "health: Unhealthy"); }
void FleetNode::HealFirstCard() { EditHealth("health: Unhealthy", "health: Healthy"); }

void FleetNode::EditHealth(const std::string& from, const std::string& to) {
  const std::string path = dir_ + "/node.yaml";
  hcudp::testing::WriteFile(path + ".tmp",
                            hcudp::testing::ReplaceFirst(hcudp::testing::ReadFile(path), from, to));
  fs::rename(path + ".tmp", path);
}

size_t FleetNode::Registrations() { return kubelet_ ? kubelet_->registrations().size() : 0; }

FleetMemory MedianMemory(const std::vector<pid_t>& pids) {
  std::vector<double> rss, dirty;
  for (pid_t pid : pids) {
    rss.push_back(ProcKib(pid, "status", "VmRSS:"));
    dirty.push_back(ProcKib(pid, "smaps_rollup", "Private_Dirty:"));
  }
  return {Percentile(rss, 0.5), Percentile(dirty, 0.5)};
}

}  // namespace hcudp::bench
