// KubeClient: request building, retries with backoff, and watch streams.
#include "hcudp/kube_client.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <chrono>
#include <random>

#include "hcudp/version.h"
#include "hcudp_internal/log.h"
#include "kube/api_error.h"
#include "kube/bearer_token.h"
#include "kube/http_request.h"
#include "kube/watch_event.h"

namespace hcudp {
namespace {

using kube::HttpRequest;
using kube::HttpResponse;
using kube::ParseWatchLine;
using kube::UrlEscape;

void AddQuery(std::string* query, std::string_view key, std::string_view value) {
  query->append(query->empty() ? "?" : "&");
  query->append(key);
  query->append("=");
  query->append(UrlEscape(value));
}

std::string ListQuery(const ListOptions& o, bool watch, int default_watch_timeout_s) {
  std::string q;
  if (watch) AddQuery(&q, "watch", "true");
  if (!o.label_selector.empty()) AddQuery(&q, "labelSelector", o.label_selector);
  if (!o.field_selector.empty()) AddQuery(&q, "fieldSelector", o.field_selector);
  if (!o.resource_version.empty()) AddQuery(&q, "resourceVersion", o.resource_version);
  if (!watch && o.limit > 0) AddQuery(&q, "limit", std::to_string(o.limit));
  if (!watch && !o.continue_token.empty()) AddQuery(&q, "continue", o.continue_token);
  if (watch) {
    int timeout = o.timeout_seconds > 0 ? o.timeout_seconds : default_watch_timeout_s;
    AddQuery(&q, "timeoutSeconds", std::to_string(timeout));
    if (o.allow_watch_bookmarks) AddQuery(&q, "allowWatchBookmarks", "true");
  }
  return q;
}

// An ERROR event's Status object → hcudp::Status (410 → OutOfRange).
Status WatchErrorStatus(const std::string& object_json, const std::string& what) {
  rapidjson::Document doc;
  doc.Parse(object_json.data(), object_json.size());
  long code = 500;  // NOLINT(runtime/int)
  if (!doc.HasParseError() && doc.IsObject()) {
    auto c = doc.FindMember("code");
    if (c != doc.MemberEnd() && c->value.IsInt()) code = c->value.GetInt();
  }
  return kube::ApiError(code, object_json, what + " (watch ERROR event)");
}

}  // namespace

std::string ResourcePath::ToString() const {
  std::string out = api_prefix;
  if (!namespace_name.empty()) out += "/namespaces/" + UrlEscape(namespace_name);
  out += "/" + UrlEscape(resource);
  if (!name.empty()) out += "/" + UrlEscape(name);
  if (!subresource.empty()) out += "/" + UrlEscape(subresource);
  return out;
}

ResourcePath NodePath(std::string name) {
  ResourcePath p;
  p.resource = "nodes";
  p.name = std::move(name);
  return p;
}

ResourcePath NodeStatusPath(std::string name) {
  ResourcePath p = NodePath(std::move(name));
  p.subresource = "status";
  return p;
}

ResourcePath PodsPath(std::string namespace_name) {
  ResourcePath p;
  p.resource = "pods";
  p.namespace_name = std::move(namespace_name);
  return p;
}

ResourcePath PodPath(std::string namespace_name, std::string name) {
  ResourcePath p = PodsPath(std::move(namespace_name));
  p.name = std::move(name);
  return p;
}

ResourcePath ConfigMapsPath(std::string namespace_name) {
  ResourcePath p;
  p.resource = "configmaps";
  p.namespace_name = std::move(namespace_name);
  return p;
}

ResourcePath ConfigMapPath(std::string namespace_name, std::string name) {
  ResourcePath p = ConfigMapsPath(std::move(namespace_name));
  p.name = std::move(name);
  return p;
}

std::string_view PatchContentType(PatchType type) {
  switch (type) {
    case PatchType::kMerge:
      return "application/merge-patch+json";
    case PatchType::kStrategicMerge:
      return "application/strategic-merge-patch+json";
    case PatchType::kJson:
      return "application/json-patch+json";
  }
  return "application/merge-patch+json";
}

bool IsNotFound(const Status& s) { return s.code() == StatusCode::kNotFound; }
bool IsConflict(const Status& s) { return s.code() == StatusCode::kAborted; }
bool IsAlreadyExists(const Status& s) { return s.code() == StatusCode::kAlreadyExists; }
bool IsGone(const Status& s) { return s.code() == StatusCode::kOutOfRange; }

class KubeClient::Impl {
 public:
  Impl(KubeConfig config, KubeClientOptions options, std::shared_ptr<RetryPolicy> policy)
      : config_(std::move(config)),
        options_(std::move(options)),
        clock_(options_.clock != nullptr ? *options_.clock : Clock::Real()),
        policy_(std::move(policy)),
        token_(config_.token, config_.token_file) {
    tls_.ca_pem = config_.ca_pem;
    tls_.insecure_skip_verify = config_.insecure_skip_tls_verify;
    tls_.client_cert_pem = config_.client_cert_pem;
    tls_.client_key_pem = config_.client_key_pem;
    if (options_.user_agent.empty()) {
      options_.user_agent = std::string("hcu-device-plugin/") + Version();
    }
  }

