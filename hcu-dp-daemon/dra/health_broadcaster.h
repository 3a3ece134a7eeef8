// HealthBroadcaster: feeds every open DRAResourceHealth stream (v1alpha1 and
// v1 alike) from DraHandler::HealthSnapshot(), without polling the driver.
//
// What kubelet needs (dra.md §2.8): the complete list at once when a stream
// opens, again on every change, and again before its per-device timeout
// (health_check_timeout_seconds, 30 s by default) runs out, or the devices
// turn Unknown. So one thread waits for NotifyChanged(), a new stream, or
// the resend period, then reads one snapshot and hands it to the streams
// that need it: all of them when it differs from the last one sent or the
// resend is due, only the new ones otherwise.
//
// Threads: one broadcaster thread (Start/Stop); Add/Remove/NotifyChanged
// from any thread. Lock order: HealthBroadcaster::mu_ before a stream's own
// lock (Sink::Push and Sink::Close run with mu_ held, so a stream that is
// being removed cannot be pushed to); a sink never calls back into the
// broadcaster while holding its own lock.
#ifndef HCU_DP_DAEMON_DRA_HEALTH_BROADCASTER_H_
#define HCU_DP_DAEMON_DRA_HEALTH_BROADCASTER_H_

#include <chrono>
#include <condition_variable>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "dra/dra_handler.h"
#include "hcudp/clock.h"
#include "hcudp_internal/thread_annotations.h"

namespace hcudp::daemon::dra {

using HealthList = std::vector<DeviceHealth>;

class HealthBroadcaster {
 public:
  // Well inside kubelet's default 30 s device timeout, which a 1.34 kubelet
  // applies whatever we send.
  static constexpr std::chrono::seconds kResendPeriod{10};
  // Sent as health_check_timeout_seconds.
  static constexpr int64_t kHealthCheckTimeoutSeconds = 30;
  // kubelet keeps at most this much of a message.
  static constexpr size_t kMaxMessageChars = 1024;

  // One open stream. Both calls come with the broadcaster's lock held and
  // must not block; Push's list is complete and stamped.
  class Sink {
   public:
    virtual ~Sink() = default;
    virtual void Push(std::shared_ptr<const HealthList> list) = 0;
    // The daemon is stopping: end the stream.
    virtual void Close() = 0;
  };

  // `handler` and `clock` must outlive the broadcaster.
  HealthBroadcaster(DraHandler& handler, Clock& clock);
  ~HealthBroadcaster();  // Stop()
  HealthBroadcaster(const HealthBroadcaster&) = delete;
  HealthBroadcaster& operator=(const HealthBroadcaster&) = delete;

  void Start();
  // Closes every stream and joins the thread; later Add() calls fail.
  void Stop();

  // The driver's health changed. Thread-safe, never blocks.
  void NotifyChanged();

  // A new stream; it gets the current list soon. False once stopping (the
  // stream then ends itself).
  bool Add(Sink* sink);
  // The stream is done; no call reaches it after this returns.
  void Remove(Sink* sink);

  int active_streams() const;
  // Lists handed to streams so far (one per stream per list), for tests
  // and diagnostics.
  uint64_t pushes() const;

 private:
  void Run();

  DraHandler& handler_;
  Clock& clock_;
  std::thread thread_;

  mutable Mutex mu_;
  std::condition_variable cv_;
  bool started_ HCUDP_GUARDED_BY(mu_) = false;
  bool stopping_ HCUDP_GUARDED_BY(mu_) = false;
  bool changed_ HCUDP_GUARDED_BY(mu_) = false;
  std::set<Sink*> sinks_ HCUDP_GUARDED_BY(mu_);
  std::set<Sink*> new_sinks_ HCUDP_GUARDED_BY(mu_);             // not sent anything yet
  std::unique_ptr<HealthList> last_raw_ HCUDP_GUARDED_BY(mu_);  // the last snapshot, unstamped
  Clock::TimePoint next_resend_ HCUDP_GUARDED_BY(mu_){};
  uint64_t pushes_ HCUDP_GUARDED_BY(mu_) = 0;
};

}  // namespace hcudp::daemon::dra

#endif  // HCU_DP_DAEMON_DRA_HEALTH_BROADCASTER_H_
