#include "integration/daemon_harness.h"

#include <sys/stat.h>

#include <boost/test/results_collector.hpp>
#include <boost/test/unit_test.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "hcudp/sim_node.h"

namespace hcudp::testing {
namespace {

namespace fs = std::filesystem;

bool CurrentTestFailed() {
  using boost::unit_test::framework::current_test_case;
  return !boost::unit_test::results_collector.results(current_test_case().p_id).passed();
}

std::string Join(const std::set<std::string>& s) {
  std::string out;
  for (const std::string& x : s) out += (out.empty() ? "" : ", ") + x;
  return "{" + out + "}";
}

}  // namespace

std::string DaemonHarness::ListPluginDir() const {
  std::ostringstream out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(plugin_dir(), ec)) {
    struct stat st {};
    ::lstat(entry.path().c_str(), &st);
    out << "  " << entry.path().filename().string() << " inode " << st.st_ino
        << (S_ISSOCK(st.st_mode) ? " socket" : " not a socket") << "\n";
  }
  return out.str();
}

std::string DaemonBinary() { return BinaryPath("hcu-dp-daemon/hcu-dp-daemon"); }

bool UsingHostBackend() {
  const char* backend = std::getenv("HCUDP_TEST_BACKEND");
  return backend != nullptr && std::string(backend) == "host";
}

std::string HyhalPath() {
#ifdef HCUDP_STUB_HYHAL
  if (UsingHostBackend()) return HCUDP_STUB_HYHAL;
#endif
  return "/opt/hyhal";
}

const std::vector<std::string>& DaemonEnvVars() {
  static const std::vector<std::string> kVars = {
      "RESOURCE_REGISTER_STRATEGY", "POLICY", "PULSE", "NODE_NAME", "TOPOLOGY_REGISTER",
      "RESOURCE_MULTIPLE", "DEVICE_SPLIT_COUNT", "LOG_LEVEL", "LOG_SEVERITY",
      "DEVICE_PLUGIN_PATH", "POD_RESOURCES_SOCKET", "HCU_BACKEND", "HCU_SIM_NODE", "HOST_ROOT",
      "HYHAL_PATH", "DEVICE_LIST_STRATEGY", "CDI_SPEC_DIR", "KUBECONFIG",
      "EVICT_UNACCOUNTED_PODS", "HCUDP_TEST_ONLY_CRASH_AFTER", "NODE_LABELS",
      "NFD_FEATURES_DIR", "EVENTS", "DRA_DRIVER_NAME", "KUBELET_PLUGINS_DIR",
      "KUBELET_REGISTRY_DIR", "METRICS_ADDRESS"};
  return kVars;
}

DaemonHarness::DaemonHarness(const std::string& node, std::vector<std::string> flags,
                             std::vector<std::string> env)
    : env_(std::move(env)) {
  WriteFile(node_path(), ReadFile(SourcePath(node)));
  fs::create_directories(host_root());
  fs::create_directories(cdi_dir());
  argv_ = {DaemonBinary(),
           "--backend=sim",
           "--sim-node=" + node_path(),
           "--host-root=" + host_root(),
           "--device-plugin-path=" + plugin_dir() + "/",
           "--cdi-spec-dir=" + cdi_dir(),
           "--hyhal-path=" + HyhalPath()};
  if (UsingHostBackend()) {
    // The real node path: DlopenVendorLib loads the stand-in libraries,
    // which answer from (and render) the same SimNode copy.
    // Set in this process so that every daemon a test starts inherits it;
    // the stand-ins render under each daemon's own --host-root.
    argv_[1] = "--backend=host";
    argv_.erase(argv_.begin() + 2);
    setenv("HCUDP_STUB_SIM_NODE", node_path().c_str(), 1);
  }
  argv_.insert(argv_.end(), flags.begin(), flags.end());
  kubelet_ = std::make_unique<FakeKubelet>(FakeKubelet::Config{plugin_dir()});
}

