// NodeLabelPublisher: the background thread that writes the features.d file
// or patches the Node (hcudp/node_labels.h).
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <optional>
#include <thread>

#include "hcudp/node_labels.h"
#include "hcudp_internal/clock_wait.h"
#include "hcudp_internal/file_util.h"
#include "hcudp_internal/log.h"
#include "hcudp_internal/thread_annotations.h"
#include "ops/labels_internal.h"

namespace hcudp {
namespace {

// metadata.labels of a Node object; InvalidArgument when the JSON is not a
// Node-like object.
StatusOr<NodeLabels> NodeLabelsOf(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return InvalidArgumentError("Node from the API server: not a JSON object");
  }
  NodeLabels out;
  auto meta = doc.FindMember("metadata");
  if (meta == doc.MemberEnd() || !meta->value.IsObject()) {
    return InvalidArgumentError("Node from the API server: no metadata object");
  }
  auto labels = meta->value.FindMember("labels");
  if (labels == meta->value.MemberEnd() || labels->value.IsNull()) return out;
  if (!labels->value.IsObject()) {
    return InvalidArgumentError("Node from the API server: metadata.labels is not an object");
  }
  for (auto& m : labels->value.GetObject()) {
    if (!m.value.IsString()) {
      return InvalidArgumentError("Node from the API server: label " +
                                  std::string(m.name.GetString()) + " is not a string");
    }
    out[m.name.GetString()] = m.value.GetString();
  }
  return out;
}

}  // namespace

std::optional<std::string> NodeLabelPatch(const NodeLabels& have, const NodeLabels& want) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  bool any = false;
  w.StartObject();
  w.Key("metadata");
  w.StartObject();
  w.Key("labels");
  w.StartObject();
  for (const auto& [key, value] : want) {
    auto it = have.find(key);
    if (it != have.end() && it->second == value) continue;
    w.Key(key.c_str());
    w.String(value.c_str());
    any = true;
  }
  for (const std::string& key : ManagedNodeLabelKeys()) {
    if (want.count(key) || !have.count(key)) continue;
    w.Key(key.c_str());
    w.Null();
    any = true;
  }
  w.EndObject();
  w.EndObject();
  w.EndObject();
  if (!any) return std::nullopt;
  return std::string(buf.GetString(), buf.GetSize());
}

// What the publisher thread uses, shared with it: a thread left behind by a
// bounded Stop() (a write stuck in the kernel) keeps it alive and, once the
// write returns, sees `stopping` and ends without touching anything else.
struct PublisherState {
  PublisherState(NodeLabelPublisherOptions o, Clock& c)
      : options(std::move(o)),
        clock(c),
        backoff(options.client != nullptr ? options.client->retry_policy().NewBackoff() : nullptr) {
  }
  const NodeLabelPublisherOptions options;
  Clock& clock;
  // The labels loop's own ladder (retry_policy.h); null without a client.
  const std::unique_ptr<Backoff> backoff;
  mutable Mutex mu;
  std::condition_variable cv;
  std::condition_variable_any exited_cv;
  std::optional<NodeLabels> pending HCUDP_GUARDED_BY(mu);
  bool changed HCUDP_GUARDED_BY(mu) = false;
  bool stopping HCUDP_GUARDED_BY(mu) = false;
  bool exited HCUDP_GUARDED_BY(mu) = false;
  Status last_status HCUDP_GUARDED_BY(mu);
  std::atomic<bool> cancel{false};
  std::atomic<uint64_t> publishes{0};
};

class NodeLabelPublisher::Impl {
 public:
  Impl(NodeLabelPublisherOptions options, Clock& clock)
      : s_(std::make_shared<PublisherState>(std::move(options), clock)) {}

  Status Validate() const {
    const NodeLabelPublisherOptions& o = s_->options;
    switch (o.mode) {
      case NodeLabelMode::kOff:
        return OkStatus();
      case NodeLabelMode::kNfd:
        if (o.nfd_features_dir.empty() || o.nfd_file_name.empty() || o.nfd_file_name[0] == '.' ||
            o.nfd_file_name.find('/') != std::string::npos) {
          return InvalidArgumentError(
              "--nfd-features-dir: a directory and a plain, visible file name are required");
        }
        if (o.refresh >= o.nfd_ttl || o.refresh.count() <= 0) {
          return InvalidArgumentError("node labels: the refresh period must be below the expiry");
        }
        return OkStatus();
      case NodeLabelMode::kNode:
        if (o.node_name.empty() || o.client == nullptr) {
          return InvalidArgumentError(
              "--node-labels=node: needs --node-name and cluster credentials");
        }
        return o.refresh.count() > 0 ? OkStatus()
                                     : InvalidArgumentError("node labels: refresh <= 0");
    }
    return OkStatus();
  }

