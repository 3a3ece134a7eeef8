// hcuctl vhcu list | create --card N --cu C --mem-mib M | destroy [--force] ID:
// manual vHCU management (what an admin does with `hy-smi virtual`). It
// parses and prints; hcudp::Node does the guarded act: create and destroy
// hold the host-wide vHCU lock (hcudp/vhcu_lock.h) that the daemon also
// takes, waiting at most --lock-wait seconds; destroy refuses a vHCU that
// the node's ledger says is held, or whose holders it cannot read, unless
// --force, and a forced one removes the marks and intents that name its id
// (they would claim the id's next vHCU).
#include <chrono>
#include <string>

#include "command.h"
#include "hcudp/node.h"
#include "hcudp/options.h"
#include "hcudp_cli/flags.h"
#include "reports.h"

namespace hcuctl {
namespace {

// "3" or "vdev3" -> 3.
std::optional<int> ParseVhcuId(const std::string& text) {
  std::string digits = text.rfind("vdev", 0) == 0 ? text.substr(4) : text;
  auto n = hcudp::ParseGoInt(digits);
  if (!n || *n < 0 || *n > 100000 || digits.empty() ||
      digits.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  return static_cast<int>(*n);
}

int List(Context& ctx, const Command& self, const std::vector<std::string>& rest) {
  if (rest.size() > 1) return UsageError(ctx, self, "vhcu list takes no arguments");
  auto inv = ctx.Look();
  if (!inv.ok()) return Fail(ctx, self.name, inv.status());
  ctx.Print(VhcuListReport(*inv));
  return kExitOk;
}

// Parses and prints; the node does the guarded create (hcudp::Node).
int Create(Context& ctx, const Command& self, int card, int cu, int mem_mib, bool force,
           const std::vector<std::string>& rest) {
  if (rest.size() > 1) return UsageError(ctx, self, "unexpected argument \"" + rest[1] + "\"");
  if (card < 0 || cu <= 0 || mem_mib <= 0) {
    return UsageError(ctx, self, "vhcu create needs --card N, --cu C (> 0) and --mem-mib M (> 0)");
  }
  auto node = ctx.node();
  if (!node.ok()) return Fail(ctx, self.name, node.status());
  auto created = (*node)->CreateVhcu(card, cu, static_cast<uint64_t>(mem_mib), force);
  if (!created.ok()) return Fail(ctx, "vhcu create", created.status());
  for (const std::string& w : created->warnings) ctx.err() << "hcuctl: warning: " << w << std::endl;
  Report r;
  r.notes = created->notes;
  r.value = VhcuValue(created->vhcu);
  Table t(VhcuHeaders());
  t.AddRow(VhcuRow(created->vhcu));
  r.tables.emplace_back("created:", std::move(t));
  ctx.Print(r);
  return kExitOk;
}

// Parses and prints; the node does the guarded destroy: it refuses a vHCU
// the ledger says is held, or cannot tell (an unreadable DRA checkpoint),
// unless --force.
int Destroy(Context& ctx, const Command& self, bool force, const std::vector<std::string>& rest) {
  if (rest.size() != 2) return UsageError(ctx, self, "vhcu destroy takes one vHCU id (3 or vdev3)");
  auto id = ParseVhcuId(rest[1]);
  if (!id) return UsageError(ctx, self, "\"" + rest[1] + "\" is not a vHCU id (3 or vdev3)");
  auto node = ctx.node();
  if (!node.ok()) return Fail(ctx, self.name, node.status());
  auto destroyed = (*node)->DestroyVhcu(*id, force);
  if (!destroyed.ok()) return Fail(ctx, "vhcu destroy", destroyed.status());
  Report r;
  r.value = Value::MakeObject().Set("destroyed", "vdev" + std::to_string(*id));
  r.notes = destroyed->notes;
  ctx.Print(r);
  return kExitOk;
}

int RunVhcu(Context& ctx, const std::vector<std::string>& args) {
  const Command& self = kVhcuCommand;
  int card = -1;
  int cu = 0;
  int mem_mib = 0;
  int wait_s = 10;
  bool force = false;
  hcudp::FlagSet flags("hcuctl vhcu", std::string(self.summary));
  flags.Add(hcudp::Flag::Int("card", "", "create: parent card index", &card, 0));
  flags.Add(hcudp::Flag::Int("cu", "", "create: compute units", &cu, 1));
  flags.Add(hcudp::Flag::Int("mem-mib", "", "create: memory in MiB", &mem_mib, 1));
  flags.Add(hcudp::Flag::Int("lock-wait", "",
                             "create/destroy: seconds to wait for the host-wide vHCU lock "
                             "(var/lib/hcu-device-plugin/vhcu.lock under the host root)",
                             &wait_s, 0, 600));
  flags.Add(hcudp::Flag::Bool("force", "",
                              "destroy: even a vHCU a pod or a DRA claim holds (HAMi mark "
                              "file, journal, kubelet pod-resources, DRA checkpoint, Hygon's "
                              "DRA state) or whose holders cannot be read; create: even on a "
                              "card held whole or unknown",
                              &force));
  int code = kExitOk;
  auto rest = ParseCommandArgs(ctx, self, flags, args, &code);
  if (!rest) return code;
  if (rest->empty()) return UsageError(ctx, self, "missing action: list, create or destroy");
  const std::string& action = rest->front();
  if (action == "list") return List(ctx, self, *rest);
  ctx.set_vhcu_lock_wait(std::chrono::seconds(wait_s));
  if (action == "create") return Create(ctx, self, card, cu, mem_mib, force, *rest);
  if (action == "destroy") return Destroy(ctx, self, force, *rest);
  return UsageError(ctx, self, "unknown action \"" + action + "\"; use list, create or destroy");
}

}  // namespace

Value VhcuValue(const hcudp::Vhcu& v) {
  return Value::MakeObject()
      .Set("id", v.id)
      .Set("deviceId", "vdev" + std::to_string(v.id))
      .Set("card", v.card)
      .Set("bdf", v.card_bdf)
      .Set("computeUnits", v.compute_units)
      .Set("memoryMiB", v.memory_mib)
      .Set("pipeId", v.pipe_id)
      .Set("conf", v.conf_path);
}

std::vector<std::string> VhcuRow(const hcudp::Vhcu& v) {
  return {"vdev" + std::to_string(v.id),
          std::to_string(v.card),
          v.card_bdf,
          std::to_string(v.compute_units),
          std::to_string(v.memory_mib) + " MiB",
          std::to_string(v.pipe_id),
          v.conf_path};
}

std::vector<std::string> VhcuHeaders() {
  return {"ID", "CARD", "BDF", "CU", "MEMORY", "PIPE", "CONF"};
}

Report VhcuListReport(const hcudp::NodeInventory& inv) {
  Report r;
  Value list = Value::MakeArray();
  Table t(VhcuHeaders());
  for (const hcudp::Vhcu& v : inv.vhcus) {
    list.Push(VhcuValue(v));
    t.AddRow(VhcuRow(v));
  }
  r.value = Value::MakeObject().Set("vhcus", std::move(list));
  r.tables.emplace_back("", std::move(t));
  // What could not be read may hide vHCUs (the daemon fails closed on it).
  for (const hcudp::VhcuStateGap& g : inv.vhcu_gaps) {
    r.notes.push_back("cannot read vHCU state " + g.path + ": " + g.reason);
  }
  for (const hcudp::UnknownCard& u : inv.unknown_cards) {
    const std::string bdf = u.last_known.bdf.empty() ? "BDF unknown" : u.last_known.bdf;
    r.notes.push_back("card " + std::to_string(u.last_known.index) + " (" + bdf + ") is unknown (" +
                      std::string(hcudp::UnknownReasonName(u.reason)) +
                      (u.detail.empty() ? "" : ": " + u.detail) +
                      "); its vHCUs may be missing from this list");
  }
  return r;
}

const Command kVhcuCommand = {
    "vhcu", "list, create and destroy vHCUs by hand",
    "hcuctl [global flags] vhcu list | create --card N --cu C --mem-mib M | destroy [--force] ID "
    "[--lock-wait S]",
    RunVhcu};

}  // namespace hcuctl
