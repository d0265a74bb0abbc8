// RequestParser and ResponseParser (see parser.hpp).
//
// Two passes, each over every byte once. scan_head() follows the bytes as
// they arrive: it finds line ends with memchr over only the bytes new since
// the last call, checks each line when its LF arrives, and checks the
// limits. Once the blank line is there, fill_*() splits the (now known
// good) head into the caller's strings.
//
// A limit is enforced by searching for the next LF only within the bytes
// the limit allows: finding none while more bytes are buffered is the
// violation. So whether the head arrives whole or a byte at a time, an
// error is detected at the same byte and is the same error (the fuzz
// target checks this).
#include <algorithm>
#include <cstring>
#include <limits>

#include <corio/http/parser.hpp>

#include "http/wire/syntax.hpp"
#include "http/wire/target.hpp"

namespace corio::http {

namespace {

using detail::HeadScan;

enum class Side { request, response };

std::size_t saturating_add(std::size_t a, std::size_t b) noexcept {
  return b > std::numeric_limits<std::size_t>::max() - a ? std::numeric_limits<std::size_t>::max()
                                                          : a + b;
}

// "HTTP/1.x" gives x; another HTTP-version is 505, anything else 400.
int parse_version(std::string_view v) {
  if (v.size() != 8 || v.substr(0, 5) != "HTTP/" || !syntax::is_digit(v[5]) || v[6] != '.' ||
      !syntax::is_digit(v[7])) {
    throw ParseError(400, "malformed HTTP version");
  }
  if (v[5] != '1') throw ParseError(505, "HTTP version " + std::string(v.substr(5)) + " is not supported");
  return v[7] - '0';
}

struct RequestLine {
  std::string_view method, target;
  int version_minor;
};

// method SP request-target SP HTTP-version, single spaces.
RequestLine split_request_line(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size() && syntax::kTokenChar[static_cast<unsigned char>(line[i])]) ++i;
  if (i == 0) throw ParseError(400, "a request line without a method");
  if (i == line.size()) throw ParseError(400, "a request line without a target");
  if (line[i] != ' ') syntax::bad_char("a method", static_cast<unsigned char>(line[i]));
  RequestLine rl{line.substr(0, i), {}, 0};
  std::size_t t = ++i;
  while (i < line.size() && static_cast<unsigned char>(line[i]) > 0x20 &&
         static_cast<unsigned char>(line[i]) < 0x7f) {
    ++i;
  }
  if (i == t) throw ParseError(400, "a request line without a target");
  if (i == line.size()) throw ParseError(400, "a request line without an HTTP version");
  if (line[i] != ' ') syntax::bad_char("a request target", static_cast<unsigned char>(line[i]));
  rl.target = line.substr(t, i - t);
  rl.version_minor = parse_version(line.substr(i + 1));
  return rl;
}

// Splits a request line split_request_line() accepted: its two spaces are
// the first two, and it ends in "HTTP/1.x".
RequestLine split_checked_request_line(std::string_view line) noexcept {
  const std::size_t method_end = line.find(' ');
  const std::size_t target_end = line.find(' ', method_end + 1);
  return {line.substr(0, method_end), line.substr(method_end + 1, target_end - method_end - 1),
          line.back() - '0'};
}

struct StatusLine {
  int version_minor;
  int status;
  std::string_view reason;
};

// HTTP-version SP 3DIGIT [SP reason-phrase]: the space and reason that
// RFC 9112 requires are optional here, as some servers omit them.
StatusLine split_status_line(std::string_view line) {
  if (line.size() < 12 || line[8] != ' ') {
    parse_version(line.substr(0, 8));  // 505 for HTTP/2.0 and the like
    throw ParseError(400, "malformed status line");
  }
  StatusLine sl{parse_version(line.substr(0, 8)), 0, {}};
  for (std::size_t i = 9; i < 12; ++i) {
    if (!syntax::is_digit(line[i])) throw ParseError(400, "the status code is not three digits");
    sl.status = sl.status * 10 + (line[i] - '0');
  }
  if (sl.status < 100) throw ParseError(400, "status code below 100");
  if (line.size() > 12) {
    if (line[12] != ' ') throw ParseError(400, "the status code is not three digits");
    sl.reason = line.substr(13);
    for (char c : sl.reason) {
      if (!syntax::is_field_char(static_cast<unsigned char>(c))) {
        syntax::bad_char("a reason phrase", static_cast<unsigned char>(c));
      }
    }
  }
  return sl;
}

[[noreturn]] void over_limit(bool start_line, Side side) {
  if (!start_line) throw ParseError(431, "the header section is over the size limit");
  if (side == Side::request) throw ParseError(414, "the request line is over the size limit");
  throw ParseError(400, "the status line is over the size limit");
}

// RFC 9112 section 2.2: a server should ignore at least one empty line
// before a request-line, and a stray CRLF after a body is common enough that
// llhttp and browsers skip them before a status line too. Before any message
// a bare LF frames nothing, so it is skipped as well. A few: a peer sending
// only empty lines is refused, not read forever.
constexpr std::size_t kMaxEmptyLines = 16;

void skip_empty_line(HeadScan& s) {
  if (++s.empty_lines > kMaxEmptyLines) throw ParseError(400, "too many empty lines before the start line");
  s.head_start = s.line_start;
}

// Follows the head in buf from where the last call stopped; returns its
// length once the blank line is there, else 0. See the file comment.
std::size_t scan_head(std::string_view buf, const Limits& limits, HeadScan& s, Side side) {
  if (s.scanned > buf.size()) throw std::logic_error("HTTP parser: the buffer shrank between calls");
  for (;;) {
    std::size_t end = std::min(buf.size(), limits.max_head_bytes);
    bool start_line_bound = false;
    if (s.in_start_line) {
      // The start line, its CR and its LF.
      std::size_t cap = saturating_add(s.line_start, saturating_add(limits.max_start_line, 2));
      if (cap <= end) {
        end = cap;
        start_line_bound = true;
      }
    }
    const void* lf = s.scanned < end ? std::memchr(buf.data() + s.scanned, '\n', end - s.scanned)
                                     : nullptr;
    if (lf == nullptr) {
      s.scanned = std::max(s.scanned, end);
      if (buf.size() > end) over_limit(start_line_bound, side);
      return 0;
    }
    std::size_t at = static_cast<std::size_t>(static_cast<const char*>(lf) - buf.data());
    std::string_view line = buf.substr(s.line_start, at - s.line_start);
    s.scanned = s.line_start = at + 1;
    if (s.in_start_line && (line.empty() || line == "\r")) {
      skip_empty_line(s);
      continue;
    }
    if (line.empty() || line.back() != '\r') throw ParseError(400, "a bare LF ends a line (CRLF required)");
    line.remove_suffix(1);
    if (s.in_start_line) {
      if (side == Side::request) {
        split_request_line(line);
      } else {
        split_status_line(line);
      }
      s.in_start_line = false;
    } else if (line.empty()) {
      return at + 1;
    } else {
      if (++s.fields > limits.max_headers) throw ParseError(431, "too many header fields");
      syntax::check_field_line(line);
    }
  }
}

// Splits a checked head into its start line and fills `out` with the
// fields that follow it. Returns the start line.
std::string_view fill_fields(std::string_view head, Headers& out) {
  out.clear();
  std::size_t eol = head.find('\n');
  std::string_view start_line = head.substr(0, eol - 1);
  for (std::size_t pos = eol + 1; pos < head.size();) {
    std::size_t lf = head.find('\n', pos);
    std::string_view line = head.substr(pos, lf - 1 - pos);
    if (line.empty()) break;
    auto [name, value] = syntax::split_field_line(line);
    out.add(std::string(name), std::string(value));
    pos = lf + 1;
  }
  return start_line;
}

void check_host(const RequestHead& head) {
  const Header* host = nullptr;
  for (const Header& h : head.headers) {
    if (!iequals(h.name, "host")) continue;
    if (host != nullptr) throw ParseError(400, "more than one Host field");
    host = &h;
  }
  if (host == nullptr && head.version_minor >= 1) throw ParseError(400, "an HTTP/1.1 request without Host");
  if (host != nullptr && !target::is_valid_host(host->value)) {
    throw ParseError(400, "the Host field is not a host[:port] authority");
  }
}

// RFC 9112 section 3.2: origin-form ("/p?q") or absolute-form
// ("http://h/p") for ordinary methods, authority-form ("h:80") for CONNECT
// only, asterisk-form ("*") for OPTIONS only.
void check_target(std::string_view method, std::string_view t) {
  if (method == "CONNECT") {
    if (!target::is_authority_form(t)) throw ParseError(400, "CONNECT needs a host:port target");
  } else if (t == "*") {
    if (method != "OPTIONS") throw ParseError(400, "the target \"*\" is for OPTIONS only");
  } else if (t.front() != '/' && !target::split_absolute_form(t)) {
    throw ParseError(400, "the target is neither an absolute path nor an http(s) URI");
  }
}

// Once scan_head found a complete head of n bytes: the fields go to
// headers, the scan is reset for the next message (whether or not the
// caller resets), and the start line is returned.
std::string_view finish_head(std::string_view buf, std::size_t n, detail::HeadScan& scan,
                             Headers& headers) {
  const std::string_view head = buf.substr(scan.head_start, n - scan.head_start);
  scan = {};
  return fill_fields(head, headers);
}

}  // namespace

std::size_t RequestParser::parse(std::string_view buf, RequestHead& out) {
  std::size_t n = scan_head(buf, limits_, scan_, Side::request);
  if (n == 0) return 0;
  std::string_view start_line = finish_head(buf, n, scan_, out.headers);
  RequestLine rl = split_checked_request_line(start_line);  // scan_head checked it
  out.method.assign(rl.method);
  out.target.assign(rl.target);
  out.version_minor = rl.version_minor;
  check_target(out.method, out.target);
  check_host(out);
  return n;
}

std::size_t ResponseParser::parse(std::string_view buf, ResponseHead& out) {
  std::size_t n = scan_head(buf, limits_, scan_, Side::response);
  if (n == 0) return 0;
  std::string_view start_line = finish_head(buf, n, scan_, out.headers);
  StatusLine sl = split_status_line(start_line);
  out.version_minor = sl.version_minor;
  out.status = sl.status;
  out.reason.assign(sl.reason);
  return n;
}

}  // namespace corio::http