  const KubeConfig& config() const { return config_; }
  Clock& clock() const { return clock_; }
  RetryPolicy& policy() const { return *policy_; }
  const KubeClientOptions& options() const { return options_; }

  // Builds the request for `method` on `path_and_query` with auth headers.
  StatusOr<HttpRequest> Build(const std::string& method, const std::string& path_and_query,
                              std::string_view content_type, std::string body) {
    HttpRequest r;
    r.method = method;
    r.url = config_.server + path_and_query;
    r.headers.push_back("Accept: application/json");
    r.headers.push_back("User-Agent: " + options_.user_agent);
    if (!content_type.empty()) r.headers.push_back("Content-Type: " + std::string(content_type));
    HCUDP_ASSIGN_OR_RETURN(std::string token, token_.Current());
    if (!token.empty()) r.headers.push_back("Authorization: Bearer " + token);
    r.body = std::move(body);
    r.connect_timeout_ms = options_.connect_timeout_ms;
    r.total_timeout_ms = options_.request_timeout_ms;
    return r;
  }

  // The pause before retry `attempt` (0-based) of a call: the ladder of the
  // loop making it, a fresh one of the call's own (`*own`, made on first
  // use), or for a caller with its own deadline a short ladder of its own
  // (see CallOptions::within_deadline).
  std::chrono::milliseconds RetryPause(int attempt, const std::optional<int>& retry_after_s,
                                       const CallOptions& call,
                                       std::unique_ptr<hcudp::Backoff>* own) {
    if (!call.within_deadline || !call.deadline) {
      if (call.backoff != nullptr) return call.backoff->Pause(retry_after_s);
      if (*own == nullptr) *own = policy_->NewBackoff();
      return (*own)->Pause(retry_after_s);
    }
    int64_t step_ms = 100;
    for (int i = 0; i < attempt && step_ms < 1000; ++i) step_ms *= 2;
    step_ms = std::min<int64_t>(step_ms, 1000);
    thread_local std::minstd_rand rng(std::random_device{}());
    step_ms -= std::uniform_int_distribution<int64_t>(0, step_ms / 2)(rng);
    return PauseForRetryAfter(std::chrono::milliseconds(step_ms), retry_after_s,
                              policy_->options().max_retry_after);
  }

  // Waits `delay` on the clock unless the call's cancel flag is set first
  // (checked every 50 ms). False when cancelled.
  bool Backoff(std::chrono::milliseconds delay, const CallOptions& call) {
    const Clock::TimePoint until = clock_.Now() + delay;
    for (;;) {
      if (call.cancel != nullptr && call.cancel->load()) return false;
      const Clock::TimePoint now = clock_.Now();
      if (now >= until) return true;
      clock_.SleepUntil(std::min<Clock::TimePoint>(until, now + std::chrono::milliseconds(50)));
    }
  }

