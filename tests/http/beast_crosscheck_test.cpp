// corio's parser against Boost.Beast's (Boost 1.81, header-only, from
// /usr/include): a table of requests and responses, each run through both.
// They must agree on accept/reject and, when both accept, on the method,
// target, version, status, fields and decoded body. Where they disagree on
// purpose the table says so and why: corio is stricter wherever leniency
// lets two parsers read one message two ways (RFC 9112's smuggling notes).
#include <gtest/gtest.h>

#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <string>
#include <utility>
#include <vector>

#include <corio/http/parser.hpp>

namespace corio_http_test {
namespace {

namespace beast_http = boost::beast::http;
using namespace corio::http;

// What one parser made of a message.
struct Parsed {
  bool ok = false;
  std::string method_or_status, target;
  int version_minor = 0;
  std::vector<std::pair<std::string, std::string>> fields;
  std::string body;
};

template <bool isRequest>
Parsed beast_parse(std::string_view text) {
  beast_http::parser<isRequest, beast_http::string_body> p;
  p.eager(true);
  if constexpr (!isRequest) p.skip(false);
  boost::beast::error_code ec;
  std::size_t pos = 0;
  while (!p.is_done()) {
    std::size_t used = p.put(boost::asio::buffer(text.data() + pos, text.size() - pos), ec);
    pos += used;
    if (ec == beast_http::error::need_more && pos < text.size() && used > 0) continue;
    if (ec == beast_http::error::need_more || (!ec && used == 0)) {
      ec = {};
      p.put_eof(ec);  // the peer closed: the end of an until-close body, else an error
      if (ec || !p.is_done()) return {};
    }
    if (ec) return {};
  }
  Parsed r{true, {}, {}, 0, {}, {}};
  const auto& m = p.get();
  if constexpr (isRequest) {
    r.method_or_status = std::string(m.method_string());
    r.target = std::string(m.target());
  } else {
    r.method_or_status = std::to_string(m.result_int());
  }
  r.version_minor = m.version() % 10;
  for (const auto& f : m) r.fields.emplace_back(std::string(f.name_string()), std::string(f.value()));
  r.body = m.body();
  return r;
}

// Head, framing and body the way corio's server and client read them; for
// a response the connection closes after the bytes given.
template <bool isRequest>
Parsed corio_parse(std::string_view text) {
  Parsed r;
  try {
    using Head = std::conditional_t<isRequest, RequestHead, ResponseHead>;
    using Parser = std::conditional_t<isRequest, RequestParser, ResponseParser>;
    Head head;
    Parser parser;
    std::size_t n = parser.parse(text, head);
    if (n == 0) return r;
    BodyFraming framing;
    if constexpr (isRequest) {
      framing = request_framing(head);
      r.method_or_status = head.method;
      r.target = head.target;
    } else {
      framing = response_framing(head, "GET");
      r.method_or_status = std::to_string(head.status);
    }
    BodyDecoder body(framing);
    body.decode(text.substr(n), r.body);
    if (!isRequest) body.finish_at_eof();
    if (!body.done()) return r;
    r.version_minor = head.version_minor;
    for (const Header& f : head.headers) r.fields.emplace_back(f.name, f.value);
    r.ok = true;
  } catch (const ParseError&) {
  }
  return r;
}

struct Case {
  const char* text;
  bool corio_ok;
  bool beast_ok;
  const char* why;  // for a disagreement: why corio decides as it does
};

template <bool isRequest>
void cross_check(const Case& c) {
  SCOPED_TRACE(testing::PrintToString(std::string(c.text)));
  Parsed ours = corio_parse<isRequest>(c.text);
  Parsed theirs = beast_parse<isRequest>(c.text);
  EXPECT_EQ(ours.ok, c.corio_ok) << "corio";
  EXPECT_EQ(theirs.ok, c.beast_ok) << "Beast";
  if (!(ours.ok && theirs.ok)) return;
  EXPECT_EQ(ours.method_or_status, theirs.method_or_status);
  EXPECT_EQ(ours.target, theirs.target);
  EXPECT_EQ(ours.version_minor, theirs.version_minor);
  EXPECT_EQ(ours.fields, theirs.fields);
  EXPECT_EQ(ours.body, theirs.body);
}

const Case kRequests[] = {
    // Both accept.
    {"GET / HTTP/1.1\r\nHost: h\r\n\r\n", true, true, ""},
    {"GET /a/b?x=1&y=%20 HTTP/1.1\r\nHost: example.org\r\nAccept: */*\r\nUser-Agent: t/1\r\n\r\n", true,
     true, ""},
    {"GET / HTTP/1.1\r\nHost: h\r\nX-Pad:   spaced value \t\r\nX-Empty:\r\n\r\n", true, true, ""},
    {"GET / HTTP/1.0\r\n\r\n", true, true, ""},
    {"OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n", true, true, ""},
    {"CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\n", true, true, ""},
    {"PURGE /x HTTP/1.1\r\nHost: h\r\n\r\n", true, true, ""},
    {"POST /f HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello", true, true, ""},
    {"POST /f HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n", true, true, ""},
    {"POST /u HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
     "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
     true, true, ""},
    {"POST /u HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
     "5;name=value\r\nhello\r\nA\r\n0123456789\r\n0\r\n\r\n",
     true, true, ""},
    {"GET / HTTP/1.1\r\nHost: h\r\nX-Utf8: caf\xc3\xa9\r\n\r\n", true, true, ""},
    // Both refuse.
    {"GET / HTTP/1.1\r\nHost: h\r\nContent-Length : 5\r\n\r\nhello", false, false, ""},
    {"GET / HTTP/1.1\r\nHost: h\nX: 1\r\n\r\n", false, false, ""},
    {"GET / HTTP/1.1\r\nHost: h\r\nX: a\rb\r\n\r\n", false, false, ""},
    {"GET  / HTTP/1.1\r\nHost: h\r\n\r\n", false, false, ""},
    {"GET / HTTP/2.0\r\nHost: h\r\n\r\n", false, false, ""},
    {"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
     false, false, ""},
    {"GET / HTTP/1.1 \r\nHost: h\r\n\r\n", false, false, ""},
    {"G(T / HTTP/1.1\r\nHost: h\r\n\r\n", false, false, ""},
    {"GET / http/1.1\r\nHost: h\r\n\r\n", false, false, ""},
    {"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\nabcde", false, false, ""},
    {"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n", false, false, ""},
    {"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 18446744073709551616\r\n\r\n", false, false, ""},
    {"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0x10\r\n", false, false, ""},
    {"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n", false, false, ""},
    {"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1 0\r\n", false, false, ""},
    {"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000000\r\n", false, false,
     ""},
    {"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n0\r\n\r\n", false, false,
     ""},
    // Deliberate disagreements.
    {"GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n b\r\n\r\n", false, true,
     "obs-fold: RFC 9112 section 5.2 lets a server refuse it, and folding is a classic smuggling vector"},
    {"GET / HTTP/1.1\r\n\r\n", false, true,
     "RFC 9112 section 3.2: a server MUST answer 400 to an HTTP/1.1 request without Host"},
    {"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", false, true,
     "RFC 9112 section 3.2: more than one Host is a 400"},
    {"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello", false, true,
     "a repeated Content-Length is refused even when equal (as nginx does): one rule, no list parsing"},
    {"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5, 5\r\n\r\nhello", false, true,
     "likewise a Content-Length list"},
    {"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", false, true,
     "a transfer coding corio cannot decode is a 501, not a body passed on still encoded"},
    {"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", false, true,
     "RFC 9112 section 6.1: Transfer-Encoding in HTTP/1.0 means faulty framing"},
    {"\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n", true, false,
     "RFC 9112 section 2.2: a server SHOULD ignore an empty line before a request"},
    {"GET /caf\xc3\xa9 HTTP/1.1\r\nHost: h\r\n\r\n", false, true,
     "a request-target is ASCII (RFC 3986); raw UTF-8 is refused rather than guessed at"},
    {"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1 ;x\r\na\r\n0\r\n\r\n", true,
     true, ""},
};

TEST(BeastCrosscheck, Requests) {
  for (const Case& c : kRequests) cross_check<true>(c);
}

const Case kResponses[] = {
    {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", true, true, ""},
    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", true, true, ""},
    {"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the connection closes", true, true, ""},
    {"HTTP/1.1 204 No Content\r\n\r\n", true, true, ""},
    {"HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n", true, true, ""},
    {"HTTP/1.1 404 \r\nContent-Length: 0\r\n\r\n", true, true, ""},
    {"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nab", false, false, ""},
    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n", false, false, ""},
    {"HTTP/1.1 20x OK\r\n\r\n", false, false, ""},
    {"HTTP/1.1 200 OK\r\nX : y\r\n\r\n", false, false, ""},
    {"HTTP/1.1 200 OK\nContent-Length: 0\r\n\r\n", false, false, ""},
    {"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", false, false,
     ""},
    // Deliberate disagreements.
    {"HTTP/1.1 204\r\n\r\n", true, false,
     "some servers omit the space before an empty reason; nothing can be misread by accepting it"},
    {"HTTP/1.1 200 OK\r\nX: a\r\n b\r\nContent-Length: 0\r\n\r\n", false, true, "obs-fold, as for requests"},
};

TEST(BeastCrosscheck, Responses) {
  for (const Case& c : kResponses) cross_check<false>(c);
}

}  // namespace
}  // namespace corio_http_test