  Status Start() {
    HCUDP_RETURN_IF_ERROR(Validate());
    if (s_->options.mode == NodeLabelMode::kOff) return OkStatus();
    thread_ = std::thread([s = s_] {
      Loop(*s);
      MutexLock lock(s->mu);
      s->exited = true;
      s->exited_cv.notify_all();
    });
    return OkStatus();
  }

  void Update(NodeLabels labels) {
    {
      MutexLock lock(s_->mu);
      // The first value is always published, even an empty one (no cards
      // yet): it removes what an earlier run left behind.
      if (s_->pending && *s_->pending == labels) return;
      s_->pending = std::move(labels);
      s_->changed = true;
    }
    s_->cv.notify_all();
  }

  // Bounded: an API call ends within ~50 ms (cancel), or by the client's
  // request timeout, and is always waited for, as the client outlives the
  // publisher only until Stop() returns. A file write cannot be cancelled,
  // so after stop_timeout the thread is left to finish it alone.
  void Stop() {
    {
      MutexLock lock(s_->mu);
      s_->stopping = true;
    }
    s_->cancel = true;
    s_->cv.notify_all();
    if (!thread_.joinable()) return;
    const auto deadline = std::chrono::steady_clock::now() + s_->options.stop_timeout;
    bool exited;
    {
      MutexLock lock(s_->mu);
      while (!s_->exited && s_->exited_cv.wait_until(s_->mu, deadline) != std::cv_status::timeout) {
      }
      exited = s_->exited;
    }
    if (exited) {
      thread_.join();
      return;
    }
    if (s_->options.mode == NodeLabelMode::kNode) {
      // The thread is inside a client call that has not seen the cancel yet
      // (a token read, a response callback). The client is not ours and goes
      // after Stop(): the thread must be out of it first. The client's own
      // request timeout bounds the call.
      LOG(WARNING) << "node labels: an API call did not end within "
                   << s_->options.stop_timeout.count() << " ms of its cancel; waiting for it";
      thread_.join();
      return;
    }
    LOG(WARNING) << "node labels: a write to " << s_->options.nfd_features_dir
                 << " did not finish within " << s_->options.stop_timeout.count()
                 << " ms (a stuck disk?); stopping without waiting for it";
    thread_.detach();
  }

  uint64_t publishes() const { return s_->publishes; }
  Status last_status() const {
    MutexLock lock(s_->mu);
    return s_->last_status;
  }

 private:
  static bool Stopping(PublisherState& s) {
    MutexLock lock(s.mu);
    return s.stopping;
  }

  static void Loop(PublisherState& s) {
    const NodeLabelPublisherOptions& options = s.options;
    std::optional<NodeLabels> published;  // what the last success published
    Clock::TimePoint next = Clock::TimePoint::max();
    // nfd: the file as the last success wrote it, and when to look at it
    // again. A file deleted or changed by someone else (a cleanup, a hand
    // edit) is written again within `retry`, not only at the next refresh:
    // NFD would drop the node's labels meanwhile, hygon.com/hcu with them.
    std::string written;
    Clock::TimePoint check = Clock::TimePoint::max();
    std::chrono::seconds backoff = options.retry;
    for (;;) {
      NodeLabels labels;
      bool look = false;  // a look at the file, not a publish
      {
        MutexLock lock(s.mu);
        // A "never" deadline still wakes hourly (no time_point::max arithmetic).
        WaitUntil(s.clock, s.mu, s.cv,
                  std::min({next, check, s.clock.Now() + std::chrono::hours(1)}),
                  [&s]() HCUDP_REQUIRES(s.mu) { return s.changed || s.stopping; });
        if (s.stopping) return;
        look = !s.changed && s.clock.Now() < next;
        if (look) {
          if (s.clock.Now() < check) continue;
          check = s.clock.Now() + options.retry;
        } else {
          s.changed = false;
          if (!s.pending) continue;  // a refresh before the first Update
          labels = *s.pending;
        }
      }
      if (look) {  // read outside the lock
        if (!FileDiffers(s, written)) continue;
        LOG(WARNING) << "node labels file " << options.nfd_features_dir << "/"
                     << options.nfd_file_name << " was removed or changed; writing it again";
        MutexLock lock(s.mu);
        if (!s.pending) continue;
        labels = *s.pending;
      }
      Status st = Publish(s, labels, &written);
      // Stop() may have given up on us during the write: touch nothing.
      if (Stopping(s)) return;
      {
        MutexLock lock(s.mu);
        s.last_status = st;
      }
      if (st.ok()) {
        if (published != labels) {
          LOG(INFO) << "node labels published (" << NodeLabelModeName(options.mode)
                    << "): " << labels.size() << " keys";
        }
        published = labels;
        ++s.publishes;
        backoff = options.retry;
        next = s.clock.Now() + options.refresh;
        // (Only the file the default writer wrote: a test's double
        // writes none.)
        if (options.mode == NodeLabelMode::kNfd && !options.write_file) {
          check = s.clock.Now() + options.retry;
        }
      } else {
        // A failed API call also waits the pause of the labels loop's own
        // ladder (jittered, under the process's retry budget).
        std::chrono::milliseconds pause = backoff;
        if (options.mode == NodeLabelMode::kNode && s.backoff != nullptr) {
          pause = std::max(pause, s.backoff->Pause());
        }
        LOG(WARNING) << "node labels (" << NodeLabelModeName(options.mode) << "): " << st.ToString()
                     << "; retrying in " << pause.count() << " ms";
        next = s.clock.Now() + pause;
        check = Clock::TimePoint::max();  // the retry writes it
        backoff = std::min(backoff * 2, options.refresh);
      }
    }
  }

