// NodeOps: the node agent operations of every strategy (DESIGN.md §10) —
// node labels (--node-labels) and Kubernetes Events (--events) — built from
// Options and fed by the node watcher (hcudp/node.h's listeners): what the
// labels say about the node's HCUs and what an Event says about a card. Everything that talks to
// the API server or writes a file runs on the publisher's and recorder's own threads: the hooks
// below only hand values over, so neither the monitor nor an Allocate ever waits.
#ifndef HCUDP_NODE_OPS_H_
#define HCUDP_NODE_OPS_H_

#include <functional>
#include <memory>
#include <string>

#include "hcudp/device.h"
#include "hcudp/export.h"
#include "hcudp/kube_client.h"
#include "hcudp/options.h"
#include "hcudp/status.h"
#include "hcudp/vhcu_manager.h"

namespace hcudp {

class HCUDP_EXPORT NodeOps {
 public:
  // Builds what the flags turn on; nothing starts yet. The API calls go
  // through `shared_client` when the mode has one (HAMi, DRA: one
  // connection pool and one credential reader for the whole daemon; not
  // owned, must outlive the NodeOps); otherwise NodeOps resolves the
  // credentials itself, once, and only when --node-labels=node or --events
  // needs them. Credentials "work" when the kubeconfig (or in-cluster
  // service account) resolves and every file it names, the token file
  // included, is readable.
  // --events=auto uses events when credentials work and --node-name is set;
  // otherwise it logs one warning saying why (naming the file) and the
  // daemon runs without events; so it does, after one warning, once the
  // API server refuses the credentials (401, 403). --events=true or --node-labels=node
  // without working credentials is an input error naming the file (exit 2).
  // `on_response` is the own client's KubeClientOptions::on_response.
  static StatusOr<std::unique_ptr<NodeOps>> New(
      const Options& options, KubeClient* shared_client = nullptr,
      std::function<void(const std::string& verb, int code)> on_response = nullptr);
  ~NodeOps();

  // Starts the publisher and the recorder (those that are on).
  Status Start();
  // Ends API calls in flight and joins the threads; idempotent.
  void Stop();

  // Every look the node watcher takes at the node (its inventory listener),
  // published or not: the labels are published whenever a labelled value
  // (driver version, model, count...) changed, even when the resource set
  // kubelet sees did not.
  void OnInventory(const NodeInventory& inventory);
  // A card's reported health changed (after hysteresis), with the reason the
  // health source gave.
  void OnHealthChanged(const Card& card, Health health, const std::string& reason);
  // The vHCU journal recovery at start-up cleaned up after a crash.
  void OnVhcusRecovered(const VhcuSweepResult& result);

  bool labels_on() const;
  bool events_on() const;
  // The client the labels and events use (the shared one, or NodeOps' own);
  // null when neither needs the API server.
  KubeClient* client() const;

  struct Impl;

 private:
  explicit NodeOps(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace hcudp

#endif  // HCUDP_NODE_OPS_H_
