// The kube client's HTTP/1.1 response parser: what a well-formed answer
// yields, however the bytes are split, and that a malformed or hostile one
// is a clear error.
#include "kube/http_response_parser.h"

#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

namespace hcudp::kube {
namespace {

struct Parsed {
  Status status;  // the first error, from Feed or FinishAtEof
  int code = 0;
  std::string body;
  bool complete = false;
  bool reusable = false;
  std::string retry_after;
};

// Feeds `wire` in pieces of `piece` bytes (0: all at once), then the close
// of the connection when `eof`.
Parsed Parse(const std::string& wire, size_t piece = 0, bool eof = false) {
  HttpResponseParser parser;
  Parsed out;
  const auto sink = [&](std::string_view data) {
    out.body.append(data);
    return true;
  };
  const size_t step = piece == 0 ? wire.size() + 1 : piece;
  for (size_t at = 0; at < wire.size() && out.status.ok(); at += step) {
    out.status = parser.Feed(std::string_view(wire).substr(at, step), sink);
  }
  if (out.status.ok() && eof) out.status = parser.FinishAtEof();
  out.code = parser.status();
  out.complete = parser.complete();
  out.reusable = parser.reusable();
  out.retry_after = parser.retry_after();
  return out;
}

BOOST_AUTO_TEST_SUITE(http_response_parser)

BOOST_AUTO_TEST_CASE(a_body_by_content_length_split_anywhere) {
  const std::string wire =
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"a\":\"bc\"}\n";
  for (size_t piece : {0, 1, 2, 3, 7, 64}) {
    Parsed p = Parse(wire, piece);
    BOOST_TEST(p.status.ok(), p.status.ToString());
    BOOST_TEST(p.code == 200);
    BOOST_TEST(p.body == "{\"a\":\"bc\"}\n");
    BOOST_TEST(p.complete);
    BOOST_TEST(p.reusable);
  }
}

BOOST_AUTO_TEST_CASE(a_chunked_body_with_extensions_and_trailers_split_anywhere) {
  const std::string wire =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5;ext=1\r\nhello\r\n1A\r\n abcdefghijklmnopqrstuvwxy\r\n0\r\nX-Trailer: t\r\n\r\n";
  for (size_t piece : {0, 1, 2, 5, 13}) {
    Parsed p = Parse(wire, piece);
    BOOST_TEST(p.status.ok(), p.status.ToString());
    BOOST_TEST(p.body == "hello abcdefghijklmnopqrstuvwxy");
    BOOST_TEST(p.complete);
    BOOST_TEST(p.reusable);
  }
}

BOOST_AUTO_TEST_CASE(bare_line_feeds_are_tolerated) {
  Parsed p = Parse("HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n2\nok\n0\n\n");
  BOOST_TEST(p.status.ok(), p.status.ToString());
  BOOST_TEST(p.body == "ok");
  BOOST_TEST(p.complete);
}

BOOST_AUTO_TEST_CASE(a_body_without_length_ends_with_the_connection) {
  Parsed open = Parse("HTTP/1.1 200 OK\r\n\r\npartial", 0, false);
  BOOST_TEST(open.status.ok());
  BOOST_TEST(!open.complete);
  Parsed closed = Parse("HTTP/1.0 200 OK\r\n\r\nall of it", 0, true);
  BOOST_TEST(closed.status.ok(), closed.status.ToString());
  BOOST_TEST(closed.body == "all of it");
  BOOST_TEST(closed.complete);
  BOOST_TEST(!closed.reusable);
}

BOOST_AUTO_TEST_CASE(interim_responses_are_skipped_with_their_headers) {
  Parsed p = Parse(
      "HTTP/1.1 103 Early Hints\r\nRetry-After: 120\r\n\r\n"
      "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 2\r\n\r\nno");
  BOOST_TEST(p.status.ok(), p.status.ToString());
  BOOST_TEST(p.code == 503);
  BOOST_TEST(p.retry_after.empty());
  BOOST_TEST(p.body == "no");
}

BOOST_AUTO_TEST_CASE(connection_close_and_http10_are_not_reused) {
  BOOST_TEST(!Parse("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n").reusable);
  BOOST_TEST(!Parse("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n").reusable);
  BOOST_TEST(Parse("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n").reusable);
  // Bytes after the answer, never asked for: the connection is not trusted.
  BOOST_TEST(!Parse("HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 200 OK\r\n").reusable);
}

BOOST_AUTO_TEST_CASE(no_body_for_204_and_304) {
  for (const char* wire : {"HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n",
                           "HTTP/1.1 304 Not Modified\r\n\r\n"}) {
    Parsed p = Parse(wire);
    BOOST_TEST(p.complete, wire);
    BOOST_TEST(p.body.empty());
  }
}

// Each malformed or hostile answer is an error that names what was wrong.
BOOST_AUTO_TEST_CASE(malformed_answers_are_errors_naming_what) {
  struct Case {
    std::string wire;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"SSH-2.0-OpenSSH\r\n\r\n", "status line"},
      {"HTTP/1.1 20 OK\r\n\r\n", "status line"},
      {"HTTP/2 200\r\n\r\n", "status line"},
      {"HTTP/1.1 099 Low\r\n\r\n", "status 99"},
      {"HTTP/1.1 101 Switching Protocols\r\n\r\n", "101"},
      {"HTTP/1.1 200 OK\r\nNo colon here\r\n\r\n", "header line"},
      {"HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n", "header line"},
      {"HTTP/1.1 200 OK\r\nA: b\r\n folded\r\n\r\n", "folded"},
      {"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "Content-Length"},
      {"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n", "Content-Length"},
      {"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", "two different"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", "Transfer-Encoding"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "chunk size"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\r\n", "chunk size"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n", "chunk size"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n",
       "chunk size"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + std::string(2000, '0'),
       "chunk-size line"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n", "longer than"},
      {"HTTP/1.1 200 OK\r\nX: " + std::string(70000, 'a') + "\r\n\r\n", "over 65536"},
      {"HTTP/1.1 200 OK\r\n" + std::string(70000, 'a'), "over 65536"},
  };
  for (const Case& c : cases) {
    for (size_t piece : {0, 1}) {
      Parsed p = Parse(c.wire, piece);
      BOOST_TEST(!p.status.ok(), c.wire.substr(0, 60));
      BOOST_TEST((p.status.code() == StatusCode::kUnavailable), p.status.ToString());
      BOOST_TEST(p.status.message().find(c.says) != std::string::npos,
                 p.status.ToString() << " should say " << c.says);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_truncated_answer_is_an_error_at_the_close) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "before any response"},
      {"HTTP/1.1 200 OK\r\nContent-Le", "middle of the headers"},
      {"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", "middle of the body"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", "middle of the body"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n", "middle of the body"},
  };
  for (const auto& [wire, says] : cases) {
    Parsed p = Parse(wire, 0, true);
    BOOST_TEST((p.status.code() == StatusCode::kUnavailable), p.status.ToString());
    BOOST_TEST(p.status.message().find(says) != std::string::npos, p.status.ToString());
  }
}

BOOST_AUTO_TEST_CASE(a_sink_that_stops_ends_the_parse) {
  HttpResponseParser parser;
  int calls = 0;
  Status s = parser.Feed("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n1\r\nb\r\n",
                         [&](std::string_view) { return ++calls < 1; });
  BOOST_TEST(s.ok());
  BOOST_TEST(calls == 1);
  BOOST_TEST(parser.stopped());
  BOOST_TEST(!parser.reusable());
}

BOOST_AUTO_TEST_CASE(http_dates_in_all_three_forms) {
  const int64_t expected = 1445412510;  // 2015-10-21T07:28:30Z
  BOOST_TEST((ParseHttpDate("Wed, 21 Oct 2015 07:28:30 GMT") == std::optional<int64_t>(expected)));
  BOOST_TEST(
      (ParseHttpDate("Wednesday, 21-Oct-15 07:28:30 GMT") == std::optional<int64_t>(expected)));
  BOOST_TEST((ParseHttpDate("Wed Oct 21 07:28:30 2015") == std::optional<int64_t>(expected)));
  BOOST_TEST((ParseHttpDate("Wed Oct  1 07:28:30 2015") == std::optional<int64_t>(expected - 20 * 86400)));
  for (const char* bad : {"", "soon", "Wed, 32 Oct 2015 07:28:30 GMT", "Wed, 21 Foo 2015 07:28:30 GMT",
                          "Wed, 21 Oct 2015 25:28:30 GMT", "Wed, 21 Oct 2015 07:28 GMT",
                          "21 Oct 2015 07:28:30 GMT 12", "Wed, 21 Oct 99999 07:28:30 GMT"}) {
    BOOST_TEST(!ParseHttpDate(bad).has_value(), bad);
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace hcudp::kube
