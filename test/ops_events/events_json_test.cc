// The Event object the recorder sends, its time format and the token bucket.
#include <rapidjson/document.h>

#include <boost/test/unit_test.hpp>

#include "ops/events_internal.h"

namespace hcudp::internal {
namespace {

using std::chrono::seconds;

Clock::WallTime Wall(int64_t micros_since_epoch) {
  return Clock::WallTime(std::chrono::microseconds(micros_since_epoch));
}

BOOST_AUTO_TEST_SUITE(event_object)

BOOST_AUTO_TEST_CASE(micro_time_has_six_fraction_digits) {
  BOOST_TEST(FormatMicroTime(Wall(1'800'000'000'000'042)) == "2027-01-15T08:00:00.000042Z");
  BOOST_TEST(FormatMicroTime(Wall(1'800'000'001'999'999)) == "2027-01-15T08:00:01.999999Z");
}

BOOST_AUTO_TEST_CASE(event_json_has_what_the_api_server_requires) {
  EventObject e;
  e.name = "n1.18a";
  e.namespace_name = "default";
  e.node_name = "n1";
  e.type = EventType::kWarning;
  e.reason = kReasonHcuUnhealthy;
  e.action = kActionHealthCheck;
  e.note = std::string(1022, 'x') + "\xe6\xb5\xb7" + std::string(100, 'y');
  e.reporting_controller = "hygon.com/hcu-device-plugin";
  e.reporting_instance = "hygon.com/hcu-device-plugin-n1";
  e.event_time = Wall(1'800'000'000'000'001);
  rapidjson::Document d;
  const std::string json = EventJson(e);
  d.Parse(json.c_str());
  BOOST_REQUIRE(!d.HasParseError());
  BOOST_TEST(std::string(d["apiVersion"].GetString()) == "events.k8s.io/v1");
  BOOST_TEST(std::string(d["metadata"]["name"].GetString()) == "n1.18a");
  BOOST_TEST(std::string(d["metadata"]["namespace"].GetString()) == "default");
  BOOST_TEST(std::string(d["eventTime"].GetString()) == "2027-01-15T08:00:00.000001Z");
  BOOST_TEST(std::string(d["type"].GetString()) == "Warning");
  BOOST_TEST(std::string(d["reason"].GetString()) == "HCUUnhealthy");
  BOOST_TEST(std::string(d["action"].GetString()) == "HealthCheck");
  BOOST_TEST(std::string(d["regarding"]["kind"].GetString()) == "Node");
  BOOST_TEST(std::string(d["regarding"]["name"].GetString()) == "n1");
  BOOST_TEST(std::string(d["regarding"]["uid"].GetString()) == "n1");  // kubelet's convention
  // The note is cut to 1024 bytes, before the UTF-8 character that straddles
  // the limit.
  BOOST_TEST(d["note"].GetStringLength() == 1022u);
  BOOST_TEST(!d.HasMember("series"));
  BOOST_TEST(!d.HasMember("deprecatedCount"));
}

BOOST_AUTO_TEST_CASE(series_patch_and_series_on_create) {
  BOOST_TEST(SeriesPatchJson(3, Wall(1'800'000'000'500'000)) ==
             R"({"series":{"count":3,"lastObservedTime":"2027-01-15T08:00:00.500000Z"}})");
  EventObject e;
  e.series_count = 2;
  e.last_observed = Wall(0);
  BOOST_TEST(EventJson(e).find(R"("series":{"count":2,)") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(utf8_cut_never_splits_a_character) {
  BOOST_TEST(CutUtf8("ab\xe6\xb5\xb7", 4) == "ab");
  BOOST_TEST(CutUtf8("ab\xe6\xb5\xb7", 5) == "ab\xe6\xb5\xb7");
  BOOST_TEST(CutUtf8("abc", 2) == "ab");
}

BOOST_AUTO_TEST_CASE(token_bucket_is_client_gos_spam_filter) {
  const Clock::TimePoint t0{};
  TokenBucket bucket(25, seconds(300), t0);
  for (int i = 0; i < 25; ++i) BOOST_TEST(bucket.Take(t0));
  BOOST_TEST(!bucket.Take(t0));
  BOOST_TEST(!bucket.Take(t0 + seconds(299)));
  BOOST_TEST(bucket.Take(t0 + seconds(300)));  // one back after 300 s
  BOOST_TEST(!bucket.Take(t0 + seconds(300)));
  BOOST_TEST(bucket.Take(t0 + seconds(100000)));  // refills up to the burst only
  int taken = 1;
  while (bucket.Take(t0 + seconds(100000))) ++taken;
  BOOST_TEST(taken == 25);
}

BOOST_AUTO_TEST_CASE(modes_parse_exactly) {
  BOOST_TEST((*ParseEventsMode("auto") == EventsMode::kAuto));
  BOOST_TEST((*ParseEventsMode("true") == EventsMode::kTrue));
  BOOST_TEST((*ParseEventsMode("false") == EventsMode::kFalse));
  BOOST_TEST(!ParseEventsMode("yes").ok());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::internal
