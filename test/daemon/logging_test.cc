#include "logging.h"

#include <gflags/gflags.h>
#include <glog/logging.h>

#include <boost/test/unit_test.hpp>

namespace hcudp::daemon {
namespace {

BOOST_AUTO_TEST_SUITE(logging)

BOOST_AUTO_TEST_CASE(severity_and_level_map_to_glog_as_the_vendor_plugin) {
  struct Case {
    int level;
    LogSeverity severity;
    int want_v;
    int want_min;
  };
  const Case cases[] = {
      {2, LogSeverity::kInfo, 2, google::GLOG_INFO},
      {7, LogSeverity::kInfo, 7, google::GLOG_INFO},
      {5, LogSeverity::kWarning, 0, google::GLOG_WARNING},  // WARNING drops VLOG too
      {5, LogSeverity::kError, 0, google::GLOG_ERROR},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT("level " << c.level << " severity " << static_cast<int>(c.severity)) {
      ApplyLogFlags(c.level, c.severity);
      BOOST_TEST(FLAGS_logtostderr);
      BOOST_TEST(FLAGS_v == c.want_v);
      BOOST_TEST(FLAGS_minloglevel == c.want_min);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::daemon
