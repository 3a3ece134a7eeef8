// A DraHandler for the wire tests: answers Prepare from a programmable table
// (per claim UID), records every call, and keeps a health list the test
// changes (calling DraPlugin::NotifyHealthChanged, as the driver would).
// Optionally blocks in Prepare until released, to test bounded stops.
#ifndef HCUDP_TEST_DRA_WIRE_TEST_HANDLER_H_
#define HCUDP_TEST_DRA_WIRE_TEST_HANDLER_H_

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "dra/dra_handler.h"

namespace hcudp::testing {

class TestHandler final : public daemon::dra::DraHandler {
 public:
  using Claim = daemon::dra::Claim;
  using PrepareResult = daemon::dra::PrepareResult;
  using DeviceHealth = daemon::dra::DeviceHealth;

  // What Prepare answers for `uid` (claims not set get one device named
  // after the claim).
  void SetResult(const std::string& uid, PrepareResult result) {
    std::lock_guard<std::mutex> lock(mu_);
    results_[uid] = std::move(result);
  }
  // Prepare leaves this claim out of its answer.
  void Omit(const std::string& uid) {
    std::lock_guard<std::mutex> lock(mu_);
    omitted_.push_back(uid);
  }
  void FailWholeCall(Status status) {
    std::lock_guard<std::mutex> lock(mu_);
    call_error_ = std::move(status);
  }
  // Prepare blocks until Release() (or the call is cancelled, if honoured).
  void Block(bool honour_cancel) {
    std::lock_guard<std::mutex> lock(mu_);
    blocked_ = true;
    honour_cancel_ = honour_cancel;
  }
  void Release() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      blocked_ = false;
    }
    cv_.notify_all();
  }
  bool WaitBlocked(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [this] { return in_prepare_ > 0; });
  }
  // No Prepare call is inside the handler.
  bool WaitIdle(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [this] { return in_prepare_ == 0; });
  }
  void SetHealth(std::vector<DeviceHealth> health) {
    std::lock_guard<std::mutex> lock(mu_);
    health_ = std::move(health);
  }

  std::vector<std::vector<Claim>> prepare_calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return prepare_calls_;
  }
  std::vector<std::vector<Claim>> unprepare_calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return unprepare_calls_;
  }
  int snapshots() const {
    std::lock_guard<std::mutex> lock(mu_);
    return snapshots_;
  }

  StatusOr<std::map<std::string, PrepareResult>> Prepare(
      const std::vector<Claim>& claims, const daemon::dra::CallContext& call) override {
    std::unique_lock<std::mutex> lock(mu_);
    prepare_calls_.push_back(claims);
    ++in_prepare_;
    cv_.notify_all();
    while (blocked_ && !(honour_cancel_ && call.cancelled())) {
      cv_.wait_for(lock, std::chrono::milliseconds(20));
    }
    --in_prepare_;
    cv_.notify_all();
    if (!call_error_.ok()) return call_error_;
    std::map<std::string, PrepareResult> out;
    for (const Claim& c : claims) {
      if (std::find(omitted_.begin(), omitted_.end(), c.uid) != omitted_.end()) continue;
      auto it = results_.find(c.uid);
      if (it != results_.end()) {
        out[c.uid] = it->second;
        continue;
      }
      daemon::dra::PreparedDevice d;
      d.request_names = {"req"};
      d.pool_name = "node-a";
      d.device_name = "hcu-" + c.name;
      d.cdi_device_ids = {"dra.hygon.com/hcu=" + c.uid};
      out[c.uid].devices.push_back(d);
    }
    return out;
  }

  StatusOr<std::map<std::string, std::string>> Unprepare(const std::vector<Claim>& claims,
                                                         const daemon::dra::CallContext&) override {
    std::lock_guard<std::mutex> lock(mu_);
    unprepare_calls_.push_back(claims);
    if (!call_error_.ok()) return call_error_;
    std::map<std::string, std::string> out;
    for (const Claim& c : claims) out[c.uid] = "";
    return out;
  }

  std::vector<DeviceHealth> HealthSnapshot() override {
    std::lock_guard<std::mutex> lock(mu_);
    ++snapshots_;
    return health_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, PrepareResult> results_;
  std::vector<std::string> omitted_;
  Status call_error_;
  bool blocked_ = false;
  bool honour_cancel_ = false;
  int in_prepare_ = 0;
  std::vector<DeviceHealth> health_;
  std::vector<std::vector<Claim>> prepare_calls_;
  std::vector<std::vector<Claim>> unprepare_calls_;
  int snapshots_ = 0;
};

}  // namespace hcudp::testing

#endif  // HCUDP_TEST_DRA_WIRE_TEST_HANDLER_H_
