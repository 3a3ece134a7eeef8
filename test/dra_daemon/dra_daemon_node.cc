#include "dra_daemon/dra_daemon_node.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <boost/test/unit_test.hpp>
#include <csignal>
#include <filesystem>
#include <thread>

#include "dra_prepare/prepare_fixture.h"
#include "hcudp/backend.h"
#include "hcudp/options.h"

namespace hcudp::testing {
namespace {

namespace fs = std::filesystem;

constexpr char kSlicesPath[] = "/apis/resource.k8s.io/v1/resourceslices";

std::string ClaimsPath() {
  return std::string("/apis/resource.k8s.io/v1/namespaces/") + kClaimNs + "/resourceclaims";
}

std::string StringAttr(const rapidjson::Value& attrs, const char* key) {
  if (!attrs.IsObject() || !attrs.HasMember(key)) return "";
  const rapidjson::Value& a = attrs[key];
  if (a.IsObject() && a.HasMember("string") && a["string"].IsString()) {
    return a["string"].GetString();
  }
  return "";
}

std::set<std::string> Names(const std::string& dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (!name.empty() && name[0] != '.') out.insert(name);
  }
  return out;
}

drav1::Claim WireClaim(const AllocatedClaim& c) {
  drav1::Claim w;
  w.set_namespace_(kClaimNs);
  w.set_name(c.name);
  w.set_uid(c.uid);
  return w;
}

std::string Describe(const std::vector<SliceDevice>& devices) {
  std::string out;
  for (const SliceDevice& d : devices) {
    out += "\n  " + d.name + " type=" + d.type + (d.tainted ? " TAINTED" : "");
  }
  return out.empty() ? " (none)" : out;
}

}  // namespace

