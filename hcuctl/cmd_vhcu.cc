// hcuctl vhcu list | create --card N --cu C --mem-mib M | destroy [--force] ID:
// manual vHCU management (what an admin does with `hy-smi virtual`). Create
// and destroy hold the host-wide vHCU lock (hcudp/vhcu_lock.h) that the
// daemon also takes, waiting at most --lock-wait seconds; destroy refuses a
// vHCU a pod holds unless --force, and a forced one removes the marks and
// intents that name its id (they would claim the id's next vHCU).
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "cmd_dra_prepared.h"
#include "command.h"
#include "hcudp/options.h"
#include "hcudp/vhcu_lock.h"
#include "hcudp/vhcu_manager.h"
#include "hcudp_cli/flags.h"
#include "plugin_client.h"
#include "podresources_v1.grpc.pb.h"
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
  auto backend = ctx.backend();
  if (!backend.ok()) return Fail(ctx, self.name, backend.status());
  auto inv = (*backend)->Discover();
  if (!inv.ok()) return Fail(ctx, self.name, inv.status());
  ctx.Print(VhcuListReport(*inv));
  return kExitOk;
}

// Takes the host-wide vHCU lock, saying so on stderr when someone else holds
// it; Unavailable naming the holder after `wait_s` seconds.
hcudp::StatusOr<hcudp::VhcuHostLock> TakeLock(Context& ctx, int wait_s) {
  const std::string root = hcudp::EffectiveHostRoot(ctx.options());
  return hcudp::VhcuHostLock::Acquire(
      root, std::chrono::seconds(wait_s), [&](const std::string& holder) {
        ctx.err() << "hcuctl: the vHCU lock " << hcudp::VhcuLockPath(root) << " is held by "
                  << holder << "; waiting up to " << wait_s << " s (--lock-wait)" << std::endl;
      });
}

// Pods holding vdev<id> according to kubelet's pod-resources API, when its
// socket answers within a second; "" otherwise.
std::string PodResourcesHolders(Context& ctx, int id) {
  const std::string& socket = ctx.options().pod_resources_socket;
  auto stub = v1::PodResourcesLister::NewStub(
      grpc::CreateChannel(UnixTarget(socket), grpc::InsecureChannelCredentials()));
  grpc::ClientContext gctx;
  gctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(1));
  v1::ListPodResourcesResponse resp;
  if (!stub->List(&gctx, v1::ListPodResourcesRequest(), &resp).ok()) return "";
  const std::string device = "vdev" + std::to_string(id);
  std::string holders;
  for (const auto& pod : resp.pod_resources()) {
    for (const auto& c : pod.containers()) {
      for (const auto& d : c.devices()) {
        for (const auto& dev : d.device_ids()) {
          if (dev != device) continue;
          holders += (holders.empty() ? "" : ", ") + pod.namespace_() + "/" + pod.name() +
                     " (container " + c.name() + ", " + d.resource_name() + ")";
        }
      }
    }
  }
  return holders;
}

int Create(Context& ctx, const Command& self, int card, int cu, int mem_mib, int wait_s,
           const std::vector<std::string>& rest) {
  if (rest.size() > 1) return UsageError(ctx, self, "unexpected argument \"" + rest[1] + "\"");
  if (card < 0 || cu <= 0 || mem_mib <= 0) {
    return UsageError(ctx, self, "vhcu create needs --card N, --cu C (> 0) and --mem-mib M (> 0)");
  }
  auto backend = ctx.backend();
  if (!backend.ok()) return Fail(ctx, self.name, backend.status());
  auto lock = TakeLock(ctx, wait_s);
  if (!lock.ok()) return Fail(ctx, "vhcu create", lock.status());
  auto created = (*backend)->CreateVhcu(card, cu, static_cast<uint64_t>(mem_mib));
  if (!created.ok()) return Fail(ctx, "vhcu create", created.status());
  // Still under the lock: a daemon create that crashed before it learnt its
  // vHCU's id must never take this one for its own.
  hcudp::Status excluded =
      hcudp::ExcludeFromIntents(hcudp::EffectiveHostRoot(ctx.options()), *created);
  if (!excluded.ok()) {
    ctx.err() << "hcuctl: warning: vdev" << created->id
              << " was created, but the daemon's recovery may take it for a crashed create's: "
              << excluded.message() << std::endl;
  }
  Report r;
  auto stale = hcudp::RemoveStaleMarksOf(hcudp::EffectiveHostRoot(ctx.options()), *created);
  if (!stale.ok()) {
    ctx.err() << "hcuctl: warning: vdev" << created->id
              << " was created, but an older mark naming its id may have the daemon reclaim it: "
              << stale.status().message() << std::endl;
  } else {
    for (const std::string& path : *stale) r.notes.push_back("removed the stale mark " + path);
  }
  r.value = VhcuValue(*created);
  Table t(VhcuHeaders());
  t.AddRow(VhcuRow(*created));
  r.tables.emplace_back("created:", std::move(t));
  ctx.Print(r);
  return kExitOk;
}

