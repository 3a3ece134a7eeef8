// hcudp::Node's guarded acts: vHCU create and destroy under the host-wide
// lock, with the ledger's holders checked first (fail closed).

#include "hcudp/vhcu_lock.h"
#include "hcudp/vhcu_manager.h"
#include "hcudp_internal/file_util.h"
#include "hcudp_internal/log.h"
#include "node/node_impl.h"

namespace hcudp {
namespace {

std::string VdevName(int id) { return "vdev" + std::to_string(id); }

// Why the node's MIG state forbids a vHCU on any card, or OK.
Status MigAllowsVhcus(const NodeInventory& inventory) {
  Lookup<bool> mig = inventory.LookupMigMode();
  switch (mig.certainty()) {
    case Certainty::kUnknown:
      return UnavailableError(mig.why());
    case Certainty::kFound:
      if (mig.value()) return FailedPreconditionError("the node is in MIG mode");
      return OkStatus();
    case Certainty::kAbsent:
      break;
  }
  return OkStatus();
}

}  // namespace

StatusOr<NodeCreatedVhcu> Node::Impl::CreateVhcu(int card, int compute_units, uint64_t memory_mib,
                                                 bool force) {
  HCUDP_ASSIGN_OR_RETURN(VhcuHostLock lock,
                         VhcuHostLock::Acquire(fs_.root(), lock_timeout_, on_lock_wait_));
  const std::string where = "card " + std::to_string(card);
  if (!force) {
    // Under the lock: no create or destroy of anyone who honours it runs.
    HCUDP_ASSIGN_OR_RETURN(NodeInventory inventory, Look());
    const std::string fix = " (use force to create it anyway)";
    if (Status mig = MigAllowsVhcus(inventory); !mig.ok()) {
      return Status(mig.code(), "no vHCU on " + where + ": " + mig.message() + fix);
    }
    const Card* found = inventory.FindCard(card);
    if (found == nullptr) {
      for (const UnknownCard& u : inventory.unknown_cards) {
        if (u.last_known.index != card) continue;
        return UnavailableError(where + " is unknown (" + std::string(UnknownReasonName(u.reason)) +
                                (u.detail.empty() ? "" : ": " + u.detail) + ")" + fix);
      }
    } else {
      hcudp::Holders holders = ReadHoldings().Of(DeviceRef::OfCard(*found));
      switch (holders.certainty()) {
        case Certainty::kFound:
          return FailedPreconditionError(where + " is held whole by " + holders.Describe() + fix);
        case Certainty::kUnknown:
          return UnavailableError(holders.why() + fix);
        case Certainty::kAbsent:
          break;
      }
    }
  }
  HCUDP_ASSIGN_OR_RETURN(Vhcu vhcu, backend_->CreateVhcu(card, compute_units, memory_mib));
  NodeCreatedVhcu out;
  out.vhcu = vhcu;
  // Still under the lock: a daemon create that crashed before it learnt its
  // vHCU's id must never take this one for its own.
  if (Status excluded = ExcludeFromIntents(fs_.root(), vhcu); !excluded.ok()) {
    out.warnings.push_back(VdevName(vhcu.id) +
                           " was created, but the daemon's recovery may take it for a crashed "
                           "create's: " +
                           excluded.message());
  }
  auto stale = RemoveStaleMarksOf(fs_.root(), vhcu);
  if (!stale.ok()) {
    out.warnings.push_back(VdevName(vhcu.id) +
                           " was created, but an older mark naming its id may have the daemon "
                           "reclaim it: " +
                           stale.status().message());
  } else {
    for (const std::string& path : *stale) out.notes.push_back("removed the stale mark " + path);
  }
  LOG(INFO) << "created " << VdevName(vhcu.id) << " on " << where << " (" << compute_units
            << " CU, " << memory_mib << " MiB)";
  return out;
}

StatusOr<NodeDestroyedVhcu> Node::Impl::DestroyVhcu(int id, bool force) {
  HCUDP_ASSIGN_OR_RETURN(VhcuHostLock lock,
                         VhcuHostLock::Acquire(fs_.root(), lock_timeout_, on_lock_wait_));
  const std::string name = VdevName(id);
  // Under the lock: no daemon create can be between its mark and this check.
  HCUDP_ASSIGN_OR_RETURN(NodeInventory inventory, Look());
  // A vHCU discovery cannot read (its conf empty or torn) may still exist in
  // the driver and be held: it is checked by id alone.
  Vhcu unread;
  unread.id = id;
  unread.card = -1;
  Lookup<Vhcu> found = inventory.LookupVhcu(id);
  const Vhcu& vhcu = found.certainty() == Certainty::kFound ? found.value() : unread;
  DeviceRef ref = DeviceRef::OfVhcu(vhcu);
  if (found.certainty() != Certainty::kFound) {
    ref.compute_units = 0;
    ref.memory_mib = 0;
  }
  NodeDestroyedVhcu out;
  out.id = id;
  out.holders = ReadHoldings().Of(ref);
  if (!force) {
    const std::string fix = "; use --force to destroy it anyway";
    switch (out.holders.certainty()) {
      case Certainty::kFound:
        return FailedPreconditionError(name + " is held by " + out.holders.Describe() + fix);
      case Certainty::kUnknown:
        return UnavailableError(out.holders.why() + "; " + name + " not destroyed" + fix);
      case Certainty::kAbsent:
        break;
    }
    // Held by nobody we can see, but what cannot be read is never destroyed
    // on a guess: its owner may be recorded where this check cannot see.
    std::string unknown;
    if (found.certainty() == Certainty::kUnknown) unknown = found.why();
    if (found.certainty() == Certainty::kFound) {
      Lookup<Card> card = inventory.LookupCardByBdf(vhcu.card_bdf);
      if (card.certainty() == Certainty::kUnknown) unknown = card.why();
    }
    if (!unknown.empty()) {
      return UnavailableError(name + ": " + unknown + "; not destroyed (try again once it reads" +
                              fix + ")");
    }
  }
  HCUDP_RETURN_IF_ERROR(backend_->DestroyVhcu(id));
  out.notes.push_back("destroyed " + name);
  // Still under the lock. A mark or intent that names this id would claim the
  // next vHCU the driver numbers so, and the daemon would reclaim that one
  // (someone else's) when the old pod goes.
  for (const Holder& h : out.holders.holders()) {
    const bool by_id = h.device.vhcu_id == id && (h.source == HolderSource::kHamiMark ||
                                                  h.source == HolderSource::kVhcuIntent);
    if (!by_id) continue;
    Status removed = file_util::RemoveFile(h.path);
    out.notes.push_back(!removed.ok() ? "cannot remove " + h.path + ": " + removed.message()
                                      : "removed " + h.path + " (pod " + h.owner + ")");
  }
  LOG(WARNING) << "destroyed " << name << (force ? " (forced)" : "");
  return out;
}

}  // namespace hcudp
