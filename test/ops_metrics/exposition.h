// A strict reader of the Prometheus text exposition format (version 0.0.4),
// enough to check what hcu-dp-daemon serves: # HELP / # TYPE lines, samples
// "name{l="v",...} value" with escaped label values. Every sample must
// belong to a family announced by # TYPE (histogram samples by their
// _bucket/_sum/_count suffix). An error names the line.
#ifndef HCUDP_TEST_OPS_METRICS_EXPOSITION_H_
#define HCUDP_TEST_OPS_METRICS_EXPOSITION_H_

#include <chrono>
#include <map>
#include <optional>
#include <string>

#include "hcudp/status.h"

namespace hcudp::testing {

struct Exposition {
  // "name{a=\"1\",b=\"2\"}" (labels sorted by name) -> value.
  std::map<std::string, double> samples;
  std::map<std::string, std::string> types;  // family -> counter|gauge|histogram|summary|untyped

  // The value of `name` with exactly these labels, or nullopt.
  std::optional<double> Get(const std::string& name,
                            const std::map<std::string, std::string>& labels = {}) const;
  // Sum over every series of `name` whose labels include `labels`.
  double Sum(const std::string& name, const std::map<std::string, std::string>& labels = {}) const;
  // Number of series of `name`.
  size_t Count(const std::string& name) const;
};

// The key Exposition uses for a series.
std::string SeriesKey(const std::string& name, const std::map<std::string, std::string>& labels);

StatusOr<Exposition> ParseExposition(const std::string& text);

// HTTP GET http://127.0.0.1:<port><path> (HTTP/1.0): {status, body,
// Content-Type}, or DeadlineExceeded without a whole response `within`.
struct HttpResult {
  int status = 0;
  std::string body;
  std::string content_type;  // empty when the response has none
};
StatusOr<HttpResult> HttpGet(int port, const std::string& path,
                             std::chrono::milliseconds within = std::chrono::seconds(5));

}  // namespace hcudp::testing

#endif  // HCUDP_TEST_OPS_METRICS_EXPOSITION_H_