int Destroy(Context& ctx, const Command& self, bool force, int wait_s,
            const std::vector<std::string>& rest) {
  if (rest.size() != 2) return UsageError(ctx, self, "vhcu destroy takes one vHCU id (3 or vdev3)");
  auto id = ParseVhcuId(rest[1]);
  if (!id) return UsageError(ctx, self, "\"" + rest[1] + "\" is not a vHCU id (3 or vdev3)");
  auto backend = ctx.backend();
  if (!backend.ok()) return Fail(ctx, self.name, backend.status());
  auto lock = TakeLock(ctx, wait_s);
  if (!lock.ok()) return Fail(ctx, "vhcu destroy", lock.status());
  // Under the lock: no daemon create can be between its mark and our check.
  auto inv = (*backend)->Discover();
  if (!inv.ok()) return Fail(ctx, "vhcu destroy", inv.status());
  // A vHCU discovery cannot read (its conf empty or torn) may still exist in
  // the driver and be held: it is checked by id alone.
  hcudp::Vhcu unread;
  unread.id = *id;
  unread.card = -1;
  hcudp::Lookup<hcudp::Vhcu> found = inv->LookupVhcu(*id);
  const hcudp::Vhcu* vhcu =
      found.certainty() == hcudp::Certainty::kFound ? &found.value() : &unread;
  auto claims = hcudp::FindVhcuClaims(hcudp::EffectiveHostRoot(ctx.options()), *vhcu);
  if (!claims.ok()) return Fail(ctx, "vhcu destroy", claims.status());
  if (!force) {
    std::string held;
    for (const hcudp::VhcuClaim& c : *claims) {
      held += (held.empty() ? "" : "; ") + std::string("pod ") + c.pod_uid + " (container " +
              c.container + ", " + c.path + ")";
    }
    std::string pods = PodResourcesHolders(ctx, *id);
    if (!pods.empty()) held += (held.empty() ? "" : "; ") + std::string("pod ") + pods;
    std::string dra = DraClaimsHoldingVhcu(hcudp::EffectiveHostRoot(ctx.options()), *id);
    if (!dra.empty()) held += (held.empty() ? "" : "; ") + dra;
    if (!held.empty()) {
      return Fail(ctx, "vhcu destroy",
                  hcudp::FailedPreconditionError("vdev" + std::to_string(*id) + " is held by " +
                                                 held + "; use --force to destroy it anyway"));
    }
    // Held by nobody we can see, but what cannot be read is never destroyed
    // on a guess: its owner may be recorded where this check cannot see.
    std::string unknown;
    if (found.certainty() == hcudp::Certainty::kUnknown) unknown = found.why();
    if (found.certainty() == hcudp::Certainty::kFound) {
      hcudp::Lookup<hcudp::Card> card = inv->LookupCardByBdf(vhcu->card_bdf);
      if (card.certainty() == hcudp::Certainty::kUnknown) unknown = card.why();
    }
    if (!unknown.empty()) {
      return Fail(ctx, "vhcu destroy",
                  hcudp::UnavailableError("vdev" + std::to_string(*id) + ": " + unknown +
                                          "; not destroyed (try again once it reads, or use "
                                          "--force to destroy it anyway)"));
    }
  }
  hcudp::Status st = (*backend)->DestroyVhcu(*id);
  if (!st.ok()) return Fail(ctx, "vhcu destroy", st);
  Report r;
  r.value = Value::MakeObject().Set("destroyed", "vdev" + std::to_string(*id));
  r.notes.push_back("destroyed vdev" + std::to_string(*id));
  // Still under the lock. A mark or intent that names this id would claim the
  // next vHCU the driver numbers so, and the daemon would reclaim that one
  // (someone else's) when the old pod goes.
  for (const hcudp::VhcuClaim& c : *claims) {
    if (!c.by_id) continue;
    std::error_code ec;
    std::filesystem::remove(c.path, ec);
    r.notes.push_back(ec ? "cannot remove " + c.path + ": " + ec.message()
                         : "removed " + c.path + " (pod " + c.pod_uid + ")");
  }
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
                              "file, journal, kubelet pod-resources or DRA checkpoint)",
                              &force));
  int code = kExitOk;
  auto rest = ParseCommandArgs(ctx, self, flags, args, &code);
  if (!rest) return code;
  if (rest->empty()) return UsageError(ctx, self, "missing action: list, create or destroy");
  const std::string& action = rest->front();
  if (action == "list") return List(ctx, self, *rest);
  if (action == "create") return Create(ctx, self, card, cu, mem_mib, wait_s, *rest);
  if (action == "destroy") return Destroy(ctx, self, force, wait_s, *rest);
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
