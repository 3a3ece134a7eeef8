// CardEvents: the RSMI events become BackendEvents, and after failed waits
// (a re-initialised runtime, a closed event file) the first good wait says
// so, since events raised in between reached nobody.
#include "backend/card_events.h"

#include <boost/test/unit_test.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "backend/fake_vendor_lib.h"

namespace hcudp::testing {
namespace {

using std::chrono::milliseconds;

// Answers each WaitEvents from `script` in turn, then "no events" for ever.
class ScriptedEventsLib : public FakeVendorLib {
 public:
  explicit ScriptedEventsLib(std::vector<StatusOr<std::vector<VendorEvent>>> script)
      : script_(std::move(script)) {}
  Status OpenEvents(uint64_t) override { return OkStatus(); }
  StatusOr<std::vector<VendorEvent>> WaitEvents(milliseconds) override {
    {
      std::lock_guard<std::mutex> lock(script_mu_);
      if (next_ < script_.size()) return script_[next_++];
    }
    std::this_thread::sleep_for(milliseconds(10));  // an idle wait slice, shortened
    return std::vector<VendorEvent>{};
  }

 private:
  std::mutex script_mu_;
  std::vector<StatusOr<std::vector<VendorEvent>>> script_;
  size_t next_ = 0;
};

struct Received {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> events;  // "<card> <kind>"

  void Add(const BackendEvent& e) {
    std::lock_guard<std::mutex> lock(mu);
    events.push_back(std::to_string(e.card) + " " + e.kind);
    cv.notify_all();
  }
  bool WaitFor(size_t n) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(5), [&] { return events.size() >= n; });
  }
};

VendorEvent Reset(int card) { return VendorEvent{card, 3, "reset requested"}; }

BOOST_AUTO_TEST_SUITE(card_events)

BOOST_AUTO_TEST_CASE(the_first_good_wait_after_failed_ones_asks_for_a_look_at_every_card) {
  ScriptedEventsLib lib({UnavailableError("rsmi_event_notification_get: INIT_ERROR"),
                         UnavailableError("rsmi_event_notification_get: INIT_ERROR"),
                         std::vector<VendorEvent>{Reset(2)}});
  Received got;
  CardEvents events(lib);
  BOOST_REQUIRE(events.Start([&](const BackendEvent& e) { got.Add(e); }).ok());
  BOOST_REQUIRE(got.WaitFor(2));
  events.Stop();
  const std::vector<std::string> want = {"-1 " + std::string(kEventsResumed), "2 GPU_PRE_RESET"};
  BOOST_TEST(got.events == want, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(good_waits_deliver_only_the_events) {
  ScriptedEventsLib lib(
      {std::vector<VendorEvent>{}, std::vector<VendorEvent>{Reset(1), VendorEvent{4, 2, ""}}});
  Received got;
  CardEvents events(lib);
  BOOST_REQUIRE(events.Start([&](const BackendEvent& e) { got.Add(e); }).ok());
  BOOST_REQUIRE(got.WaitFor(2));
  events.Stop();
  const std::vector<std::string> want = {"1 GPU_PRE_RESET", "4 THERMAL_THROTTLE"};
  BOOST_TEST(got.events == want, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::testing