DraDaemonNode::DraDaemonNode(const std::string& node, std::vector<std::string> flags,
                             std::vector<std::string> env, milliseconds call_timeout) {
  WriteFile(dir_.Join("kubeconfig"),
            "apiVersion: v1\nkind: Config\ncurrent-context: fake\n"
            "clusters:\n- name: fake\n  cluster:\n    server: " +
                api_.server_url() + "\n    certificate-authority: " + api_.ca_file() +
                "\ncontexts:\n- name: fake\n  context:\n    cluster: fake\n    user: u\n"
                "users:\n- name: u\n  user:\n    tokenFile: " +
                api_.token_file() + "\n");
  api_.MustRequest("POST", "/api/v1/nodes",
                   std::string(R"({"metadata":{"name":")") + kDraNode + R"("}})");
  std::vector<std::string> all = {"--strategy=dra", std::string("--node-name=") + kDraNode,
                                  "--kubeconfig=" + dir_.Join("kubeconfig"),
                                  "--kubelet-plugins-dir=" + plugins_dir(),
                                  "--kubelet-registry-dir=" + registry_dir()};
  all.insert(all.end(), flags.begin(), flags.end());
  env_ = env;
  h_ = std::make_unique<DaemonHarness>(node, all, std::move(env));
  // Where the DRA daemon writes CDI specs: /var/run/cdi under the host root
  // (StartDaemon passes it as the host path /var/run/cdi).
  WriteFile(h_->host_root() + "/proc/sys/kernel/random/boot_id",
            "0c7e0000-0000-4000-8000-0000000000a1\n");
  FakePluginWatcher::Config config;
  config.registry_dir = registry_dir();
  config.reconcile_period = milliseconds(200);
  config.retry_backoff = milliseconds(100);
  config.health_retry = milliseconds(200);
  config.call_timeout = call_timeout;
  config.health_mode = FakePluginWatcher::HealthMode::kAdvertised;
  config.on_start = [this] { WipeSlices(); };
  kubelet_ = std::make_unique<FakePluginWatcher>(config);
}

DraDaemonNode::~DraDaemonNode() {
  h_->daemon().Stop(seconds(5));
  kubelet_->Stop();
}

void DraDaemonNode::WipeSlices() {
  // kubelet's wipeResourceSlices: DeleteCollection by node (all drivers).
  api_.Request("DELETE", std::string(kSlicesPath) + "?fieldSelector=spec.nodeName%3D" + kDraNode);
}

void DraDaemonNode::Start() {
  BOOST_REQUIRE_EQUAL(kubelet_->Start(), "");  // wipes the node's slices
  StartDaemon();
  RequireRegistrations(1);
}

void DraDaemonNode::StartDaemon(const std::string& binary, const std::vector<std::string>& env) {
  std::vector<std::string> argv = h_->argv();
  // --cdi-spec-dir as a DaemonSet gives it, a host path: the daemon writes
  // it under the host root, at CdiDir() (DESIGN §4.4; the device-plugin
  // harness gives it already under the host root, the other accepted form).
  for (std::string& a : argv) {
    if (a.rfind("--cdi-spec-dir=", 0) == 0) a = "--cdi-spec-dir=/var/run/cdi";
  }
  if (!binary.empty()) argv[0] = binary;
  BOOST_REQUIRE_MESSAGE(PathExists(argv[0]), "no daemon binary at " << argv[0]);
  std::vector<std::string> all_env = env_;
  all_env.insert(all_env.end(), env.begin(), env.end());
  BOOST_REQUIRE_EQUAL(h_->daemon().Start(argv, h_->log_path(), all_env, DaemonEnvVars()), "");
}

void DraDaemonNode::StopDaemon() {
  BOOST_REQUIRE(h_->daemon().Signal(SIGTERM));
  auto exit = h_->daemon().WaitForExit(seconds(5));
  BOOST_REQUIRE_MESSAGE(exit.has_value(), "the daemon did not exit within 5 s of SIGTERM");
  BOOST_REQUIRE_MESSAGE(exit->exited && exit->code == 0, "daemon: " << exit->ToString());
}

void DraDaemonNode::RequireRegistrations(int count, milliseconds timeout) {
  auto snap = kubelet_->WaitForRegistrations(kDraDriver, count, timeout);
  BOOST_REQUIRE_MESSAGE(snap.has_value(), "driver not registered " << count << " time(s) within "
                                                                   << timeout.count() << " ms");
}

std::vector<std::string> DraDaemonNode::Slices() const {
  FakeResponse r =
      api_.Request("GET", std::string(kSlicesPath) + "?fieldSelector=spec.nodeName%3D" + kDraNode +
                              ",spec.driver%3D" + kDraDriver);
  BOOST_REQUIRE_EQUAL(r.status, 200);
  rapidjson::Document doc;
  doc.Parse(r.body.c_str());
  BOOST_REQUIRE(!doc.HasParseError() && doc.HasMember("items"));
  std::vector<std::string> out;
  for (const rapidjson::Value& item : doc["items"].GetArray()) {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    item.Accept(w);
    out.emplace_back(buf.GetString(), buf.GetSize());
  }
  return out;
}

std::set<std::string> DraDaemonNode::SliceUids() const {
  std::set<std::string> out;
  for (const std::string& json : Slices()) {
    rapidjson::Document doc;
    doc.Parse(json.c_str());
    out.insert(doc["metadata"]["uid"].GetString());
  }
  return out;
}

std::vector<SliceDevice> DraDaemonNode::Devices() const {
  std::vector<SliceDevice> out;
  for (const std::string& json : Slices()) {
    rapidjson::Document doc;
    doc.Parse(json.c_str());
    const rapidjson::Value& spec = doc["spec"];
    if (!spec.HasMember("devices")) continue;
    for (const rapidjson::Value& d : spec["devices"].GetArray()) {
      SliceDevice s;
      s.name = d["name"].GetString();
      if (d.HasMember("attributes")) {
        s.type = StringAttr(d["attributes"], "type");
        s.pci = StringAttr(d["attributes"], "resource.kubernetes.io/pciBusID");
        s.parent = StringAttr(d["attributes"], "parentPciBusID");
        s.product = StringAttr(d["attributes"], "productName");
        s.uuid = StringAttr(d["attributes"], "uuid");
      }
      s.tainted = d.HasMember("taints") && d["taints"].IsArray() && !d["taints"].Empty();
      out.push_back(s);
    }
  }
  return out;
}

std::vector<SliceDevice> DraDaemonNode::RequireDevices(
    const std::function<bool(const std::vector<SliceDevice>&)>& ok, milliseconds timeout,
    const std::string& what) {
  std::vector<SliceDevice> last;
  bool done = PollUntil(
      [&] {
        last = Devices();
        return ok(last);
      },
      timeout);
  BOOST_REQUIRE_MESSAGE(done, what << " not seen within " << timeout.count()
                                   << " ms; the slices have:" << Describe(last));
  return last;
}

std::string DraDaemonNode::NextPodUid() {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "0a0d0000-0000-4000-8000-%012d", ++pods_);
  return buf;
}

