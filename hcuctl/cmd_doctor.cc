// hcuctl doctor: the node's prerequisites for the plugin, one line each with
// a fix (hcudp::RunDoctor; with --strategy=dra the DRA checks of
// doctor_dra.h replace the device-plugin directory checks). Exit 1 when any
// check fails; warnings alone exit 0.
#include <cstdlib>
#include <string>

#include "command.h"
#include "doctor_dra.h"
#include "hcudp/doctor.h"
#include "reports.h"

namespace hcuctl {

Report DoctorReport(const std::vector<hcudp::DoctorCheck>& checks) {
  Report r;
  Table table({"STATUS", "CHECK", "DETAIL", "FIX"});
  Value list = Value::MakeArray();
  int fails = 0, warns = 0;
  for (const hcudp::DoctorCheck& c : checks) {
    const std::string status(hcudp::CheckStatusName(c.status));
    table.AddRow({status, c.name, c.detail, c.fix.empty() ? "-" : c.fix});
    list.Push(Value::MakeObject()
                  .Set("name", c.name)
                  .Set("status", status)
                  .Set("detail", c.detail)
                  .Set("fix", c.fix));
    fails += c.status == hcudp::CheckStatus::kFail;
    warns += c.status == hcudp::CheckStatus::kWarn;
  }
  r.value = Value::MakeObject().Set("checks", std::move(list));
  r.tables.emplace_back("", std::move(table));
  r.notes.push_back("");
  r.notes.push_back(std::to_string(checks.size()) + " checks: " + std::to_string(fails) +
                    " failed, " + std::to_string(warns) + " warnings");
  return r;
}

namespace {

int RunDoctorCommand(Context& ctx, const std::vector<std::string>& args) {
  hcudp::DoctorOptions doctor;
  DraDoctorOptions dra;
  hcudp::FlagSet flags("hcuctl doctor", std::string(kDoctorCommand.summary));
  flags.Add(hcudp::Flag::Enum(
      "strategy", "", "the strategy the plugin runs with (MIG checks; dra: the DRA checks)",
      {"hcu", "vhcu", "mig", "mixed", "hami", "dra"}, "mixed", [&doctor](const std::string& v) {
        doctor.strategy = *hcudp::ParseStrategy(v);
        return hcudp::OkStatus();
      }));
  flags.Add(hcudp::Flag::String("dtk-path", "", "DTK install whose version is checked",
                                &doctor.dtk_path));
  flags.Add(hcudp::Flag::String("kubelet-plugins-dir", "", "dra: kubelet's plugins directory",
                                &dra.plugins_dir));
  flags.Add(hcudp::Flag::String("kubelet-registry-dir", "",
                                "dra: kubelet's plugin registration directory", &dra.registry_dir));
  flags.Add(hcudp::Flag::String("cdi-spec-dir", "", "dra: where CDI specs are written",
                                &dra.cdi_spec_dir));
  flags.Add(hcudp::Flag::String("node-name", "", "dra: the node's name; default $NODE_NAME",
                                &dra.node_name));
  int code = kExitOk;
  auto rest = ParseCommandArgs(ctx, kDoctorCommand, flags, args, &code);
  if (!rest) return code;
  if (!rest->empty()) {
    return UsageError(ctx, kDoctorCommand, "unexpected argument \"" + rest->front() + "\"");
  }
  const hcudp::Options& o = ctx.options();
  doctor.host_root = hcudp::EffectiveHostRoot(o);
  doctor.hyhal_path = o.hyhal_path;
  doctor.device_plugin_path = o.device_plugin_path;
  std::vector<hcudp::DoctorCheck> checks = hcudp::RunDoctor(doctor);
  if (doctor.strategy == hcudp::Strategy::kDra) {
    std::vector<hcudp::DoctorCheck> kept;
    for (hcudp::DoctorCheck& c : checks) {
      if (!IsDevicePluginCheck(c.name)) kept.push_back(std::move(c));
    }
    dra.host_root = doctor.host_root;
    dra.kubeconfig = o.kubeconfig;
    if (const char* env = std::getenv("NODE_NAME"); dra.node_name.empty() && env != nullptr) {
      dra.node_name = env;  // as the DaemonSet sets it
    }
    for (hcudp::DoctorCheck& c : RunDraChecks(dra)) kept.push_back(std::move(c));
    checks = std::move(kept);
  }
  ctx.Print(DoctorReport(checks));
  for (const hcudp::DoctorCheck& c : checks) {
    if (c.status == hcudp::CheckStatus::kFail) return kExitFailed;
  }
  return kExitOk;
}

}  // namespace

const Command kDoctorCommand = {
    "doctor", "check the node's prerequisites (driver, devices, vendor libraries, kubelet)",
    "hcuctl [global flags] doctor [--strategy S] [--dtk-path DIR]\n"
    "       hcuctl [global flags] doctor --strategy dra [--kubelet-plugins-dir DIR] "
    "[--kubelet-registry-dir DIR] [--cdi-spec-dir DIR] [--node-name NAME]",
    RunDoctorCommand};

}  // namespace hcuctl
