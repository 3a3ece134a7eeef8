// StaleLock: releases the node lock (hami.io/mutex.lock) of a pod whose
// Allocate can no longer complete (hami_agent.h), and retries the
// bind-phase=failed patches the failure path could not make. Called from the
// sweep thread only. Internal to the agent.
#ifndef HCUDP_SRC_HAMI_STALE_LOCK_H_
#define HCUDP_SRC_HAMI_STALE_LOCK_H_

#include <string>

#include "hami/agent_context.h"

namespace hcudp::internal {

class StaleLock {
 public:
  explicit StaleLock(AgentContext& ctx) : ctx_(ctx) {}

  // Releases the node lock when its pod's Allocate can no longer complete.
  // `first` at the first sync: the lock found then was left by an earlier
  // process. Unless `first` or `fresh` (a pod event asked for the look), a
  // recent enough view of the Node from the registrar's handshake stands in
  // for a GET when it shows no lock.
  void Release(bool first, bool fresh = true);
  // Whether Release(first=true) ran and read the node.
  bool inherited_known() const { return inherited_known_; }
  // Retries the bind-phase=failed patches the failure path could not make.
  void MarkUnmarkedFailures();

 private:
  AgentContext& ctx_;
  // The node lock found at the first sync (left by an earlier process).
  std::string inherited_lock_;
  bool inherited_known_ = false;
};

}  // namespace hcudp::internal

#endif  // HCUDP_SRC_HAMI_STALE_LOCK_H_
