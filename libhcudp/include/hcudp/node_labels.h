// Node labels (DESIGN.md §10, doc/labels.md): what the node's HCUs look like,
// as Kubernetes labels, and the publisher that keeps them current.
//
// The label set: the keys of Hygon's k8s-hcu-label-node (hygon.com/hcu,
// .name, .cu-count, .vram, .driver-version) and GFD-like additions (.count,
// .memory, .mig.capable, .strategy, .models). A per-card key (name, cu-count,
// vram, memory) is published only when every card whose value is known
// agrees on it (a card awaiting a reset has no compute-unit count), so that a
// heterogeneous node never claims card 0's values for all its cards; such a
// node gets hygon.com/hcu.models instead. Every value passes
// SanitizeLabelValue.
//
// Publishing (NodeLabelPublisher), one background thread:
//   nfd   one features.d file, written atomically (temp + rename; NFD
//         ignores the hidden temp name). hygon.com/hcu=true comes first,
//         without expiry; the other keys follow "# +expiry-time=<RFC3339>"
//         (now + nfd_ttl). The file is rewritten when the labels change and
//         every `refresh` (before the expiry), so the labels lapse only when
//         the daemon has been gone for nfd_ttl; and within `retry` when
//         someone deleted or changed it (the default writer's file). It is
//         kept on exit.
//   node  GET our Node, then a merge patch of metadata.labels that sets our
//         keys and deletes (null) the keys of ManagedNodeLabelKeys() we no
//         longer publish; nothing is sent when the Node already agrees. Done
//         on change and every `refresh` (someone may have edited them).
// hygon.com/hcu is never removed: the plugin's own DaemonSet is placed by it,
// so removing it would evict the plugin with nothing to put it back (nfd: a
// file that has it keeps it, even when no card is seen).
// A failed publish is retried after `retry`, doubling up to `refresh`.
#ifndef HCUDP_NODE_LABELS_H_
#define HCUDP_NODE_LABELS_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hcudp/clock.h"
#include "hcudp/device.h"
#include "hcudp/export.h"
#include "hcudp/kube_client.h"
#include "hcudp/options.h"
#include "hcudp/status.h"

namespace hcudp {

// Label key -> value, sorted by key.
using NodeLabels = std::map<std::string, std::string>;

inline constexpr char kHcuLabel[] = "hygon.com/hcu";

// "off" | "nfd" | "node"; InvalidArgument naming the accepted values.
HCUDP_EXPORT StatusOr<NodeLabelMode> ParseNodeLabelMode(std::string_view text);
HCUDP_EXPORT std::string_view NodeLabelModeName(NodeLabelMode mode);

// A label value as the API accepts it: at most 63 characters of
// [A-Za-z0-9._-], beginning and ending with an alphanumeric (or empty).
// Blanks become '-', other characters are dropped, then the ends are trimmed
// and the result cut to 63 (and trimmed again).
HCUDP_EXPORT std::string SanitizeLabelValue(std::string_view raw);
HCUDP_EXPORT bool IsValidLabelValue(std::string_view value);

// The labels describing `inventory` (see above); `strategy` is the daemon's.
// A node without cards gets no labels.
HCUDP_EXPORT NodeLabels ComputeNodeLabels(const NodeInventory& inventory, Strategy strategy);

// Every key ComputeNodeLabels may produce except hygon.com/hcu: the keys the
// node mode deletes when they no longer apply. Sorted.
HCUDP_EXPORT const std::vector<std::string>& ManagedNodeLabelKeys();

// The features.d file for `labels` (see above); `expiry` is written as
// RFC3339 UTC seconds ("2026-12-01T20:10:00Z").
HCUDP_EXPORT std::string RenderNfdFeatureFile(const NodeLabels& labels, Clock::WallTime expiry);

struct NodeLabelPublisherOptions {
  NodeLabelMode mode = NodeLabelMode::kOff;
  // nfd: the features.d directory (created if missing) and our file in it.
  std::string nfd_features_dir = "/etc/kubernetes/node-feature-discovery/features.d";
  std::string nfd_file_name = "hcu-device-plugin";
  // How long the file's expiring labels stay valid after a write.
  std::chrono::seconds nfd_ttl{600};
  // node: our Node, and the client (not owned; outlives the publisher).
  std::string node_name;
  KubeClient* client = nullptr;
  // Re-publish period (nfd: must be below nfd_ttl), and the first retry
  // delay after a failure.
  std::chrono::seconds refresh{300};
  std::chrono::seconds retry{5};
  // How long Stop() waits for a features.d write in progress (it fsyncs; a
  // stuck disk can hold it for ever) before it leaves the thread to finish
  // the write alone and returns.
  std::chrono::milliseconds stop_timeout{1000};
  // nfd: writes `content` to `path`. Default (empty): atomically, with the
  // file fsynced (temp + rename). Tests substitute a double.
  std::function<Status(const std::string& path, const std::string& content)> write_file;
};

class HCUDP_EXPORT NodeLabelPublisher {
 public:
  // `clock` times refresh, retry and the expiry written (its wall time); not
  // owned.
  explicit NodeLabelPublisher(NodeLabelPublisherOptions options, Clock& clock = Clock::Real());
  ~NodeLabelPublisher();  // Stop()s
  NodeLabelPublisher(const NodeLabelPublisher&) = delete;
  NodeLabelPublisher& operator=(const NodeLabelPublisher&) = delete;

  // InvalidArgument for options that cannot work (no directory, no node
  // name or client, refresh not below nfd_ttl); then starts the thread. Off:
  // OK, and nothing runs.
  Status Start();
  // The labels to publish from now on. Never blocks on I/O: the thread
  // publishes them (at once when they differ from the last ones).
  void Update(NodeLabels labels);
  // Ends an API call in flight (~50 ms) and joins the thread: once it
  // returns, the client is no longer used (a call that does not see the
  // cancel is waited for; the client's request timeout bounds it). A file
  // write still running after stop_timeout is left to finish on its own (the
  // thread ends right after it, touching nothing). Bounded; idempotent.
  void Stop();

  // Successful publishes so far (file writes; node GET+PATCH rounds, also
  // those that found nothing to change), and the last publish's result.
  uint64_t publishes() const;
  Status last_status() const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace hcudp

#endif  // HCUDP_NODE_LABELS_H_
