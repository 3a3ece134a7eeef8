// The HTTP/1.1 response parser of the kube client (RFC 9112): status line,
// header fields, a body delimited by Content-Length, chunked
// transfer-coding or the connection's close. No I/O: bytes are fed as they
// arrive, so the same code serves a one-shot GET and a watch stream, and a
// fuzzer drives it directly. The peer is not trusted: every line, the
// header section and a chunk size are bounded, and whatever is malformed is
// an error naming what, never a crash or an unbounded buffer.
#ifndef HCUDP_SRC_KUBE_HTTP_RESPONSE_PARSER_H_
#define HCUDP_SRC_KUBE_HTTP_RESPONSE_PARSER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "hcudp/status.h"

namespace hcudp::kube {

class HttpResponseParser {
 public:
  // The header section of one response (status line included), and the
  // trailer section of a chunked body: far above what the API server sends
  // (a few hundred bytes).
  static constexpr size_t kMaxHeaderBytes = 64 * 1024;
  // Receives the final response's body as it is decoded; false stops the
  // parse (stopped() is then true).
  using BodySink = std::function<bool(std::string_view)>;

  // `head_request`: the answer to a HEAD carries no body.
  explicit HttpResponseParser(bool head_request = false) : head_request_(head_request) {}

  // Parses `data`, the next bytes from the server. Interim (1xx) responses
  // are skipped; the final response's body goes to `sink`. An error says
  // what was malformed; the connection cannot be used again after one.
  Status Feed(std::string_view data, const BodySink& sink);
  // The server closed the connection: completes a body that ends with the
  // close, else an error (nothing at all, or a truncated response).
  Status FinishAtEof();

  bool complete() const { return state_ == State::kDone; }
  bool stopped() const { return stopped_; }
  bool headers_done() const { return state_ > State::kHeaders; }
  // Whether any byte of a response arrived.
  bool got_any_byte() const { return got_any_byte_; }
  int status() const { return status_; }
  // The final response's Retry-After and Date values (empty: none).
  const std::string& retry_after() const { return retry_after_; }
  const std::string& date() const { return date_; }
  // After complete(): whether the connection may carry the next request
  // (HTTP/1.1 without "Connection: close", a delimited body, nothing more
  // sent after it).
  bool reusable() const { return complete() && keep_alive_ && !extra_bytes_; }

 private:
  enum class State {
    kStatusLine,
    kHeaders,
    kLengthBody,
    kChunkSize,
    kChunkData,
    kChunkDataEnd,
    kTrailers,
    kCloseBody,
    kDone,
  };

  // Appends to line_ up to a LF; true with the line (CR stripped) in
  // *line once one is whole. `limit` bounds the line and what came before.
  StatusOr<bool> TakeLine(std::string_view* data, size_t limit, std::string* line);
  Status OnStatusLine(std::string_view line);
  Status OnHeaderLine(std::string_view line);
  Status OnHeadersEnd();
  Status OnChunkSizeLine(std::string_view line);
  // Hands body bytes to the sink; false: the sink stopped.
  bool Deliver(std::string_view bytes, const BodySink& sink);

  const bool head_request_;
  State state_ = State::kStatusLine;
  bool got_any_byte_ = false;
  bool stopped_ = false;
  bool extra_bytes_ = false;
  std::string line_;        // a line not yet whole
  size_t section_bytes_ = 0;  // of the header or trailer section so far
  int status_ = 0;
  bool http11_ = true;
  bool keep_alive_ = true;
  bool chunked_ = false;
  std::optional<uint64_t> content_length_;
  uint64_t left_ = 0;  // of the body (kLengthBody) or chunk (kChunkData)
  std::string retry_after_;
  std::string date_;
};

// Seconds since the epoch of an HTTP-date (RFC 9110 §5.6.7): IMF-fixdate
// ("Sun, 06 Nov 1994 08:49:37 GMT"), and the obsolete RFC 850 ("Sunday,
// 06-Nov-94 08:49:37 GMT") and asctime ("Sun Nov  6 08:49:37 1994") forms;
// nullopt for anything else.
std::optional<int64_t> ParseHttpDate(std::string_view text);

}  // namespace hcudp::kube

#endif  // HCUDP_SRC_KUBE_HTTP_RESPONSE_PARSER_H_
