// NodeLabelPublisher: the background thread that writes the features.d file
// or patches the Node (hcudp/node_labels.h).
#include <glog/logging.h>
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

class NodeLabelPublisher::Impl {
 public:
  Impl(NodeLabelPublisherOptions options, Clock& clock)
      : options_(std::move(options)), clock_(clock) {}

  Status Validate() const {
    switch (options_.mode) {
      case NodeLabelMode::kOff:
        return OkStatus();
      case NodeLabelMode::kNfd:
        if (options_.nfd_features_dir.empty() || options_.nfd_file_name.empty() ||
            options_.nfd_file_name[0] == '.' ||
            options_.nfd_file_name.find('/') != std::string::npos) {
          return InvalidArgumentError(
              "--nfd-features-dir: a directory and a plain, visible file name are required");
        }
        if (options_.refresh >= options_.nfd_ttl || options_.refresh.count() <= 0) {
          return InvalidArgumentError("node labels: the refresh period must be below the expiry");
        }
        return OkStatus();
      case NodeLabelMode::kNode:
        if (options_.node_name.empty() || options_.client == nullptr) {
          return InvalidArgumentError(
              "--node-labels=node: needs --node-name and cluster credentials");
        }
        return options_.refresh.count() > 0 ? OkStatus()
                                            : InvalidArgumentError("node labels: refresh <= 0");
    }
    return OkStatus();
  }

  Status Start() {
    HCUDP_RETURN_IF_ERROR(Validate());
    if (options_.mode == NodeLabelMode::kOff) return OkStatus();
    thread_ = std::thread([this] { Loop(); });
    return OkStatus();
  }

  void Update(NodeLabels labels) {
    {
      MutexLock lock(mu_);
      // The first value is always published, even an empty one (no cards
      // yet): it removes what an earlier run left behind.
      if (pending_ && *pending_ == labels) return;
      pending_ = std::move(labels);
      changed_ = true;
    }
    cv_.notify_all();
  }

  void Stop() {
    {
      MutexLock lock(mu_);
      stopping_ = true;
    }
    cancel_ = true;
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  uint64_t publishes() const { return publishes_; }
  Status last_status() const {
    MutexLock lock(mu_);
    return last_status_;
  }

 private:
  void Loop() {
    std::optional<NodeLabels> published;  // what the last success published
    Clock::TimePoint next = Clock::TimePoint::max();
    std::chrono::seconds backoff = options_.retry;
    for (;;) {
      NodeLabels labels;
      {
        MutexLock lock(mu_);
        // A "never" deadline still wakes hourly (no time_point::max arithmetic).
        WaitUntil(clock_, mu_, cv_, std::min(next, clock_.Now() + std::chrono::hours(1)),
                  [this]() HCUDP_REQUIRES(mu_) { return changed_ || stopping_; });
        if (stopping_) return;
        if (!changed_ && clock_.Now() < next) continue;
        changed_ = false;
        if (!pending_) continue;  // a refresh before the first Update
        labels = *pending_;
      }
      Status st = Publish(labels);
      {
        MutexLock lock(mu_);
        last_status_ = st;
      }
      if (st.ok()) {
        if (published != labels) {
          LOG(INFO) << "node labels published (" << NodeLabelModeName(options_.mode)
                    << "): " << labels.size() << " keys";
        }
        published = labels;
        ++publishes_;
        backoff = options_.retry;
        next = clock_.Now() + options_.refresh;
      } else {
        if (cancel_) return;
        LOG(WARNING) << "node labels (" << NodeLabelModeName(options_.mode)
                     << "): " << st.ToString() << "; retrying in " << backoff.count() << " s";
        next = clock_.Now() + backoff;
        backoff = std::min(backoff * 2, options_.refresh);
      }
    }
  }

  Status Publish(const NodeLabels& labels) {
    if (options_.mode == NodeLabelMode::kNfd) return WriteFile(labels);
    return PatchNode(labels);
  }

  Status WriteFile(const NodeLabels& labels) {
    HCUDP_RETURN_IF_ERROR(
        file_util::MakeDirs(options_.nfd_features_dir, 0755).WithContext("--nfd-features-dir"));
    const std::string path = options_.nfd_features_dir + "/" + options_.nfd_file_name;
    return file_util::WriteFileAtomic(
               path, RenderNfdFeatureFile(labels, clock_.WallNow() + options_.nfd_ttl), 0644,
               file_util::Durability::kSyncFile)
        .WithContext("node labels file");
  }

  Status PatchNode(const NodeLabels& labels) {
    CallOptions call;
    call.cancel = &cancel_;
    call.max_retries = 0;  // the loop's backoff is the one retry layer
    ResourcePath path = NodePath(options_.node_name);
    HCUDP_ASSIGN_OR_RETURN(std::string json, options_.client->Get(path, call));
    HCUDP_ASSIGN_OR_RETURN(NodeLabels have, NodeLabelsOf(json));
    std::optional<std::string> patch = NodeLabelPatch(have, labels);
    if (!patch) return OkStatus();
    VLOG(2) << "node labels: patching node " << options_.node_name << ": " << *patch;
    return options_.client->Patch(path, PatchType::kMerge, *patch, call).status();
  }

  const NodeLabelPublisherOptions options_;
  Clock& clock_;
  mutable Mutex mu_;
  std::condition_variable cv_;
  std::optional<NodeLabels> pending_ HCUDP_GUARDED_BY(mu_);
  bool changed_ HCUDP_GUARDED_BY(mu_) = false;
  bool stopping_ HCUDP_GUARDED_BY(mu_) = false;
  Status last_status_ HCUDP_GUARDED_BY(mu_);
  std::atomic<bool> cancel_{false};
  std::atomic<uint64_t> publishes_{0};
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
