// hcuctl dra check: the DRA driver on this node answers, as kubelet would
// reach it — the DRA probes of the chart and manifest (no metrics needed).
//   service       <plugins-dir>/<driver>/dra.sock answers a v1
//                 NodePrepareResources with no claims (the daemon answers it
//                 on its gRPC threads without taking any lock or calling the
//                 API server, so a slow Prepare never fails the probe);
//   registration  a <driver>[-<instance>]-reg.sock in the registry directory
//                 answers GetInfo with type DRAPlugin, this driver and that
//                 endpoint (kubelet re-registers the driver through it).
// Exit 0 when both answer within --timeout-ms each, 1 otherwise. Paths are
// the container's, as the daemon uses them; the defaults come from the
// daemon's environment (KUBELET_PLUGINS_DIR, KUBELET_REGISTRY_DIR,
// DRA_DRIVER_NAME), so the probe follows a moved kubelet directory.
#include <grpcpp/grpcpp.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "command.h"
#include "doctor_dra.h"
#include "dra_v1.grpc.pb.h"
#include "hcudp_cli/flags.h"
#include "plugin_client.h"
#include "pluginregistration_v1.grpc.pb.h"

namespace hcuctl {
namespace {

namespace drav1 = ::k8s::io::kubelet::pkg::apis::dra::v1;
constexpr std::string_view kRegSuffix = "-reg.sock";

std::string EnvOr(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

std::shared_ptr<grpc::Channel> Dial(const std::string& path) {
  return grpc::CreateChannel(UnixTarget(path), grpc::InsecureChannelCredentials());
}

void SetDeadline(grpc::ClientContext& ctx, int timeout_ms) {
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms));
}

bool IsSocket(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

struct Probe {
  std::string what;  // "service", "registration"
  std::string socket;
  bool ok = false;
  std::string detail;
};

Probe CheckService(const std::string& path, int timeout_ms) {
  Probe p{"service", path, false, ""};
  if (!IsSocket(path)) {
    p.detail = "no socket: the driver is not serving";
    return p;
  }
  auto stub = drav1::DRAPlugin::NewStub(Dial(path));
  grpc::ClientContext ctx;
  SetDeadline(ctx, timeout_ms);
  drav1::NodePrepareResourcesResponse out;
  grpc::Status s = stub->NodePrepareResources(&ctx, drav1::NodePrepareResourcesRequest(), &out);
  if (!s.ok()) {
    p.detail = "NodePrepareResources: " + s.error_message() + " (code " +
               std::to_string(static_cast<int>(s.error_code())) + ")";
    return p;
  }
  p.ok = true;
  p.detail = "v1 NodePrepareResources answered";
  return p;
}

// The registration sockets of `driver` in `dir`: <driver>-reg.sock or
// <driver>-<instance>-reg.sock.
std::vector<std::string> RegistrationSockets(const std::string& dir, const std::string& driver) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() < driver.size() + kRegSuffix.size() || name.rfind(driver, 0) != 0 ||
        name.compare(name.size() - kRegSuffix.size(), kRegSuffix.size(), kRegSuffix) != 0) {
      continue;
    }
    const std::string middle =
        name.substr(driver.size(), name.size() - driver.size() - kRegSuffix.size());
    if (!middle.empty() && middle.front() != '-') continue;  // another driver's prefix
    if (IsSocket(e.path().string())) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

Probe CheckRegistration(const std::string& path, const std::string& driver,
                        const std::string& endpoint, int timeout_ms) {
  Probe p{"registration", path, false, ""};
  auto stub = pluginregistration::Registration::NewStub(Dial(path));
  grpc::ClientContext ctx;
  SetDeadline(ctx, timeout_ms);
  pluginregistration::PluginInfo info;
  grpc::Status s = stub->GetInfo(&ctx, pluginregistration::InfoRequest(), &info);
  if (!s.ok()) {
    p.detail = "GetInfo: " + s.error_message();
  } else if (info.type() != "DRAPlugin" || info.name() != driver || info.endpoint() != endpoint) {
    p.detail = "GetInfo: type " + info.type() + ", name " + info.name() + ", endpoint " +
               info.endpoint() + "; want DRAPlugin, " + driver + ", " + endpoint;
  } else {
    p.ok = true;
    p.detail = "GetInfo: " + driver + " at " + endpoint;
  }
  return p;
}

int RunDraCheck(Context& ctx, const std::vector<std::string>& args) {
  const Command& self = kDraCheckCommand;
  std::string plugins_dir = EnvOr("KUBELET_PLUGINS_DIR", "/var/lib/kubelet/plugins");
  std::string registry_dir = EnvOr("KUBELET_REGISTRY_DIR", "/var/lib/kubelet/plugins_registry");
  std::string driver = EnvOr("DRA_DRIVER_NAME", "dra.hygon.com");
  int timeout_ms = 5000;
  hcudp::FlagSet flags("hcuctl dra check", std::string(self.summary));
  flags.Add(hcudp::Flag::String("kubelet-plugins-dir", "",
                                "kubelet's plugins directory (default $KUBELET_PLUGINS_DIR, else "
                                "/var/lib/kubelet/plugins)",
                                &plugins_dir));
  flags.Add(hcudp::Flag::String("kubelet-registry-dir", "",
                                "kubelet's plugin registration directory (default "
                                "$KUBELET_REGISTRY_DIR, else /var/lib/kubelet/plugins_registry)",
                                &registry_dir));
  flags.Add(hcudp::Flag::String(
      "driver", "", "the DRA driver name (default $DRA_DRIVER_NAME, else dra.hygon.com)", &driver));
  flags.Add(hcudp::Flag::Int("timeout-ms", "", "deadline of each call", &timeout_ms, 1));
  int code = kExitOk;
  auto rest = ParseCommandArgs(ctx, self, flags, args, &code);
  if (!rest) return code;
  if (!rest->empty()) return UsageError(ctx, self, "unexpected argument \"" + rest->front() + "\"");

  const std::string endpoint = JoinDir(JoinDir(plugins_dir, driver), "dra.sock");
  std::vector<Probe> probes = {CheckService(endpoint, timeout_ms)};
  std::vector<std::string> regs = RegistrationSockets(registry_dir, driver);
  std::vector<Probe> reg_probes;
  for (const std::string& r : regs)
    reg_probes.push_back(CheckRegistration(r, driver, endpoint, timeout_ms));
  // Any one answering is enough: a predecessor's dead socket may linger
  // until the daemon removes it.
  const bool reg_ok =
      std::any_of(reg_probes.begin(), reg_probes.end(), [](const Probe& p) { return p.ok; });
  if (regs.empty()) {
    probes.push_back({"registration",
                      JoinDir(registry_dir, driver + "[-<instance>]" + std::string(kRegSuffix)),
                      false, "no registration socket of " + driver});
  }
  probes.insert(probes.end(), reg_probes.begin(), reg_probes.end());

  Report r;
  Table table({"CHECK", "SOCKET", "RESULT", "DETAIL"});
  Value list = Value::MakeArray();
  for (const Probe& p : probes) {
    table.AddRow({p.what, p.socket, p.ok ? "ok" : "fail", p.detail});
    list.Push(Value::MakeObject()
                  .Set("check", p.what)
                  .Set("socket", p.socket)
                  .Set("ok", p.ok)
                  .Set("detail", p.detail));
  }
  const bool ok = probes.front().ok && reg_ok;
  r.value = Value::MakeObject().Set("driver", driver).Set("ok", ok).Set("checks", std::move(list));
  r.tables.emplace_back("", std::move(table));
  ctx.Print(r);
  return ok ? kExitOk : kExitFailed;
}

}  // namespace

// A sub-command of `hcuctl dra` (the dispatcher in cmd_dra.cc lists it).
const Command kDraCheckCommand = {
    "check", "the DRA driver's service and registration sockets answer (the DRA liveness probe)",
    "hcuctl [global flags] dra check [--kubelet-plugins-dir DIR] [--kubelet-registry-dir DIR] "
    "[--driver NAME] [--timeout-ms N]",
    RunDraCheck};

}  // namespace hcuctl
