// hcuctl dra prepared: the claims DRA mode prepared on this node, from its
// checkpoint (<host-root>/var/lib/hcu-device-plugin/dra): claim, state,
// devices, vHCUs, CDI IDs. Reads files only: works with the daemon down.
#include <string>

#include "command.h"
#include "hcudp/dra/checkpoint.h"
#include "hcudp/options.h"
#include "hcudp_cli/flags.h"

namespace hcuctl {
namespace {

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ",") + s;
  return out;
}

int RunDraPrepared(Context& ctx, const std::vector<std::string>& args) {
  const Command& self = kDraPreparedCommand;
  hcudp::FlagSet flags("hcuctl dra prepared", std::string(self.summary));
  int code = kExitOk;
  auto rest = ParseCommandArgs(ctx, self, flags, args, &code);
  if (!rest) return code;
  if (!rest->empty()) return UsageError(ctx, self, "unexpected argument \"" + rest->front() + "\"");

  hcudp::dra::CheckpointStore store(EffectiveHostRoot(ctx.options()));
  std::vector<std::string> bad;
  auto claims = store.ReadAll(&bad);
  if (!claims.ok()) return Fail(ctx, "dra prepared", claims.status());

  Report r;
  Table table({"NAMESPACE", "CLAIM", "UID", "STATE", "REQUEST", "DEVICE", "KIND", "CARD", "VHCU",
               "CDI IDS"});
  Value list = Value::MakeArray();
  for (const hcudp::dra::PreparedClaim& c : *claims) {
    const std::string state =
        c.state == hcudp::dra::ClaimState::kPrepared ? "prepared" : "preparing";
    Value devices = Value::MakeArray();
    for (const hcudp::dra::PreparedDevice& d : c.devices) {
      Value ids = Value::MakeArray();
      for (const std::string& id : d.cdi_ids) ids.Push(id);
      Value dv = Value::MakeObject()
                     .Set("request", d.request)
                     .Set("pool", d.pool)
                     .Set("device", d.device)
                     .Set("kind", std::string(hcudp::dra::PreparedKindName(d.kind)))
                     .Set("card", d.card)
                     .Set("cardBDF", d.card_bdf)
                     .Set("cdiDeviceIDs", std::move(ids));
      if (!d.share_id.empty()) dv.Set("shareID", d.share_id);
      if (d.vhcu_id >= 0) dv.Set("vhcu", "vdev" + std::to_string(d.vhcu_id));
      if (d.kind == hcudp::dra::PreparedKind::kDynamicVhcu) {
        dv.Set("computeUnits", d.compute_units).Set("memoryMiB", d.memory_mib);
      }
      if (!d.mig_uuid.empty()) dv.Set("migUUID", d.mig_uuid);
      if (!d.mark.empty()) dv.Set("markFile", d.mark);
      devices.Push(std::move(dv));
      table.AddRow({c.namespace_name, c.name, c.uid, state, d.request, d.device,
                    std::string(hcudp::dra::PreparedKindName(d.kind)), d.card_bdf,
                    d.vhcu_id >= 0 ? "vdev" + std::to_string(d.vhcu_id) : "-", Join(d.cdi_ids)});
    }
    if (c.devices.empty()) {
      table.AddRow({c.namespace_name, c.name, c.uid, state, "-", "-", "-", "-", "-", "-"});
    }
    list.Push(Value::MakeObject()
                  .Set("namespace", c.namespace_name)
                  .Set("name", c.name)
                  .Set("uid", c.uid)
                  .Set("state", state)
                  .Set("owner", c.owner)
                  .Set("bootID", c.boot_id)
                  .Set("devices", std::move(devices)));
  }
  Value unreadable = Value::MakeArray();
  for (const std::string& b : bad) {
    unreadable.Push(b);
    r.notes.push_back("unreadable checkpoint entry: " + b);
  }
  if (claims->empty()) r.notes.push_back("no prepared claims in " + store.dir());
  r.value =
      Value::MakeObject().Set("claims", std::move(list)).Set("unreadable", std::move(unreadable));
  r.tables.emplace_back("", std::move(table));
  ctx.Print(r);
  return bad.empty() ? kExitOk : kExitFailed;
}

}  // namespace

// A sub-command of `hcuctl dra` (the dispatcher in cmd_dra.cc lists it).
const Command kDraPreparedCommand = {
    "prepared", "claims DRA mode prepared on this node (from its checkpoint)",
    "hcuctl [global flags] dra prepared [-o table|json|yaml]", RunDraPrepared};

}  // namespace hcuctl
