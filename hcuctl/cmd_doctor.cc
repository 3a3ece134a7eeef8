// hcuctl doctor: the node's prerequisites for the plugin, one line each with
// a fix (hcudp::RunDoctor). Exit 1 when any check fails; warnings alone
// exit 0.
#include <string>

#include "command.h"
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
  hcudp::FlagSet flags("hcuctl doctor", std::string(kDoctorCommand.summary));
  flags.Add(hcudp::Flag::Enum("strategy", "", "the strategy the plugin runs with (MIG checks)",
                              {"hcu", "vhcu", "mig", "mixed", "hami"}, "mixed",
                              [&doctor](const std::string& v) {
                                doctor.strategy = *hcudp::ParseStrategy(v);
                                return hcudp::OkStatus();
                              }));
  flags.Add(hcudp::Flag::String("dtk-path", "", "DTK install whose version is checked",
                                &doctor.dtk_path));
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
  const std::vector<hcudp::DoctorCheck> checks = hcudp::RunDoctor(doctor);
  ctx.Print(DoctorReport(checks));
  for (const hcudp::DoctorCheck& c : checks) {
    if (c.status == hcudp::CheckStatus::kFail) return kExitFailed;
  }
  return kExitOk;
}

}  // namespace

const Command kDoctorCommand = {
    "doctor", "check the node's prerequisites (driver, devices, vendor libraries, kubelet)",
    "hcuctl [global flags] doctor [--strategy S] [--dtk-path DIR]", RunDoctorCommand};

}  // namespace hcuctl
