// Internal: Preparer's state and helpers shared by prepare_*.cc.
#ifndef HCUDP_SRC_DRA_PREPARE_IMPL_H_
#define HCUDP_SRC_DRA_PREPARE_IMPL_H_

#include <condition_variable>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "hcudp/allocation.h"
#include "hcudp/dra/preparer.h"
#include "hcudp/ledger.h"
#include "hcudp_internal/host_fs.h"
#include "hcudp_internal/thread_annotations.h"

namespace hcudp::dra {

class Preparer::Impl {
 public:
  Impl(Backend* backend, VhcuManager* vhcus, ClaimFetcher fetch, PreparerOptions options,
       Clock& clock);

  StatusOr<RecoverResult> Recover();
  StatusOr<PrepareAnswer> Prepare(const ClaimRef& ref, std::optional<Clock::TimePoint> deadline);
  Status Unprepare(const ClaimRef& ref);
  RecoverResult Tick();
  Status WriteWholeCardSpec(const NodeInventory& inventory);
  std::vector<PreparedClaim> Prepared() const;

 private:
  // Marks `uid` in flight for the life of the guard; ok() false when
  // another call for it runs.
  class InFlight {
   public:
    InFlight(Impl* impl, const std::string& uid);
    ~InFlight();
    bool ok() const { return ok_; }

   private:
    Impl* impl_;
    std::string uid_;
    bool ok_;
  };

  // Device names (pre-split vHCUs, MIG instances) one Prepare holds while
  // it works; released on destruction.
  class Reservation {
   public:
    Reservation(Impl* impl, std::string uid) : impl_(impl), uid_(std::move(uid)) {}
    ~Reservation();
    Reservation(const Reservation&) = delete;
    Reservation& operator=(const Reservation&) = delete;
    // FailedPrecondition when another claim holds or has prepared one of
    // `claim`'s exclusive devices; nothing is reserved then.
    Status Reserve(const PreparedClaim& claim);

   private:
    Impl* impl_;
    std::string uid_;
    std::vector<std::string> names_;
  };

  struct Pending {
    ClaimRef ref;
    Clock::TimePoint due;
    std::chrono::milliseconds delay{0};
  };

  bool Crash(PrepareStep step) const { return o_.crash_after && o_.crash_after(step); }
  std::string CdiDir() const;
  std::string ClaimSpecPath(const std::string& uid) const;
  void Changed() const;

  // prepare_claim.cc
  StatusOr<PreparedDevice> Plan(const AllocatedDevice& result, const NodeInventory& inventory);
  // The ownership ledger (hcudp/ledger.h) as read now: marks, intents, the
  // checkpoint, Hygon's state file.
  Holdings ReadHoldings() const;
  // `d` (a whole card) when no vHCU or MIG instance of `card` is held, by
  // the ledger or a Prepare in flight: FailedPrecondition naming the holder
  // otherwise, or when the ledger cannot tell (a per-claim error).
  StatusOr<PreparedDevice> CheckWholeCardFree(const NodeInventory& inventory, const Card& card,
                                              PreparedDevice d);
  // OK when the ledger says pre-split vHCU `d` is held by no one;
  // FailedPrecondition naming the holder, or why it cannot tell, otherwise.
  Status CheckVhcuFree(const NodeInventory& inventory, const PreparedDevice& d) const;
  StatusOr<PrepareAnswer> PrepareNew(const ParsedClaim& claim);
  void SetCdiIds(PreparedClaim* claim) const;
  // Rewrites what a prepared claim lacks: its CDI spec (reboot, wiped dir)
  // and whole-card marks (a crash right after the entry was written).
  Status EnsureClaimSpec(const PreparedClaim& claim, bool* rewritten);
  static PrepareAnswer Answer(const PreparedClaim& claim);
  // The whole-card spec entries (device name -> JSON object) of the cards
  // prepared claims hold, from the spec written before (wanted_spec_, else
  // the file on disk): kept while such a card is missed or unknown.
  std::map<std::string, std::string> HeldCardEntries();
  // A copy of inventory_ (nullopt before Recover/WriteWholeCardSpec).
  std::optional<NodeInventory> CachedInventory() const;
  // What ReleaseDevice/AdoptUnrecordedMarks need to undo `claim`: the node
  // discovered when it has a vHCU we made, else nothing (no discovery).
  StatusOr<NodeInventory> InventoryToRelease(const PreparedClaim& claim);

  // prepare_release.cc
  // Destroys/unmarks one device if it is still ours (mark file present and
  // the vHCU under its id still of its card and size).
  Status ReleaseDevice(const PreparedDevice& device, const NodeInventory& inventory);
  // Fills the vHCU ids and marks a crashed Prepare made but did not record,
  // from mark files no other entry records.
  Status AdoptUnrecordedMarks(PreparedClaim* claim, const NodeInventory& inventory);
  // Releases everything of `claim`, removes its spec and its entry.
  Status Undo(PreparedClaim claim, const NodeInventory& inventory, bool unprepare_hooks);