AllocatedClaim DraDaemonNode::CreateAllocatedClaim(const std::string& name,
                                                   const std::string& requests_json,
                                                   const std::string& constraints_json) {
  if (!allocator_) {
    auto devices = DevicesFromSlices(Slices(), kDraDriver);
    BOOST_REQUIRE_MESSAGE(devices.ok(), devices.status().ToString());
    allocator_ = std::make_unique<DraAllocator>(kDraDriver, kDraNode, *devices);
  }
  const std::string requests =
      !requests_json.empty() && requests_json[0] == '{' ? "[" + requests_json + "]" : requests_json;
  std::string spec = R"({"devices":{"requests":)" + requests +
                     (constraints_json.empty() ? "" : ",\"constraints\":" + constraints_json) +
                     "}}";
  std::string created = api_.MustRequest(
      "POST", ClaimsPath(),
      R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":")" + name +
          R"("},"spec":)" + spec + "}");
  auto allocated = allocator_->Allocate(created, NextPodUid());
  BOOST_REQUIRE_MESSAGE(allocated.ok(),
                        "allocating " << name << ": " << allocated.status().ToString());
  AllocatedClaim c;
  c.name = name;
  c.by_allocator = true;
  c.json = api_.MustRequest("PUT", ClaimsPath() + "/" + name + "/status", *allocated);
  rapidjson::Document doc;
  doc.Parse(c.json.c_str());
  c.uid = doc["metadata"]["uid"].GetString();
  for (const rapidjson::Value& r : doc["status"]["allocation"]["devices"]["results"].GetArray()) {
    c.devices.push_back(r["device"].GetString());
  }
  return c;
}

AllocatedClaim DraDaemonNode::CreateClaimAllocatedTo(const std::string& name,
                                                     const std::string& device) {
  std::string created = api_.MustRequest(
      "POST", ClaimsPath(),
      R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":")" + name +
          R"("},"spec":{"devices":{"requests":[{"name":"hcu","exactly":{)"
          R"("deviceClassName":"dra.hygon.com","selectors":[{"cel":{"expression":)"
          R"("device.attributes[\"dra.hygon.com\"].type != \"hcu\""}}]}}]}}})");
  return PutAllocation(created, R"({"request":"hcu","driver":")" + std::string(kDraDriver) +
                                    R"(","pool":")" + kDraNode + R"(","device":")" + device +
                                    "\"}");
}

AllocatedClaim DraDaemonNode::PutAllocation(const std::string& created_json,
                                            const std::string& results_json) {
  rapidjson::Document doc;
  doc.Parse(created_json.c_str());
  BOOST_REQUIRE(!doc.HasParseError());
  const std::string status = R"({"allocation":{"devices":{"results":[)" + results_json +
                             R"(]}},"reservedFor":[{"resource":"pods","name":"pod","uid":")" +
                             NextPodUid() + R"("}]})";
  rapidjson::Document st;
  st.Parse(status.c_str());
  BOOST_REQUIRE(!st.HasParseError());
  doc.RemoveMember("status");
  doc.AddMember("status", rapidjson::Value(st, doc.GetAllocator()), doc.GetAllocator());
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  doc.Accept(w);
  AllocatedClaim c;
  c.name = doc["metadata"]["name"].GetString();
  c.uid = doc["metadata"]["uid"].GetString();
  c.json = api_.MustRequest("PUT", ClaimsPath() + "/" + c.name + "/status",
                            std::string(buf.GetString(), buf.GetSize()));
  rapidjson::Document stored;
  stored.Parse(c.json.c_str());
  for (const rapidjson::Value& r : stored["status"]["allocation"]["devices"]["results"].GetArray()) {
    c.devices.push_back(r["device"].GetString());
  }
  return c;
}

std::unique_ptr<Backend> DraDaemonNode::SimBackend() {
  Options o;
  o.backend = BackendKind::kSim;
  o.sim_node_path = h().node_path();
  o.host_root = h().host_root();
  auto backend = OpenBackend(o);
  BOOST_REQUIRE_MESSAGE(backend.ok(), backend.status().ToString());
  return std::move(*backend);
}

void DraDaemonNode::DeleteClaim(const AllocatedClaim& claim) {
  api_.MustRequest("DELETE", ClaimsPath() + "/" + claim.name);
  if (allocator_ && claim.by_allocator) allocator_->Free(claim.json);
}

CallOutcome DraDaemonNode::Prepare(const std::vector<AllocatedClaim>& claims) {
  std::vector<drav1::Claim> wire;
  for (const AllocatedClaim& c : claims) wire.push_back(WireClaim(c));
  return kubelet_->NodePrepareResources(kDraDriver, wire);
}

