// RequestParser and ResponseParser: heads parsed and trimmed, every
// smuggling shape and malformed start line refused with its status, each
// limit with its status (also before the head completes), pipelined heads,
// and a byte at a time giving exactly what the whole buffer gives.
#include <chrono>
#include <vector>

#include "http/http_parse_support.hpp"

namespace corio_http_test {
namespace {

constexpr std::string_view kGet =
    "GET /index.html?x=1 HTTP/1.1\r\n"
    "Host: example.org\r\n"
    "Accept:   text/html \t\r\n"
    "X-Empty:\r\n"
    "\r\n";

TEST(RequestParser, ParsesAHead) {
  auto o = request(kGet);
  ASSERT_EQ(o.error, 0);
  EXPECT_EQ(o.length, kGet.size());
  EXPECT_EQ(o.head.method, "GET");
  EXPECT_EQ(o.head.target, "/index.html?x=1");
  EXPECT_EQ(o.head.version_minor, 1);
  ASSERT_EQ(o.head.headers.size(), 3u);
  EXPECT_EQ(o.head.headers[0].name, "Host");
  EXPECT_EQ(o.head.headers.get("accept"), "text/html") << "OWS trimmed on both sides";
  EXPECT_EQ(o.head.headers.get("x-empty"), "");
}

TEST(RequestParser, WaitsForTheBlankLine) {
  for (std::size_t n = 0; n < kGet.size(); ++n) {
    EXPECT_EQ(request(kGet.substr(0, n)).length, 0u) << n;
    EXPECT_EQ(request(kGet.substr(0, n)).error, 0) << n;
  }
}

TEST(RequestParser, TargetFormsAndMethodsAsSent) {
  auto o = request("OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_EQ(o.head.target, "*");
  o = request("CONNECT example.org:443 HTTP/1.1\r\nHost: example.org:443\r\n\r\n");
  EXPECT_EQ(o.head.method, "CONNECT");
  EXPECT_EQ(o.head.target, "example.org:443");
  o = request("get http://h/p HTTP/1.0\r\n\r\n");
  EXPECT_EQ(o.head.method, "get") << "methods are case-sensitive tokens, kept as sent";
  EXPECT_EQ(o.head.target, "http://h/p");
  EXPECT_EQ(o.head.version_minor, 0);
}

TEST(RequestParser, IgnoresEmptyLinesBeforeTheRequestLine) {
  std::string text = "\r\n\n\r\n" + std::string(kGet);
  auto o = request(text);
  EXPECT_EQ(o.error, 0);
  EXPECT_EQ(o.length, text.size());
  EXPECT_EQ(o.head.method, "GET");
  EXPECT_EQ(request(std::string(17, '\n') + std::string(kGet)).error, 400) << "a bounded number";
}

// RFC 9112 section 3.2: each method's target forms.
TEST(RequestParser, TargetFormMustFitTheMethod) {
  const char* bad[] = {
      "GET hello HTTP/1.1",       "GET * HTTP/1.1",        "POST x:80 HTTP/1.1",
      "GET ftp://h/p HTTP/1.1",   "GET http:/p HTTP/1.1",  "GET http:///p HTTP/1.1",
      "GET http://h#f HTTP/1.1",  "GET http://a@h/ HTTP/1.1", "CONNECT /p HTTP/1.1",
      "CONNECT x HTTP/1.1",       "CONNECT x: HTTP/1.1",   "CONNECT * HTTP/1.1",
  };
  for (const char* line : bad) EXPECT_EQ(request(std::string(line) + "\r\nHost: h\r\n\r\n").error, 400) << line;
  const char* good[] = {"GET /p?q HTTP/1.1", "OPTIONS * HTTP/1.1", "CONNECT h:443 HTTP/1.1",
                        "GET http://h HTTP/1.1", "GET HTTPS://h:8443/p?q HTTP/1.1",
                        "CONNECT [::1]:80 HTTP/1.1"};
  for (const char* line : good) EXPECT_EQ(request(std::string(line) + "\r\nHost: h\r\n\r\n").error, 0) << line;
}

// RFC 9110 section 7.2 and RFC 3986 section 3.2: uri-host [ ":" port ].
TEST(RequestParser, HostMustBeAnAuthority) {
  for (const char* host : {"a b", "a/b", "a@b", "a:b:c", "[::1", "a:port", "a,b", "a\tb", "[::1]x",
                           "[zz]", "a%g0", "a?b", "a:8x", "a:80:", "a%4", "a:8 0"}) {
    EXPECT_EQ(request(std::string("GET / HTTP/1.1\r\nHost: ") + host + "\r\n\r\n").error, 400) << host;
  }
  for (const char* host : {"example.org", "example.org:8080", "127.0.0.1", "127.0.0.1:80", "[::1]",
                           "[::1]:8080", "xn--d1acpjx3f.xn--p1ai", "a%41b", "h:", ""}) {
    EXPECT_EQ(request(std::string("GET / HTTP/1.1\r\nHost: ") + host + "\r\n\r\n").error, 0) << host;
  }
}

TEST(RequestParser, PipelinedHeadsEndExactly) {
  std::string two = std::string(kGet) + "POST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\nGET";
  RequestParser p;
  RequestHead head;
  std::size_t first = p.parse(two, head);
  ASSERT_EQ(first, kGet.size());
  EXPECT_EQ(head.method, "GET");
  p.reset();
  std::string_view rest = std::string_view(two).substr(first);
  std::size_t second = p.parse(rest, head);
  EXPECT_EQ(rest.substr(second), "GET");
  EXPECT_EQ(head.method, "POST");
  EXPECT_EQ(head.target, "/b");
  EXPECT_EQ(head.headers.size(), 2u) << "the previous head's fields are gone";
  p.reset();
  EXPECT_EQ(p.parse(rest.substr(second), head), 0u);
}

TEST(RequestParser, ReusableWithoutResetAfterACompleteHead) {
  RequestParser p;
  RequestHead head;
  EXPECT_EQ(p.parse(kGet, head), kGet.size());
  EXPECT_EQ(p.parse(kGet, head), kGet.size());
}

// obs-fold, whitespace before the colon, bare CR and bare LF anywhere.
TEST(RequestParser, RefusesSmugglingShapesInFieldLines) {
  const char* bad[] = {
      "GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n b\r\n\r\n",           // obs-fold (SP)
      "GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n\tb\r\n\r\n",          // obs-fold (HTAB)
      "GET / HTTP/1.1\r\n Host: h\r\n\r\n",                        // first field folded
      "GET / HTTP/1.1\r\nHost: h\r\nContent-Length : 5\r\n\r\n",   // space before colon
      "GET / HTTP/1.1\r\nHost: h\r\nContent-Length\t: 5\r\n\r\n",  // tab before colon
      "GET / HTTP/1.1\r\nHost: h\r\nX: a\rb\r\n\r\n",              // bare CR in a value
      "GET / HTTP/1.1\r\nHost: h\rX: a\r\n\r\n",                   // bare CR as line end
      "GET / HTTP/1.1\r\nHost: h\nX: a\r\n\r\n",                   // bare LF as line end
      "GET / HTTP/1.1\nHost: h\r\n\r\n",                           // bare LF after the request line
      "GET / HTTP/1.1\r\nHost: h\r\n\n",                           // bare LF as the blank line
      "GET / HTTP/1.1\r\nHost: h\r\n\r\r\n",                       // CR CR LF
      "GET / HTTP/1.1\r\nHost: h\r\nX: \x7f\r\n\r\n",              // DEL in a value
      "GET / HTTP/1.1\r\nHost: h\r\nX(y): a\r\n\r\n",              // non-token name
      "GET / HTTP/1.1\r\nHost: h\r\n: a\r\n\r\n",                  // empty name
      "GET / HTTP/1.1\r\nHost: h\r\nno colon\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: h\r\nnocolon\r\n\r\n",
  };
  for (std::string_view text : bad) {
    EXPECT_EQ(request_error(text), 400) << text;
  }
  std::string nul = "GET / HTTP/1.1\r\nHost: h\r\nX: a";
  nul += '\0';
  nul += "b\r\n\r\n";
  EXPECT_EQ(request_error(nul), 400);
}

TEST(RequestParser, RefusesMalformedRequestLines) {
  const char* bad[] = {
      "GET  / HTTP/1.1\r\nHost: h\r\n\r\n",   "GET /  HTTP/1.1\r\nHost: h\r\n\r\n",
      "GET / HTTP/1.1 \r\nHost: h\r\n\r\n",   " GET / HTTP/1.1\r\nHost: h\r\n\r\n",
      "GET\t/ HTTP/1.1\r\nHost: h\r\n\r\n",   "G(T / HTTP/1.1\r\nHost: h\r\n\r\n",
      "GET / http/1.1\r\nHost: h\r\n\r\n",    "GET / HTTP/1.10\r\nHost: h\r\n\r\n",
      "GET / HTTP/1\r\nHost: h\r\n\r\n",      "GET / HTTP/1.x\r\nHost: h\r\n\r\n",
      "GET /\r\nHost: h\r\n\r\n",             "GET\r\nHost: h\r\n\r\n",
      "GET /a\x01 HTTP/1.1\r\nHost: h\r\n\r\n", "GET /\xc3\xa9 HTTP/1.1\r\nHost: h\r\n\r\n",
      "GET /a\x7f HTTP/1.1\r\nHost: h\r\n\r\n",
  };
  for (std::string_view text : bad) EXPECT_EQ(request_error(text), 400) << text;
}

TEST(RequestParser, OtherHttpVersionsAre505) {
  EXPECT_EQ(request_error("GET / HTTP/2.0\r\nHost: h\r\n\r\n"), 505);
  EXPECT_EQ(request_error("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), 505);
  EXPECT_EQ(request_error("GET / HTTP/0.9\r\n\r\n"), 505);
  EXPECT_EQ(request_error("GET / HTTP/2.0\r\n"), 505) << "known as soon as the request line is";
}

TEST(RequestParser, HostRules) {
  EXPECT_EQ(request_error("GET / HTTP/1.1\r\n\r\n"), 400) << "HTTP/1.1 needs Host";
  EXPECT_EQ(request_error("GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n"), 400);
  EXPECT_EQ(request_error("GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n"), 400);
  EXPECT_EQ(request_error("GET / HTTP/1.0\r\n\r\n"), 0);
  EXPECT_EQ(request_error("GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n"), 400);
}

Limits small_limits() {
  Limits l;
  l.max_start_line = 32;
  l.max_head_bytes = 128;
  l.max_headers = 3;
  return l;
}

TEST(RequestParser, RequestLineLimitIs414EvenIncomplete) {
  Limits l = small_limits();
  std::string at_limit = "GET /" + std::string(32 - 14, 'a') + " HTTP/1.1";
  ASSERT_EQ(at_limit.size(), 32u);
  EXPECT_EQ(request_error(at_limit + "\r\nHost: h\r\n\r\n", l), 0);
  std::string over = "GET /" + std::string(32 - 13, 'a') + " HTTP/1.1";
  EXPECT_EQ(request_error(over + "\r\nHost: h\r\n\r\n", l), 414);
  EXPECT_EQ(request_error("GET /" + std::string(100, 'a'), l), 414) << "no CRLF yet";
}

TEST(RequestParser, HeadSizeLimitIs431EvenIncomplete) {
  Limits l = small_limits();
  std::string head = "GET / HTTP/1.1\r\nHost: h\r\nX: ";
  std::string exact = head + std::string(128 - head.size() - 4, 'v') + "\r\n\r\n";
  ASSERT_EQ(exact.size(), 128u);
  EXPECT_EQ(request_error(exact, l), 0);
  EXPECT_EQ(request(exact, l).length, 128u);
  std::string over = head + std::string(128 - head.size() - 3, 'v') + "\r\n\r\n";
  EXPECT_EQ(request_error(over, l), 431);
  EXPECT_EQ(request_error(head + std::string(200, 'v'), l), 431) << "an endless field";
}

TEST(RequestParser, FieldCountLimitIs431) {
  Limits l = small_limits();
  EXPECT_EQ(request_error("GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\n\r\n", l), 0);
  EXPECT_EQ(request_error("GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\nC: 3\r\n", l), 431)
      << "refused at the fourth field, before the blank line";
}

TEST(RequestParser, ByteAtATimeGivesWhatTheWholeGives) {
  Limits l = small_limits();
  std::vector<std::string> inputs = {
      std::string(kGet),
      "GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n",
      "GET /" + std::string(40, 'a') + " HTTP/1.1\r\n",
      "GET / HTTP/1.1\r\nHost: h\r\nX: " + std::string(200, 'v'),
      "GET / HTTP/1.1\r\nHost: h\r\nX : 1\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: h\rX: 1\r\n\r\n",
      "GET / HTTP/2.0\r\n\r\n",
      "\r\n\r\nGET / HTTP/1.0\r\n\r\n",
      "GET / HTTP/1.1\r\n\r\n",
      "GET /" + std::string(27, 'a') + "\r\n",  // 32 bytes, no version
      "GET /" + std::string(26, 'a') + "\r\r\n",
  };
  for (const auto& text : inputs) {
    for (const Limits& limits : {l, Limits{}}) {
      auto whole = parse_whole<RequestParser, RequestHead>(text, limits);
      auto bytes = parse_bytewise<RequestParser, RequestHead>(text, limits);
      EXPECT_EQ(whole.error, bytes.error) << text;
      EXPECT_EQ(whole.length, bytes.length) << text;
      EXPECT_EQ(whole.head.method, bytes.head.method);
      EXPECT_EQ(whole.head.target, bytes.head.target);
      EXPECT_TRUE(same_fields(whole.head.headers, bytes.head.headers)) << text;
    }
  }
}

// Each call searches only the bytes new since the last one: a 4 MiB field
// a byte at a time takes 4M short calls. Were each call to rescan the
// line, it would be 8 * 10^12 bytes searched: hours, not milliseconds.
TEST(RequestParser, ByteAtATimeCostsLinearTime) {
  Limits l;
  l.max_head_bytes = 8 * 1024 * 1024;
  std::string text = "GET / HTTP/1.1\r\nHost: h\r\nX: " + std::string(4 * 1024 * 1024, 'v') + "\r\n\r\n";
  auto start = std::chrono::steady_clock::now();
  auto o = parse_bytewise<RequestParser, RequestHead>(text, l);
  EXPECT_EQ(o.length, text.size());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

constexpr std::string_view kOk =
    "HTTP/1.1 200 OK\r\n"
    "Content-Type: text/plain\r\n"
    "Content-Length: 5\r\n"
    "\r\n"
    "hello";

TEST(ResponseParser, ParsesAHead) {
  auto o = response(kOk);
  ASSERT_EQ(o.error, 0);
  EXPECT_EQ(kOk.substr(o.length), "hello");
  EXPECT_EQ(o.head.status, 200);
  EXPECT_EQ(o.head.reason, "OK");
  EXPECT_EQ(o.head.version_minor, 1);
  EXPECT_EQ(o.head.headers.get("content-length"), "5");
}

TEST(ResponseParser, StatusLineShapes) {
  EXPECT_EQ(response("HTTP/1.0 404 Not Found\r\n\r\n").head.reason, "Not Found");
  EXPECT_EQ(response("HTTP/1.0 404 Not Found\r\n\r\n").head.version_minor, 0);
  EXPECT_EQ(response("HTTP/1.1 204 \r\n\r\n").head.status, 204) << "empty reason";
  EXPECT_EQ(response("HTTP/1.1 204\r\n\r\n").head.status, 204) << "no reason, no space";
  EXPECT_EQ(response("HTTP/1.1 999 Whatever\r\n\r\n").head.status, 999);
  EXPECT_EQ(response("HTTP/1.1 200 caf\xc3\xa9\r\n\r\n").head.reason, "caf\xc3\xa9");
}

TEST(ResponseParser, RefusesMalformedStatusLines) {
  const char* bad[] = {
      "HTTP/1.1 20 OK\r\n\r\n",    "HTTP/1.1 2000 OK\r\n\r\n", "HTTP/1.1 099 Low\r\n\r\n",
      "HTTP/1.1 2x0 OK\r\n\r\n",   "HTTP/1.1  200 OK\r\n\r\n", "http/1.1 200 OK\r\n\r\n",
      "HTTP/1.1 200 O\x01K\r\n\r\n", "HTTP/1.1 200 OK\nX: y\r\n\r\n", "HTTP/1.1\r\n\r\n",
      "ICY 200 OK\r\n\r\n",        "HTTP/1.1 200 OK\r\nX : y\r\n\r\n",
  };
  for (std::string_view text : bad) EXPECT_EQ(response_error(text), 400) << text;
  EXPECT_EQ(response_error("HTTP/2.0 200 OK\r\n\r\n"), 505);
  EXPECT_EQ(response_error("HTTP/2.0 200"), 0) << "incomplete";
}

TEST(ResponseParser, LimitsApply) {
  Limits l = small_limits();
  EXPECT_EQ(response_error("HTTP/1.1 200 " + std::string(40, 'r'), l), 400) << "status line";
  EXPECT_EQ(response_error("HTTP/1.1 200 OK\r\nX: " + std::string(200, 'v'), l), 431);
  EXPECT_EQ(response_error("HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n", l), 431);
}

// Between two responses on a kept-alive connection (a stray CRLF after a
// body), as llhttp and browsers skip them; a bounded number.
TEST(ResponseParser, SkipsEmptyLinesBeforeTheStatusLine) {
  const std::string text = "\r\n\n" + std::string(kOk);
  auto o = response(text);
  EXPECT_EQ(o.error, 0);
  const std::size_t head_length = text.size() - 5;  // kOk's body is "hello"
  EXPECT_EQ(o.length, head_length);
  EXPECT_EQ(o.head.status, 200);
  EXPECT_EQ(response_error(std::string(20, '\n') + std::string(kOk)), 400);
  auto bytes = parse_bytewise<ResponseParser, ResponseHead>(text);
  EXPECT_EQ(bytes.length, head_length);
}

TEST(ResponseParser, ByteAtATimeGivesWhatTheWholeGives) {
  for (std::string_view text : {kOk, std::string_view("HTTP/1.1 200 OK\r\nX : y\r\n\r\n")}) {
    auto whole = parse_whole<ResponseParser, ResponseHead>(text);
    auto bytes = parse_bytewise<ResponseParser, ResponseHead>(text);
    EXPECT_EQ(whole.error, bytes.error);
    EXPECT_EQ(whole.length, bytes.length);
    EXPECT_EQ(whole.head.status, bytes.head.status);
    EXPECT_TRUE(same_fields(whole.head.headers, bytes.head.headers));
  }
}

TEST(ParseError, CarriesItsStatusAndMessage) {
  try {
    RequestParser p;
    RequestHead head;
    p.parse("GET / HTTP/1.1\r\nHost: h\r\nContent-Length : 5\r\n\r\n", head);
    FAIL() << "no ParseError";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.status(), 400);
    EXPECT_STREQ(e.what(), "whitespace between a field name and its colon");
  }
}

}  // namespace
}  // namespace corio_http_test
