#include "dra/health_service.h"

#include <optional>

#include "hcudp_internal/log.h"

namespace hcudp::daemon::dra {
namespace {

template <class Response>
void Fill(const HealthList& list, Response* out) {
  using HealthEnum = decltype(out->devices(0).health());
  out->Clear();
  for (const DeviceHealth& d : list) {
    auto* dev = out->add_devices();
    dev->mutable_device()->set_pool_name(d.pool_name);
    dev->mutable_device()->set_device_name(d.device_name);
    // UNKNOWN = 0, HEALTHY = 1, UNHEALTHY = 2 in both packages.
    int code = 0;
    if (d.health == DeviceHealthStatus::kHealthy) code = 1;
    if (d.health == DeviceHealthStatus::kUnhealthy) code = 2;
    dev->set_health(static_cast<HealthEnum>(code));
    dev->set_last_updated_time(d.last_updated_unix_seconds);
    dev->set_health_check_timeout_seconds(HealthBroadcaster::kHealthCheckTimeoutSeconds);
    dev->set_message(d.message);
  }
}

// One NodeWatchResources stream. At most one write is in flight; a list
// that arrives meanwhile replaces any older one waiting (only the newest
// matters: each is complete). Deletes itself in OnDone.
template <class Response>
class HealthStream final : public grpc::ServerWriteReactor<Response>,
                           public HealthBroadcaster::Sink {
 public:
  HealthStream(HealthBroadcaster& broadcaster, const char* version)
      : broadcaster_(broadcaster), version_(version) {
    VLOG(1) << "health stream (" << version_ << ") opened";
    if (!broadcaster_.Add(this)) {
      MutexLock lock(mu_);
      RequestFinish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "hcu-dp-daemon is stopping"));
    }
  }

  void Push(std::shared_ptr<const HealthList> list) override {
    MutexLock lock(mu_);
    if (finishing_) return;
    if (writing_) {
      pending_ = std::move(list);
      return;
    }
    Write(*list);
  }

  void Close() override {
    MutexLock lock(mu_);
    RequestFinish(grpc::Status::OK);
  }

  void OnWriteDone(bool ok) override {
    MutexLock lock(mu_);
    writing_ = false;
    if (!ok) {
      // kubelet went away mid-write.
      finish_status_ = grpc::Status(grpc::StatusCode::CANCELLED, "write failed");
      finish_requested_ = true;
    }
    if (finish_requested_) {
      FinishNow();
      return;
    }
    if (pending_) {
      std::shared_ptr<const HealthList> next = std::move(pending_);
      pending_.reset();
      Write(*next);
    }
  }

  void OnCancel() override {
    VLOG(1) << "health stream (" << version_ << ") cancelled by the client";
    MutexLock lock(mu_);
    RequestFinish(grpc::Status(grpc::StatusCode::CANCELLED, "cancelled"));
  }

  void OnDone() override {
    broadcaster_.Remove(this);
    VLOG(1) << "health stream (" << version_ << ") done";
    delete this;
  }

 private:
  void Write(const HealthList& list) HCUDP_REQUIRES(mu_) {
    Fill(list, &response_);
    writing_ = true;
    this->StartWrite(&response_);
  }

  void RequestFinish(grpc::Status status) HCUDP_REQUIRES(mu_) {
    if (finish_requested_ || finishing_) return;
    finish_requested_ = true;
    finish_status_ = std::move(status);
    if (!writing_) FinishNow();  // else OnWriteDone finishes
  }

  void FinishNow() HCUDP_REQUIRES(mu_) {
    if (finishing_) return;
    finishing_ = true;
    pending_.reset();
    this->Finish(finish_status_);
  }

  HealthBroadcaster& broadcaster_;
  const char* const version_;
  Mutex mu_;
  Response response_ HCUDP_GUARDED_BY(mu_);  // in flight while writing_
  bool writing_ HCUDP_GUARDED_BY(mu_) = false;
  std::shared_ptr<const HealthList> pending_ HCUDP_GUARDED_BY(mu_);
  bool finish_requested_ HCUDP_GUARDED_BY(mu_) = false;
  bool finishing_ HCUDP_GUARDED_BY(mu_) = false;  // Finish called
  grpc::Status finish_status_ HCUDP_GUARDED_BY(mu_);
};

}  // namespace

grpc::ServerWriteReactor<::v1alpha1::NodeWatchResourcesResponse>*
HealthServiceV1alpha1::NodeWatchResources(grpc::CallbackServerContext*,
                                          const ::v1alpha1::NodeWatchResourcesRequest*) {
  return new HealthStream<::v1alpha1::NodeWatchResourcesResponse>(broadcaster_, "v1alpha1");
}

grpc::ServerWriteReactor<::v1::NodeWatchResourcesResponse>* HealthServiceV1::NodeWatchResources(
    grpc::CallbackServerContext*, const ::v1::NodeWatchResourcesRequest*) {
  return new HealthStream<::v1::NodeWatchResourcesResponse>(broadcaster_, "v1");
}

}  // namespace hcudp::daemon::dra
