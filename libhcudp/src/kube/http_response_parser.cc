#include "kube/http_response_parser.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <vector>

namespace hcudp::kube {
namespace {

// A chunk-size line with its extensions; the size itself has at most 15 hex
// digits (under 2^60), so it cannot overflow.
constexpr size_t kMaxChunkLine = 1024;
constexpr size_t kMaxChunkHexDigits = 15;

bool IsTokenChar(unsigned char c) {
  return std::isalnum(c) || std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) !=
                                std::string_view::npos;
}

bool EqualsLowerAscii(std::string_view text, std::string_view lower) {
  if (text.size() != lower.size()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != lower[i]) return false;
  }
  return true;
}

std::string_view TrimHttpSpace(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// A short, printable excerpt of server bytes for an error message.
std::string Excerpt(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 40)) {
    out.push_back(std::isprint(static_cast<unsigned char>(c)) ? c : '?');
  }
  if (s.size() > 40) out += "...";
  return out;
}

Status Malformed(const std::string& what) {
  return UnavailableError("malformed HTTP response: " + what);
}

// Whether a comma-separated header value holds `token` (case-insensitive).
bool ListHas(std::string_view value, std::string_view token) {
  while (!value.empty()) {
    const size_t comma = value.find(',');
    if (EqualsLowerAscii(TrimHttpSpace(value.substr(0, comma)), token)) return true;
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace

StatusOr<bool> HttpResponseParser::TakeLine(std::string_view* data, size_t limit,
                                            std::string* line) {
  const size_t lf = data->find('\n');
  const size_t take = lf == std::string_view::npos ? data->size() : lf + 1;
  if (section_bytes_ + line_.size() + take > limit) {
    return Malformed("a header section or line over " + std::to_string(limit) + " bytes");
  }
  line_.append(data->data(), take);
  data->remove_prefix(take);
  if (lf == std::string_view::npos) return false;
  section_bytes_ += line_.size();
  line_.pop_back();  // the LF
  if (!line_.empty() && line_.back() == '\r') line_.pop_back();
  *line = std::move(line_);
  line_.clear();
  return true;
}

Status HttpResponseParser::OnStatusLine(std::string_view line) {
  // HTTP/1.x SP 3DIGIT [SP reason]
  if (line.size() < 12 || line.substr(0, 7) != "HTTP/1." ||
      !std::isdigit(static_cast<unsigned char>(line[7])) || line[8] != ' ' ||
      !std::all_of(line.begin() + 9, line.begin() + 12,
                   [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) ||
      (line.size() > 12 && line[12] != ' ')) {
    return Malformed("status line '" + Excerpt(line) + "'");
  }
  status_ = std::stoi(std::string(line.substr(9, 3)));
  if (status_ < 100) return Malformed("status " + std::to_string(status_));
  http11_ = line[7] != '0';
  keep_alive_ = http11_;
  chunked_ = false;
  content_length_.reset();
  retry_after_.clear();
  date_.clear();
  state_ = State::kHeaders;
  return OkStatus();
}

Status HttpResponseParser::OnHeaderLine(std::string_view line) {
  if (line.front() == ' ' || line.front() == '\t') {
    return Malformed("a folded header line");  // obs-fold (RFC 9112 §5.2): refused
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0 ||
      !std::all_of(line.begin(), line.begin() + colon,
                   [](char c) { return IsTokenChar(static_cast<unsigned char>(c)); })) {
    return Malformed("header line '" + Excerpt(line) + "'");
  }
  const std::string_view name = line.substr(0, colon);
  const std::string_view value = TrimHttpSpace(line.substr(colon + 1));
  if (EqualsLowerAscii(name, "content-length")) {
    if (value.empty() || value.size() > 18 ||
        !std::all_of(value.begin(), value.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
      return Malformed("Content-Length '" + Excerpt(value) + "'");
    }
    const uint64_t length = std::stoull(std::string(value));
    if (content_length_ && *content_length_ != length) {
      return Malformed("two different Content-Length values");
    }
    content_length_ = length;
  } else if (EqualsLowerAscii(name, "transfer-encoding")) {
    // Only chunked is asked for (no TE header is sent); any other coding
    // could not be decoded.
    if (!EqualsLowerAscii(TrimHttpSpace(value), "chunked")) {
      return Malformed("Transfer-Encoding '" + Excerpt(value) + "' (only chunked is understood)");
    }
    chunked_ = true;
  } else if (EqualsLowerAscii(name, "connection")) {
    if (ListHas(value, "close")) keep_alive_ = false;
    if (!http11_ && ListHas(value, "keep-alive")) keep_alive_ = true;
  } else if (EqualsLowerAscii(name, "retry-after")) {
    retry_after_ = std::string(value);
  } else if (EqualsLowerAscii(name, "date")) {
    date_ = std::string(value);
  }
  return OkStatus();
}

Status HttpResponseParser::OnHeadersEnd() {
  section_bytes_ = 0;
  if (status_ < 200) {
    // 101 would switch protocols, which was never asked for.
    if (status_ == 101) return Malformed("101 Switching Protocols, never asked for");
    state_ = State::kStatusLine;  // an interim response: the final one follows
    return OkStatus();
  }
  if (head_request_ || status_ == 204 || status_ == 304) {
    state_ = State::kDone;
  } else if (chunked_) {
    state_ = State::kChunkSize;
  } else if (content_length_) {
    left_ = *content_length_;
    state_ = left_ == 0 ? State::kDone : State::kLengthBody;
  } else {
    keep_alive_ = false;  // the body ends with the connection
    state_ = State::kCloseBody;
  }
  return OkStatus();
}

Status HttpResponseParser::OnChunkSizeLine(std::string_view line) {
  const std::string_view size = TrimHttpSpace(line.substr(0, line.find(';')));
  if (size.empty() || size.size() > kMaxChunkHexDigits ||
      !std::all_of(size.begin(), size.end(),
                   [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); })) {
    return Malformed("chunk size '" + Excerpt(line) + "'");
  }
  left_ = std::stoull(std::string(size), nullptr, 16);
  section_bytes_ = 0;
  state_ = left_ == 0 ? State::kTrailers : State::kChunkData;
  return OkStatus();
}

bool HttpResponseParser::Deliver(std::string_view bytes, const BodySink& sink) {
  if (bytes.empty() || !sink) return true;
  if (!sink(bytes)) {
    stopped_ = true;
    return false;
  }
  return true;
}

Status HttpResponseParser::Feed(std::string_view data, const BodySink& sink) {
  if (!data.empty()) got_any_byte_ = true;
  std::string line;
  while (!data.empty() && !stopped_) {
    switch (state_) {
      case State::kStatusLine:
      case State::kHeaders:
      case State::kTrailers: {
        StatusOr<bool> whole = TakeLine(&data, kMaxHeaderBytes, &line);
        if (!whole.ok()) return whole.status();
        if (!*whole) break;
        if (state_ == State::kStatusLine) {
          if (Status s = OnStatusLine(line); !s.ok()) return s;
        } else if (!line.empty()) {
          if (state_ == State::kHeaders) {
            if (Status s = OnHeaderLine(line); !s.ok()) return s;
          }  // a trailer field: read and dropped
        } else if (state_ == State::kHeaders) {
          if (Status s = OnHeadersEnd(); !s.ok()) return s;
        } else {
          state_ = State::kDone;
        }
        break;
      }
      case State::kChunkSize: {
        StatusOr<bool> whole = TakeLine(&data, kMaxChunkLine, &line);
        if (!whole.ok()) return Malformed("a chunk-size line over 1024 bytes");
        if (!*whole) break;
        if (Status s = OnChunkSizeLine(line); !s.ok()) return s;
        break;
      }
      case State::kLengthBody:
      case State::kChunkData: {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(left_, data.size()));
        const std::string_view bytes = data.substr(0, n);
        data.remove_prefix(n);
        left_ -= n;
        if (left_ == 0) state_ = state_ == State::kLengthBody ? State::kDone : State::kChunkDataEnd;
        Deliver(bytes, sink);
        break;
      }
      case State::kChunkDataEnd: {
        // The CRLF after a chunk's data (a bare LF is tolerated).
        if (line_.empty() && data.front() == '\r') {
          line_.push_back('\r');
          data.remove_prefix(1);
          break;
        }
        if (data.front() != '\n') return Malformed("chunk data longer than its size");
        data.remove_prefix(1);
        line_.clear();
        section_bytes_ = 0;
        state_ = State::kChunkSize;
        break;
      }
      case State::kCloseBody: {
        const std::string_view bytes = data;
        data = {};
        Deliver(bytes, sink);
        break;
      }
      case State::kDone:
        // Bytes after a complete response, never asked for: the connection
        // is not used again.
        extra_bytes_ = true;
        data = {};
        break;
    }
  }
  return OkStatus();
}

Status HttpResponseParser::FinishAtEof() {
  switch (state_) {
    case State::kDone:
      return OkStatus();
    case State::kCloseBody:
      state_ = State::kDone;
      return OkStatus();
    case State::kStatusLine:
      if (!got_any_byte_) return UnavailableError("connection closed before any response");
      [[fallthrough]];
    default:
      return UnavailableError(headers_done() ? "connection closed in the middle of the body"
                                             : "connection closed in the middle of the headers");
  }
}

std::optional<int64_t> ParseHttpDate(std::string_view text) {
  static constexpr std::string_view kMonths[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                                 "jul", "aug", "sep", "oct", "nov", "dec"};
  static constexpr std::string_view kDays[] = {"mon", "tue", "wed", "thu", "fri", "sat", "sun"};
  static constexpr std::string_view kLongDays[] = {"monday", "tuesday",  "wednesday", "thursday",
                                                   "friday", "saturday", "sunday"};
  if (text.size() > 64) return std::nullopt;
  std::vector<std::string_view> tokens;
  size_t i = 0;
  while (i < text.size()) {
    const size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != ',' && text[i] != '-') ++i;
    if (i > start) tokens.push_back(text.substr(start, i - start));
    if (i < text.size()) ++i;
  }
  int day = -1, month = -1, year = -1, hour = -1, minute = -1, second = -1;
  bool weekday = false, zone = false;
  auto number = [](std::string_view s) -> int {
    if (s.empty() || s.size() > 4 ||
        !std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
      return -1;
    }
    return std::stoi(std::string(s));
  };
  for (std::string_view t : tokens) {
    if (t.find(':') != std::string_view::npos) {
      if (hour >= 0 || t.size() != 8 || t[2] != ':' || t[5] != ':') return std::nullopt;
      hour = number(t.substr(0, 2));
      minute = number(t.substr(3, 2));
      second = number(t.substr(6, 2));
      if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 60) {
        return std::nullopt;
      }
    } else if (std::isdigit(static_cast<unsigned char>(t.front()))) {
      const int n = number(t);
      if (n < 0) return std::nullopt;
      if (day < 0 && t.size() <= 2) {
        day = n;
      } else if (year < 0 && (t.size() == 2 || t.size() == 4)) {
        year = t.size() == 4 ? n : (n < 70 ? 2000 + n : 1900 + n);
      } else {
        return std::nullopt;
      }
    } else if (EqualsLowerAscii(t, "gmt") || EqualsLowerAscii(t, "utc")) {
      if (zone) return std::nullopt;
      zone = true;
    } else {
      bool known = false;
      for (int m = 0; m < 12 && !known; ++m) {
        if (EqualsLowerAscii(t, kMonths[m]) && month < 0) {
          month = m;
          known = true;
        }
      }
      for (int d = 0; d < 7 && !known; ++d) {
        if ((EqualsLowerAscii(t, kDays[d]) || EqualsLowerAscii(t, kLongDays[d])) && !weekday) {
          weekday = true;
          known = true;
        }
      }
      if (!known) return std::nullopt;
    }
  }
  if (day < 1 || day > 31 || month < 0 || year < 1970 || hour < 0) return std::nullopt;
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  return static_cast<int64_t>(timegm(&tm));
}

}  // namespace hcudp::kube