  // One API call with retries. Returns the body of a 2xx response.
  StatusOr<std::string> Call(const std::string& method, const std::string& path_and_query,
                             std::string_view content_type, std::string_view body,
                             const CallOptions& call) {
    const std::string what = method + " " + path_and_query;
    const int max_retries = std::max(0, call.max_retries.value_or(options_.max_retries));
    if (call.retry_after_s != nullptr) call.retry_after_s->reset();
    bool reauthenticated = false;
    std::unique_ptr<hcudp::Backoff> own_backoff;  // a one-off call's ladder
    for (int attempt = 0;; ++attempt) {
      if (call.cancel != nullptr && call.cancel->load()) {
        return Status(StatusCode::kCancelled, what + ": cancelled");
      }
      HCUDP_ASSIGN_OR_RETURN(HttpRequest request,
                             Build(method, path_and_query, content_type, std::string(body)));
      // The transfer runs in real time: what is left of the deadline on the
      // client's clock becomes a real-time deadline for the HTTP layer.
      const Clock::TimePoint start = clock_.Now();
      if (call.deadline) {
        request.deadline = std::chrono::steady_clock::now() + (*call.deadline - start);
      }
      request.cancel = call.cancel;
      bool maybe_sent = true;
      request.maybe_sent = &maybe_sent;
      request.fresh_connection = method == "POST";
      StatusOr<HttpResponse> response = pool_.Perform(tls_, request);
      if (options_.on_response) {
        options_.on_response(method, response.ok() ? static_cast<int>(response->status) : 0);
      }
      auto elapsed_ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(clock_.Now() - start).count();
      std::optional<int> retry_after;
      Status failure;
      if (!response.ok()) {
        failure = response.status();
        VLOG(4) << what << " failed after " << elapsed_ms << " ms: " << failure.ToString();
      } else {
        VLOG(4) << what << " -> " << response->status << " in " << elapsed_ms << " ms";
        if (response->status >= 200 && response->status < 300) {
          // Callers parse it with RapidJSON, recursively: a hostile depth
          // would overflow the stack.
          if (!kube::JsonNestingWithin(response->body)) {
            return InvalidArgumentError(what + ": response nests deeper than " +
                                        std::to_string(kube::kMaxJsonDepth) + " levels");
          }
          return std::move(response->body);
        }
        // A rotated token: re-read the file once and repeat.
        if (response->status == 401 && token_.from_file() && !reauthenticated) {
          token_.Invalidate();
          reauthenticated = true;
          --attempt;
          continue;
        }
        failure = kube::ApiError(response->status, response->body, what);
        retry_after = response->retry_after_s;
        if (call.retry_after_s != nullptr) *call.retry_after_s = retry_after;
        if (!kube::IsRetryableHttpStatus(response->status)) return failure;
        // The server may have applied a POST it answered 500/502/504 to.
        if (method == "POST" && response->status != 429 && response->status != 503) {
          return failure.WithContext("not retried: the server may have applied it");
        }
      }
      if (!response.ok() && failure.code() != StatusCode::kUnavailable) return failure;
      if (!response.ok() && method == "POST" && maybe_sent) {
        return failure.WithContext("not retried: the server may have applied it");
      }
      if (attempt >= max_retries) {
        return failure.WithContext("gave up after " + std::to_string(attempt + 1) + " attempts");
      }
      const std::chrono::milliseconds delay = RetryPause(attempt, retry_after, call, &own_backoff);
      if (call.deadline && clock_.Now() + delay >= *call.deadline) {
        return failure.WithContext("no time left for a retry before the deadline");
      }
      LOG(WARNING) << failure.ToString() << "; retrying in " << delay.count() << " ms";
      if (!Backoff(delay, call)) return Status(StatusCode::kCancelled, what + ": cancelled");
    }
  }