DaemonHarness::~DaemonHarness() {
  daemon_.Stop(seconds(5));
  kubelet_->Stop();
  if (CurrentTestFailed()) {
    std::string args;
    for (const std::string& a : argv_) args += " " + a;
    std::cerr << "daemon command:" << args << "\n--- daemon output ---\n"
              << daemon_.Log() << "--- end of daemon output ---\n";
  }
}

void DaemonHarness::Start(bool start_kubelet) {
  if (start_kubelet) StartKubelet();
  StartDaemon();
}

void DaemonHarness::StartKubelet() { BOOST_REQUIRE_EQUAL(kubelet_->Start(), ""); }

void DaemonHarness::StartDaemon() {
  BOOST_REQUIRE_MESSAGE(PathExists(DaemonBinary()), "no daemon binary at " << DaemonBinary());
  started_at_ = std::chrono::steady_clock::now();
  BOOST_REQUIRE_EQUAL(daemon_.Start(argv_, log_path(), env_, DaemonEnvVars()), "");
}

ResourceSnapshot DaemonHarness::RequireRegistered(const std::string& resource, int count,
                                                  milliseconds timeout) {
  std::optional<ResourceSnapshot> snap = kubelet_->WaitForRegistration(resource, timeout, count);
  if (!snap.has_value()) {
    std::string registered;
    for (const std::string& r : kubelet_->Resources()) registered += " " + r;
    std::cerr << "registered resources:" << registered << "\n";
    std::cerr << "plugin directory:\n" << ListPluginDir();
    for (const RegisterAttempt& a : kubelet_->RegisterLog()) {
      std::cerr << "Register(" << a.request.resource_name() << ", " << a.request.endpoint()
                << ") -> " << (a.error.empty() ? "OK" : a.error) << "\n";
    }
  }
  BOOST_REQUIRE_MESSAGE(snap.has_value(), resource << " not registered (" << count
                                                   << " time(s)) within " << timeout.count()
                                                   << " ms; daemon running: " << daemon_.Running());
  return *snap;
}

ResourceSnapshot DaemonHarness::RequireIds(const std::string& resource,
                                           const std::set<std::string>& ids, milliseconds timeout) {
  auto snap = kubelet_->WaitForDevices(
      resource, [&ids](const auto& devices) { return Ids(devices) == ids; }, timeout);
  if (!snap.has_value()) {
    auto last = kubelet_->Snapshot(resource);
    std::cerr << resource
              << " last device list: " << (last ? Join(Ids(last->devices)) : "(never registered)")
              << "\n";
  }
  BOOST_REQUIRE_MESSAGE(snap.has_value(), resource << " never listed exactly " << Join(ids));
  return *snap;
}

void DaemonHarness::EditNode(const std::function<void(YAML::Node&)>& edit) {
  YAML::Node node = YAML::LoadFile(node_path());
  edit(node);
  YAML::Emitter out;
  out << node;
  std::string text = std::string(out.c_str()) + "\n";
  auto parsed = ParseSimNode(text);
  BOOST_REQUIRE_MESSAGE(parsed.ok(), "edited node does not parse: " << parsed.status().ToString()
                                                                    << "\n"
                                                                    << text);
  const std::string tmp = node_path() + ".tmp";
  WriteFile(tmp, text);
  fs::rename(tmp, node_path());
}

void DaemonHarness::SetCardHealth(int card_index, const std::string& health) {
  EditNode([&](YAML::Node& node) {
    for (YAML::Node card : node["cards"]) {
      if (card["index"].as<int>() == card_index) card["health"] = health;
    }
  });
}

void DaemonHarness::RemoveCard(int card_index) {
  EditNode([&](YAML::Node& node) {
    YAML::Node kept;
    for (const YAML::Node& card : node["cards"]) {
      if (card["index"].as<int>() != card_index) kept.push_back(card);
    }
    node["cards"] = kept;
  });
}