CallOutcome DraDaemonNode::Unprepare(const std::vector<AllocatedClaim>& claims) {
  std::vector<drav1::Claim> wire;
  for (const AllocatedClaim& c : claims) wire.push_back(WireClaim(c));
  return kubelet_->NodeUnprepareResources(kDraDriver, wire);
}

std::vector<drav1::Device> DraDaemonNode::MustPrepare(const AllocatedClaim& claim) {
  CallOutcome out = Prepare({claim});
  BOOST_REQUIRE_MESSAGE(out.ok(), "NodePrepareResources " << claim.name << ": "
                                                          << out.status.error_message() << " "
                                                          << out.kubelet_error);
  const auto& result = out.prepare.claims().at(claim.uid);
  BOOST_REQUIRE_MESSAGE(result.error().empty(), claim.name << ": " << result.error());
  return {result.devices().begin(), result.devices().end()};
}

void DraDaemonNode::MustUnprepare(const AllocatedClaim& claim) {
  CallOutcome out = Unprepare({claim});
  BOOST_REQUIRE_MESSAGE(out.ok(), "NodeUnprepareResources " << claim.name << ": "
                                                            << out.status.error_message() << " "
                                                            << out.kubelet_error);
  BOOST_REQUIRE_MESSAGE(out.unprepare.claims().at(claim.uid).error().empty(),
                        claim.name << ": " << out.unprepare.claims().at(claim.uid).error());
}

std::set<std::string> DraDaemonNode::CdiFiles() const { return Names(CdiDir()); }
std::set<std::string> DraDaemonNode::Marks() const { return Names(HostPath("/etc/vdev/dynamic")); }
std::set<std::string> DraDaemonNode::Intents() const {
  return Names(HostPath("/var/lib/hcu-device-plugin/intents"));
}

std::set<std::string> DraDaemonNode::CheckpointEntries() const {
  std::set<std::string> out;
  for (const std::string& n : Names(HostPath("/var/lib/hcu-device-plugin/dra"))) {
    if (n.size() > 5 && n.compare(n.size() - 5, 5, ".json") == 0) {
      out.insert(n.substr(0, n.size() - 5));
    }
  }
  return out;
}

std::vector<Vhcu> DraDaemonNode::Vhcus() const {
  Options o;
  o.backend = BackendKind::kSim;
  o.sim_node_path = h_->node_path();
  o.host_root = h_->host_root();
  auto backend = OpenBackend(o);
  BOOST_REQUIRE_MESSAGE(backend.ok(), backend.status().ToString());
  auto inv = (*backend)->Discover();
  BOOST_REQUIRE_MESSAGE(inv.ok(), inv.status().ToString());
  return inv->vhcus;
}

std::string DraDaemonNode::CardBdfOfDevice(const std::string& device) const {
  for (const SliceDevice& d : Devices()) {
    if (d.name == device) return d.type == "hcu" ? d.pci : d.parent;
  }
  BOOST_FAIL("no device " << device << " in the slices");
  return "";
}

Vhcu OnlyNewVhcu(const std::vector<Vhcu>& before, const std::vector<Vhcu>& after) {
  std::set<int> old;
  for (const Vhcu& v : before) old.insert(v.id);
  std::vector<Vhcu> made;
  for (const Vhcu& v : after) {
    if (old.count(v.id) == 0) made.push_back(v);
  }
  BOOST_REQUIRE_EQUAL(made.size(), 1u);
  return made[0];
}

PreparedState StateOf(DraDaemonNode& n) { return {n.CheckpointEntries(), n.Marks(), n.CdiFiles()}; }

void RequireSameState(DraDaemonNode& n, const PreparedState& want, const std::string& when) {
  PreparedState now = StateOf(n);
  BOOST_TEST((now.entries == want.entries), when << ": checkpoint entries changed");
  BOOST_TEST((now.marks == want.marks), when << ": marks changed");
  BOOST_TEST((now.cdi == want.cdi), when << ": CDI specs changed");
}

DynamicVhcuClaim StartWithDynamicVhcuClaim(DraDaemonNode& n, const std::string& name) {
  n.Start();
  n.RequireDevices([](const auto& d) { return d.size() == 9; }, std::chrono::seconds(5),
                   "9 devices");
  DynamicVhcuClaim c;
  c.before = n.Vhcus();
  c.claim = n.CreateAllocatedClaim(name, ExactRequest("hcu", kThirtyCu));
  c.devices = n.MustPrepare(c.claim);
  c.vhcu = OnlyNewVhcu(c.before, n.Vhcus());
  c.prepared = StateOf(n);
  return c;
}

}  // namespace hcudp::testing