  Status Watch(const ResourcePath& collection, const ListOptions& options,
               const std::function<bool(const WatchEvent&)>& on_event,
               const std::atomic<bool>* cancel, std::optional<int>* retry_after_s) {
    if (retry_after_s != nullptr) retry_after_s->reset();
    const std::string path_and_query =
        collection.ToString() + ListQuery(options, true, options_.watch_timeout_s);
    const std::string what = "WATCH " + path_and_query;
    HCUDP_ASSIGN_OR_RETURN(HttpRequest request, Build("GET", path_and_query, "", ""));
    request.total_timeout_ms = 0;
    int server_timeout_s =
        options.timeout_seconds > 0 ? options.timeout_seconds : options_.watch_timeout_s;
    request.idle_timeout_s = server_timeout_s + 30;
    // With bookmarks asked for, silence means the stream is dead, long
    // before the server's own timeout would end it.
    if (options.allow_watch_bookmarks) {
      request.idle_timeout_s = std::min(request.idle_timeout_s, options_.watch_stall_timeout_s);
    }
    request.cancel = cancel;

    std::string pending;
    Status stream_status;
    bool consumer_stopped = false;
    WatchEvent event;
    request.on_body_data = [&](std::string_view data) {
      // Only the new bytes are searched for line ends: a long line costs
      // linear time, not a rescan of all of it per chunk.
      size_t scan_from = pending.size();
      pending.append(data);
      size_t line_start = 0;
      size_t newline;
      while ((newline = pending.find('\n', scan_from)) != std::string::npos) {
        std::string_view line(pending.data() + line_start, newline - line_start);
        line_start = newline + 1;
        scan_from = line_start;
        if (!line.empty()) {
          Status parsed = ParseWatchLine(line, &event);
          if (!parsed.ok()) {
            stream_status = parsed.WithContext(what);
            return false;
          }
          if (event.type == WatchEventType::kError) {
            stream_status = WatchErrorStatus(event.object_json, what);
            return false;
          }
          if (!on_event(event)) {
            consumer_stopped = true;
            return false;
          }
        }
      }
      pending.erase(0, line_start);
      // A line that never ends (a broken proxy, a wrong server) is not
      // buffered without bound.
      if (pending.size() > request.max_body_bytes) {
        stream_status = Status(StatusCode::kResourceExhausted,
                               what + ": a watch event line longer than " +
                                   std::to_string(request.max_body_bytes) + " bytes");
        return false;
      }
      return true;
    };
    VLOG(4) << what << " started";
    StatusOr<HttpResponse> response = pool_.Perform(tls_, request);
    if (options_.on_response) {
      options_.on_response("WATCH", response.ok() ? static_cast<int>(response->status) : 0);
    }
    if (!stream_status.ok()) return stream_status;
    if (consumer_stopped) return OkStatus();
    if (!response.ok()) return response.status();
    if (response->status == 401 && token_.from_file()) token_.Invalidate();
    if (response->status < 200 || response->status >= 300) {
      if (retry_after_s != nullptr) *retry_after_s = response->retry_after_s;
      return kube::ApiError(response->status, response->body, what);
    }
    VLOG(4) << what << " ended by the server";
    return OkStatus();
  }