  // prepare_undecodable.cc
  // Unprepare of a claim whose entry does not decode (`read_error`):
  // releases what the marks and the claim's CDI spec prove, sets the entry
  // aside, answers OK; Unavailable when a release must be retried.
  Status UnprepareUndecodable(const ClaimRef& ref, const Status& read_error);
  // Mark file names the entries (files and claims_) of other claims record.
  std::set<std::string> RecordedMarks(const std::string& except_uid) const;

  // prepare_recover.cc
  void Check(const ClaimRef& ref, RecoverResult* result, bool* api_down);
  void AddPending(const ClaimRef& ref);
  // A prepared claim some of whose devices are unknown now: kept as it is,
  // re-checked by every Tick; logged once per reason, then rate-limited.
  void KeepUnknown(const ClaimRef& ref, const std::string& why);
  // Every kept-unknown claim against a fresh discovery: still unknown (kept),
  // there (kept, no longer re-checked) or confirmed gone (unprepared).
  void RecheckUnknown(RecoverResult* result);
  static constexpr std::chrono::minutes kUnknownLogEvery{10};
  struct Unknown {
    ClaimRef ref;
    std::string why;
    Clock::TimePoint logged{};
  };

  // hygon_adopt.cc: migration from Hygon's DRA driver (doc/dra.md).
  std::string HygonStatePath() const;
  // Claims of Hygon's state file that the checkpoint lacks become entries
  // (and prepared claims), but never one naming a vHCU that one of our
  // claims, a mark or an intent holds. `only_uid`: that claim alone. True
  // when one could not be adopted for now (a device unknown): retried.
  bool AdoptHygonClaims(const NodeInventory& inventory, RecoverResult* result,
                        const std::string& only_uid = "");
  // Unprepare of a UID without an entry that Hygon's file lists: adopted
  // (then released by the caller), or dropped from Hygon's file when it is
  // not ours to free. Unavailable while its devices are unknown.
  Status AdoptForUnprepare(const ClaimRef& ref);
  bool HygonLists(const std::string& uid) const;
  // kubelet named an adopted claim: its namespace, name and the
  // allocation's shareIDs go into the entry (Hygon's driver kept neither).
  void CompleteAdopted(PreparedClaim* claim, const ParsedClaim& parsed);
  // An adopted claim is being released: out of Hygon's state file and
  // specs, BEFORE its entry goes (a claim left in Hygon's file is adopted
  // again at the next start, onto a reused vHCU id). Non-OK: retry.
  Status ForgetHygonClaim(const PreparedClaim& claim);
  Status RewriteHygonState(const std::vector<std::string>& uids);

  Backend* const backend_;
  VhcuManager* const vhcus_;
  const ClaimFetcher fetch_;
  const PreparerOptions o_;
  // The node's files, under o_.host_root.
  const ::hcudp::internal::HostFs fs_{o_.host_root};
  Clock& clock_;
  const CheckpointStore store_;
  const AllocationBuilder builder_;
  std::string boot_id_;  // set by Recover before serving

  mutable Mutex mu_;
  std::set<std::string> in_flight_ HCUDP_GUARDED_BY(mu_);
  std::map<std::string, PreparedClaim> claims_ HCUDP_GUARDED_BY(mu_);  // prepared, by UID
  std::map<std::string, Pending> pending_ HCUDP_GUARDED_BY(mu_);
  std::map<std::string, Unknown> unknown_ HCUDP_GUARDED_BY(mu_);  // by UID
  // Exclusive device name → UID of the claim whose Prepare is making it.
  std::map<std::string, std::string> reserved_ HCUDP_GUARDED_BY(mu_);
  // The node as of the newest Recover/WriteWholeCardSpec (for Plan), the
  // whole-card spec made from it and its generation; the spec on disk. One
  // call at a time (spec_writer_) writes the file, outside the lock, until
  // the file holds the newest generation's spec.
  std::optional<NodeInventory> inventory_ HCUDP_GUARDED_BY(mu_);
  std::string wanted_spec_ HCUDP_GUARDED_BY(mu_);
  uint64_t spec_generation_ HCUDP_GUARDED_BY(mu_) = 0;
  bool spec_writer_ HCUDP_GUARDED_BY(mu_) = false;
  std::string whole_card_spec_ HCUDP_GUARDED_BY(mu_);  // as written
  // Adopted claims to drop from Hygon's state file; one rewriter at a time,
  // which tells each queued claim its outcome (tickets, hygon_cv_).
  std::vector<std::string> hygon_forget_ HCUDP_GUARDED_BY(mu_);
  bool hygon_writer_ HCUDP_GUARDED_BY(mu_) = false;
  uint64_t hygon_queued_ HCUDP_GUARDED_BY(mu_) = 0;
  uint64_t hygon_done_ HCUDP_GUARDED_BY(mu_) = 0;
  std::map<std::string, Status> hygon_status_ HCUDP_GUARDED_BY(mu_);
  std::condition_variable hygon_cv_;
  // Hygon claims left unadopted while their devices were unknown.
  bool hygon_retry_ HCUDP_GUARDED_BY(mu_) = false;
};

// The last component of a path: a mark file's name from its path.
inline std::string FileNameOf(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// Errors a retry may fix: a per-claim error string rather than an RPC error.
bool Retryable(const Status& status);

}  // namespace hcudp::dra

#endif  // HCUDP_SRC_DRA_PREPARE_IMPL_H_
