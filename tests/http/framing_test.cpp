// request_framing, response_framing and keep_alive: the Content-Length /
// Transfer-Encoding smuggling shapes refused, the response matrix
// (HEAD, 1xx, 204, 304, CONNECT), and the keep-alive matrix of 1.0 and 1.1.
#include "http/http_parse_support.hpp"

namespace corio_http_test {
namespace {

using Kind = BodyFraming::Kind;

RequestHead request_with(std::initializer_list<std::pair<std::string_view, std::string_view>> fields,
                         int minor = 1) {
  RequestHead head{"POST", "/", minor, Headers(fields)};
  head.headers.add("Host", "h");
  return head;
}

int framing_error(const RequestHead& head) {
  try {
    request_framing(head);
  } catch (const ParseError& e) {
    return e.status();
  }
  return 0;
}

TEST(RequestFraming, LengthChunkedOrNone) {
  EXPECT_EQ(request_framing(request_with({})).kind, Kind::none);
  BodyFraming f = request_framing(request_with({{"Content-Length", "42"}}));
  EXPECT_EQ(f.kind, Kind::length);
  EXPECT_EQ(f.length, 42u);
  EXPECT_EQ(request_framing(request_with({{"Content-Length", "0"}})).kind, Kind::length);
  EXPECT_EQ(request_framing(request_with({{"Content-Length", "007"}})).length, 7u);
  EXPECT_EQ(request_framing(request_with({{"Content-Length", "18446744073709551615"}})).length,
            UINT64_MAX);
  EXPECT_EQ(request_framing(request_with({{"Transfer-Encoding", "chunked"}})).kind, Kind::chunked);
  EXPECT_EQ(request_framing(request_with({{"transfer-encoding", "Chunked"}})).kind, Kind::chunked);
  EXPECT_EQ(request_framing(request_with({{"Transfer-Encoding", ", chunked"}})).kind, Kind::chunked)
      << "empty list elements are allowed";
}

TEST(RequestFraming, RefusesContentLengthSmuggling) {
  EXPECT_EQ(framing_error(request_with({{"Content-Length", "5"}, {"Transfer-Encoding", "chunked"}})), 400);
  EXPECT_EQ(framing_error(request_with({{"Transfer-Encoding", "chunked"}, {"Content-Length", "5"}})), 400);
  EXPECT_EQ(framing_error(request_with({{"Content-Length", "5"}, {"Content-Length", "6"}})), 400);
  // Identical repeats are refused too (nginx and Beast do), and so is a list.
  EXPECT_EQ(framing_error(request_with({{"Content-Length", "5"}, {"Content-Length", "5"}})), 400);
  EXPECT_EQ(framing_error(request_with({{"Content-Length", "5, 5"}})), 400);
  EXPECT_EQ(framing_error(request_with({{"Content-Length", "5, 6"}})), 400);
  for (const char* bad : {"", "-1", "+5", "0x5", "5 5", "5.0", "1e3", "five", "18446744073709551616",
                          "99999999999999999999999"}) {
    EXPECT_EQ(framing_error(request_with({{"Content-Length", bad}})), 400) << bad;
  }
}

// RFC 9112 section 6.3: chunked not the final coding leaves the length
// unknowable (400); a coding before a final chunked is one corio does not
// decode (501).
TEST(RequestFraming, RefusesTransferEncodingOtherThanChunked) {
  EXPECT_EQ(framing_error(request_with({{"Transfer-Encoding", "gzip"}})), 400);
  EXPECT_EQ(framing_error(request_with({{"Transfer-Encoding", "gzip, chunked"}})), 501);
  EXPECT_EQ(framing_error(request_with({{"Transfer-Encoding", "chunked, gzip"}})), 400);
  EXPECT_EQ(framing_error(request_with({{"Transfer-Encoding", "identity"}})), 400);
  EXPECT_EQ(framing_error(request_with({{"Transfer-Encoding", "chunked"}, {"Transfer-Encoding", "x"}})), 400);
  EXPECT_EQ(framing_error(request_with({{"Transfer-Encoding", "x"}, {"Transfer-Encoding", "chunked"}})), 501);
  EXPECT_EQ(framing_error(request_with({{"Transfer-Encoding", "chunked, chunked"}})), 400);
  EXPECT_EQ(framing_error(request_with({{"Transfer-Encoding", "chunked"}, {"Transfer-Encoding", "chunked"}})), 400);
  EXPECT_EQ(framing_error(request_with({{"Transfer-Encoding", ""}})), 400);
  EXPECT_EQ(framing_error(request_with({{"Transfer-Encoding", "chunked"}}, 0)), 400)
      << "HTTP/1.0 has no Transfer-Encoding (RFC 9112 section 6.1)";
}

ResponseHead response_with(int status, std::initializer_list<std::pair<std::string_view, std::string_view>> fields) {
  return ResponseHead{status, "", 1, Headers(fields)};
}

TEST(ResponseFraming, Matrix) {
  struct Case {
    int status;
    const char* method;
    std::initializer_list<std::pair<std::string_view, std::string_view>> fields;
    Kind kind;
  };
  const Case cases[] = {
      {200, "GET", {{"Content-Length", "5"}}, Kind::length},
      {200, "GET", {{"Transfer-Encoding", "chunked"}}, Kind::chunked},
      {200, "GET", {}, Kind::until_close},
      {404, "POST", {}, Kind::until_close},
      {200, "HEAD", {{"Content-Length", "5"}}, Kind::none},
      {200, "HEAD", {{"Transfer-Encoding", "chunked"}}, Kind::none},
      {100, "GET", {}, Kind::none},
      {101, "GET", {{"Content-Length", "5"}}, Kind::none},
      {103, "GET", {}, Kind::none},
      {204, "GET", {{"Content-Length", "5"}}, Kind::none},
      {304, "GET", {{"Content-Length", "5"}}, Kind::none},
      {200, "CONNECT", {{"Content-Length", "5"}}, Kind::none},
      {299, "CONNECT", {}, Kind::none},
      {407, "CONNECT", {{"Content-Length", "5"}}, Kind::length},
      {205, "GET", {{"Content-Length", "0"}}, Kind::length},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(response_framing(response_with(c.status, c.fields), c.method).kind, c.kind)
        << c.status << " " << c.method;
  }
}

TEST(ResponseFraming, RefusesTheSmugglingShapesToo) {
  auto error = [](ResponseHead head) {
    try {
      response_framing(head, "GET");
    } catch (const ParseError& e) {
      return e.status();
    }
    return 0;
  };
  EXPECT_EQ(error(response_with(200, {{"Content-Length", "5"}, {"Transfer-Encoding", "chunked"}})), 400);
  EXPECT_EQ(error(response_with(200, {{"Content-Length", "5"}, {"Content-Length", "7"}})), 400);
  EXPECT_EQ(error(response_with(200, {{"Content-Length", "x"}})), 400);
  EXPECT_EQ(error(response_with(200, {{"Transfer-Encoding", "gzip"}})), 400);
}

TEST(KeepAlive, Matrix) {
  struct Case {
    int minor;
    std::initializer_list<std::pair<std::string_view, std::string_view>> fields;
    bool keep;
  };
  const Case cases[] = {
      {1, {}, true},
      {1, {{"Connection", "close"}}, false},
      {1, {{"Connection", "Close"}}, false},
      {1, {{"Connection", "keep-alive"}}, true},
      {1, {{"Connection", "Upgrade, close"}}, false},
      {1, {{"Connection", "Upgrade"}, {"connection", "close"}}, false},
      {1, {{"Connection", "closed"}}, true},
      {0, {}, false},
      {0, {{"Connection", "keep-alive"}}, true},
      {0, {{"Connection", "Keep-Alive"}}, true},
      {0, {{"Connection", "foo,keep-alive"}}, true},
      {0, {{"Connection", "keep-alive, close"}}, false},
      {0, {{"Keep-Alive", "timeout=5"}}, false},
  };
  for (const Case& c : cases) {
    Headers h(c.fields);
    EXPECT_EQ(keep_alive(c.minor, h), c.keep) << "HTTP/1." << c.minor << " " << h.get_or("connection", "-");
  }
}

}  // namespace
}  // namespace corio_http_test