  static Status Publish(PublisherState& s, const NodeLabels& labels, std::string* written) {
    if (s.options.mode == NodeLabelMode::kNfd) return WriteFile(s, labels, written);
    return PatchNode(s, labels);
  }

  // Whether our file is no longer `written` (gone, changed, unreadable).
  static bool FileDiffers(const PublisherState& s, const std::string& written) {
    StatusOr<std::string> now =
        file_util::ReadFile(s.options.nfd_features_dir + "/" + s.options.nfd_file_name, 65536);
    return !now.ok() || *now != written;
  }

  static Status WriteFile(PublisherState& s, const NodeLabels& labels, std::string* written) {
    const NodeLabelPublisherOptions& o = s.options;
    HCUDP_RETURN_IF_ERROR(
        file_util::MakeDirs(o.nfd_features_dir, 0755).WithContext("--nfd-features-dir"));
    const std::string path = o.nfd_features_dir + "/" + o.nfd_file_name;
    // hygon.com/hcu is never removed (node_labels.h): a file that has it
    // keeps it, even when no card is seen (a driver reload, at a restart
    // too). NFD would drop a label the file no longer has.
    NodeLabels keep = labels;
    if (!keep.count(kHcuLabel)) {
      StatusOr<std::string> earlier = file_util::ReadFile(path, 65536);
      const std::string line = std::string(kHcuLabel) + "=true\n";
      if (earlier.ok() &&
          (earlier->rfind(line, 0) == 0 || earlier->find("\n" + line) != std::string::npos)) {
        keep[kHcuLabel] = "true";
      }
    }
    const std::string text = RenderNfdFeatureFile(keep, s.clock.WallNow() + o.nfd_ttl);
    Status st = o.write_file ? o.write_file(path, text)
                             : file_util::WriteFileAtomic(path, text, 0644,
                                                          file_util::Durability::kSyncFile);
    if (st.ok()) *written = text;
    return st.WithContext("node labels file");
  }

  static Status PatchNode(PublisherState& s, const NodeLabels& labels) {
    CallOptions call;
    call.cancel = &s.cancel;
    call.max_retries = 0;  // the loop's backoff is the one retry layer
    ResourcePath path = NodePath(s.options.node_name);
    HCUDP_ASSIGN_OR_RETURN(std::string json, s.options.client->Get(path, call));
    HCUDP_ASSIGN_OR_RETURN(NodeLabels have, NodeLabelsOf(json));
    std::optional<std::string> patch = NodeLabelPatch(have, labels);
    if (!patch) return OkStatus();
    VLOG(2) << "node labels: patching node " << s.options.node_name << ": " << *patch;
    return s.options.client->Patch(path, PatchType::kMerge, *patch, call).status();
  }

  std::shared_ptr<PublisherState> s_;
  std::thread thread_;
};

NodeLabelPublisher::NodeLabelPublisher(NodeLabelPublisherOptions options, Clock& clock)
    : impl_(std::make_unique<Impl>(std::move(options), clock)) {}
NodeLabelPublisher::~NodeLabelPublisher() { Stop(); }
Status NodeLabelPublisher::Start() { return impl_->Start(); }
void NodeLabelPublisher::Update(NodeLabels labels) { impl_->Update(std::move(labels)); }
void NodeLabelPublisher::Stop() { impl_->Stop(); }
uint64_t NodeLabelPublisher::publishes() const { return impl_->publishes(); }
Status NodeLabelPublisher::last_status() const { return impl_->last_status(); }

}  // namespace hcudp