std::vector<std::string> DaemonHarness::PluginSockets() const {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(plugin_dir(), ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("hygon.com_", 0) == 0) names.push_back(name);
  }
  return names;
}

v1beta1::ContainerAllocateResponse AllocateOne(DaemonHarness& h, const std::string& resource,
                                               const std::vector<std::string>& ids) {
  h.RequireRegistered(resource);
  v1beta1::AllocateResponse response;
  grpc::Status s = h.kubelet().Allocate(resource, {ids}, &response);
  BOOST_REQUIRE_MESSAGE(s.ok(), "Allocate failed: " << s.error_message());
  BOOST_REQUIRE_EQUAL(response.container_responses_size(), 1);
  return response.container_responses(0);
}

std::set<std::string> Ids(const std::vector<v1beta1::Device>& devices) {
  std::set<std::string> ids;
  for (const auto& d : devices) ids.insert(d.id());
  return ids;
}

std::set<std::string> DeviceSpecs(const v1beta1::ContainerAllocateResponse& response) {
  std::set<std::string> specs;
  for (const auto& d : response.devices()) {
    specs.insert(d.host_path() + " -> " + d.container_path() + " (" + d.permissions() + ")");
  }
  return specs;
}

std::set<std::string> Mounts(const v1beta1::ContainerAllocateResponse& response) {
  std::set<std::string> mounts;
  for (const auto& m : response.mounts()) {
    mounts.insert(m.host_path() + " -> " + m.container_path() +
                  (m.read_only() ? " (ro)" : " (rw)"));
  }
  return mounts;
}

std::string DeviceSpec(const std::string& path, const std::string& permissions) {
  return path + " -> " + path + " (" + permissions + ")";
}

std::string Mount(const std::string& host, const std::string& container, bool read_only) {
  return host + " -> " + container + (read_only ? " (ro)" : " (rw)");
}

const std::vector<std::string>& K100Bdfs() {
  static const std::vector<std::string> kBdfs = {"0000:09:00.0", "0000:29:00.0", "0000:49:00.0",
                                                 "0000:69:00.0", "0000:89:00.0", "0000:a9:00.0",
                                                 "0000:c9:00.0", "0000:e9:00.0"};
  return kBdfs;
}

const char kZ100lCard0Vdev6Conf[] =
    "PciBusId: 0000:0b:00.0\n"
    "cu_mask: 0x00000000000fffff\n"
    "cu_mask: 0x0000000000000000\n"
    "cu_count: 20\n"
    "mem: 4096 MiB\n"
    "device_id: 0\n"
    "vdev_id: 6\n"
    "pipe_id: 0\n"
    "enable: 1\n";

std::vector<std::string> MigIds(const std::string& profile) {
  struct Instance {
    const char* profile;
    const char* uuid;
  };
  static const Instance kInstances[] = {
      {"2g.15gb", "6513270e-269e-4d37-b2a7-4de452e6b438"},
      {"2g.15gb", "d23f0824-128b-4f33-8c5c-7fd0a6a3a450"},
      {"2g.15gb", "9531985d-5d9d-49f8-9818-e811892f902b"},
      {"2g.15gb", "36f675cc-81e7-4ef5-a8e2-5d940ed90475"},
      {"4g.31gb", "6b0d549b-6f03-475a-9600-a35a099950d8"},
      {"4g.31gb", "8d116ece-1738-47d9-bd9c-172411e20b8f"},
      {"8g.63gb", "90c192cf-d3ac-44af-8f21-ddb66cad4a26"},
      {"2g.15gb", "a170b338-3926-4059-b28c-105d1fb17c23"},
      {"4g.31gb", "0fd630f1-f29d-4da9-953f-48f1a09f76b5"},
  };
  std::vector<std::string> ids;
  for (const Instance& i : kInstances) {
    if (profile == i.profile) ids.push_back(std::string("MIG-") + i.uuid);
  }
  return ids;
}

}  // namespace hcudp::testing