 private:
  const KubeConfig config_;
  KubeClientOptions options_;
  Clock& clock_;
  const std::shared_ptr<RetryPolicy> policy_;
  kube::TlsMaterial tls_;
  kube::BearerToken token_;
  kube::HttpChannelPool pool_;
};

KubeClient::KubeClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KubeClient::~KubeClient() = default;

Clock& KubeClient::clock() const { return impl_->clock(); }
RetryPolicy& KubeClient::retry_policy() const { return impl_->policy(); }

StatusOr<std::unique_ptr<KubeClient>> KubeClient::New(KubeConfig config,
                                                      KubeClientOptions options) {
  if (config.server.rfind("https://", 0) != 0 && config.server.rfind("http://", 0) != 0) {
    return InvalidArgumentError("kube client: server \"" + config.server +
                                "\" must start with https:// or http://");
  }
  if (config.client_cert_pem.empty() != config.client_key_pem.empty()) {
    return InvalidArgumentError("kube client: client certificate and key must be set together");
  }
  if (options.connect_timeout_ms <= 0 || options.request_timeout_ms <= 0 ||
      options.watch_timeout_s <= 0 || options.watch_stall_timeout_s <= 0 ||
      options.max_retries < 0) {
    return InvalidArgumentError("kube client: timeouts must be > 0 and max_retries >= 0");
  }
  std::shared_ptr<RetryPolicy> policy = options.retry_policy;
  if (policy == nullptr) {
    RetryPolicyOptions ro;
    ro.initial_backoff = std::chrono::milliseconds(options.initial_backoff_ms);
    ro.max_backoff = std::chrono::milliseconds(options.max_backoff_ms);
    ro.max_retry_after = std::chrono::milliseconds(std::max(0, options.max_retry_after_ms));
    ro.budget_refill = std::chrono::milliseconds(std::max(1, options.max_backoff_ms / 6));
    ro.clock = options.clock;
    StatusOr<std::shared_ptr<RetryPolicy>> made = RetryPolicy::New(ro);
    if (!made.ok()) return made.status().WithContext("kube client");
    policy = std::move(made).value();
  }
  return std::unique_ptr<KubeClient>(new KubeClient(
      std::make_unique<Impl>(std::move(config), std::move(options), std::move(policy))));
}

const std::string& KubeClient::server() const { return impl_->config().server; }

StatusOr<std::string> KubeClient::Get(const ResourcePath& path, const CallOptions& call) {
  return impl_->Call("GET", path.ToString(), "", "", call);
}

StatusOr<std::string> KubeClient::List(const ResourcePath& collection, const ListOptions& options,
                                       const CallOptions& call) {
  return impl_->Call("GET", collection.ToString() + ListQuery(options, false, 0), "", "", call);
}

StatusOr<std::string> KubeClient::Create(const ResourcePath& collection,
                                         std::string_view object_json, const CallOptions& call) {
  return impl_->Call("POST", collection.ToString(), "application/json", object_json, call);
}

StatusOr<std::string> KubeClient::Patch(const ResourcePath& path, PatchType type,
                                        std::string_view patch, const CallOptions& call) {
  return impl_->Call("PATCH", path.ToString(), PatchContentType(type), patch, call);
}

StatusOr<std::string> KubeClient::Update(const ResourcePath& path, std::string_view object_json,
                                         const CallOptions& call) {
  return impl_->Call("PUT", path.ToString(), "application/json", object_json, call);
}

StatusOr<std::string> KubeClient::Delete(const ResourcePath& path, const DeleteOptions& options,
                                         const CallOptions& call) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("kind");
  w.String("DeleteOptions");
  w.Key("apiVersion");
  w.String("v1");
  if (options.grace_period_seconds) {
    w.Key("gracePeriodSeconds");
    w.Int64(*options.grace_period_seconds);
  }
  if (options.precondition_uid || options.precondition_resource_version) {
    w.Key("preconditions");
    w.StartObject();
    if (options.precondition_uid) {
      w.Key("uid");
      w.String(options.precondition_uid->c_str());
    }
    if (options.precondition_resource_version) {
      w.Key("resourceVersion");
      w.String(options.precondition_resource_version->c_str());
    }
    w.EndObject();
  }
  w.EndObject();
  return impl_->Call("DELETE", path.ToString(), "application/json",
                     std::string_view(buffer.GetString(), buffer.GetSize()), call);
}

Status KubeClient::Watch(const ResourcePath& collection, const ListOptions& options,
                         const std::function<bool(const WatchEvent&)>& on_event,
                         const std::atomic<bool>* cancel, std::optional<int>* retry_after_s) {
  return impl_->Watch(collection, options, on_event, cancel, retry_after_s);
}

}  // namespace hcudp
