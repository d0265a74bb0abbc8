// multipart/form-data: the incremental parser (every split of the input
// gives the same parts; limits; malformed bodies), and MultipartReader in a
// handler, streaming a large file part piece by piece.
#include <corio/http/multipart.hpp>

#include <corio/errors.hpp>

#include "http/server_support.hpp"

namespace corio_http_test {
namespace {

using corio::http::BodyPart;
using corio::http::MultipartError;
using corio::http::MultipartLimits;
using corio::http::MultipartParser;
using corio::http::MultipartReader;
using Event = MultipartParser::Event;
using namespace std::string_literals;

struct Part {
  Headers headers;
  std::string body;
};

// Feeds body in pieces of `step` bytes (the way a socket delivers it),
// keeping unconsumed bytes, as MultipartReader does.
std::vector<Part> parse_all(std::string_view body, std::size_t step, MultipartLimits limits = {}) {
  MultipartParser p("b0undary", limits);
  std::vector<Part> parts;
  std::string buf;
  std::size_t fed = 0;
  for (;;) {
    const MultipartParser::Step s = p.parse(buf);
    const std::string_view data = s.data;
    if (s.event == Event::part) parts.push_back({p.headers(), {}});
    if (s.event == Event::data) parts.back().body += data;
    buf.erase(0, s.used);
    if (s.event == Event::done) return parts;
    if (s.event == Event::need_more) {
      if (fed == body.size()) {
        p.finish();
        ADD_FAILURE() << "finish() did not throw";
        return parts;
      }
      buf += body.substr(fed, step);
      fed = std::min(body.size(), fed + step);
    }
  }
}

const std::string kBody =
    "preamble to skip\r\n"
    "--b0undary\r\n"
    "Content-Disposition: form-data; name=\"title\"\r\n"
    "\r\n"
    "hello\r\n--b0undar world\r\n"  // almost a boundary: part of the body
    "--b0undary  \r\n"              // transport padding
    "Content-Disposition: form-data; name=\"file\"; filename=\"a \\\"b\\\".txt\"\r\n"
    "Content-Type: application/octet-stream\r\n"
    "\r\n"
    "\x00\x01\r\n\r\nbinary"
    "\r\n--b0undary\r\n"
    "\r\n"  // a part without headers, and an empty body
    "\r\n--b0undary--\r\n"
    "epilogue, ignored"s;

TEST(MultipartParser, EverySplitGivesTheSameParts) {
  const std::string body(kBody.data(), kBody.size());
  for (std::size_t step : {std::size_t(1), std::size_t(2), std::size_t(3), std::size_t(7),
                           std::size_t(64), body.size()}) {
    const std::vector<Part> parts = parse_all(body, step);
    ASSERT_EQ(parts.size(), 3u) << "step " << step;
    EXPECT_EQ(parts[0].headers.get_or("Content-Disposition", ""), "form-data; name=\"title\"");
    EXPECT_EQ(parts[0].body, "hello\r\n--b0undar world");
    EXPECT_EQ(parts[1].headers.get_or("Content-Type", ""), "application/octet-stream");
    EXPECT_EQ(parts[1].body, std::string("\x00\x01\r\n\r\nbinary", 12));
    EXPECT_TRUE(parts[2].headers.empty());
    EXPECT_EQ(parts[2].body, "");
  }
}

TEST(MultipartParser, BodyStartingWithTheBoundaryAndNoPreamble) {
  const std::vector<Part> parts = parse_all("--b0undary\r\nA: 1\r\n\r\nx\r\n--b0undary--", 1);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].headers.get_or("a", ""), "1");
  EXPECT_EQ(parts[0].body, "x");
}

int error_status(std::string_view body, MultipartLimits limits = {}) {
  for (std::size_t step : {std::size_t(1), body.size()}) {
    try {
      parse_all(body, step, limits);
    } catch (const MultipartError& e) {
      if (step == body.size()) return e.status();
      continue;
    }
    return 0;
  }
  return 0;
}

TEST(MultipartParser, MalformedBodiesAre400) {
  EXPECT_EQ(error_status("no boundary at all"), 400);
  EXPECT_EQ(error_status("--b0undary\r\nA: 1\r\n\r\ncut short"), 400);
  EXPECT_EQ(error_status("--b0undary\r\nno colon\r\n\r\nx\r\n--b0undary--"), 400);
  EXPECT_EQ(error_status("--b0undary\r\n folded: x\r\n\r\nx\r\n--b0undary--"), 400);
  EXPECT_EQ(error_status("--b0undary junk\r\n\r\nx\r\n--b0undary--"), 400);
  EXPECT_EQ(error_status("--b0undary\r\n\r\nx\r\n--b0undaryX\r\n"), 400);
  EXPECT_EQ(error_status("--b0undary\r\n\r\nx\r\n--b0undary--"), 0) << "the control case parses";
}

TEST(MultipartParser, LimitsAre413) {
  MultipartLimits parts;
  parts.max_parts = 2;
  const std::string three = "--b0undary\r\n\r\na\r\n--b0undary\r\n\r\nb\r\n--b0undary\r\n\r\nc\r\n--b0undary--";
  EXPECT_EQ(error_status(three, parts), 413);
  parts.max_parts = 3;
  EXPECT_EQ(error_status(three, parts), 0);

  MultipartLimits head;
  head.max_part_head = 16;
  EXPECT_EQ(error_status("--b0undary\r\nX-Long: 0123456789\r\n\r\nx\r\n--b0undary--", head), 413);
  EXPECT_EQ(error_status("--b0undary\r\nX: 012345678\r\n\r\nx\r\n--b0undary--", head), 0);
  EXPECT_EQ(error_status("--b0undary\r\nX-Never-Ending-Head: " + std::string(100, 'x'), head), 413);

  MultipartLimits size;
  size.max_part_size = 4;
  EXPECT_EQ(error_status("--b0undary\r\n\r\n12345\r\n--b0undary--", size), 413);
  EXPECT_EQ(error_status("--b0undary\r\n\r\n1234\r\n--b0undary--", size), 0);

  MultipartLimits total;
  total.max_total = 40;
  EXPECT_EQ(error_status("--b0undary\r\n\r\n" + std::string(30, 'x') + "\r\n--b0undary--", total), 413);
  EXPECT_EQ(error_status("--b0undary\r\n\r\n" + std::string(10, 'x') + "\r\n--b0undary--", total), 0);
}

TEST(MultipartParser, BoundaryRules) {
  EXPECT_TRUE(MultipartParser::valid_boundary("----WebKitFormBoundary7MA4YWxkTrZu0gW"));
  EXPECT_FALSE(MultipartParser::valid_boundary(""));
  EXPECT_FALSE(MultipartParser::valid_boundary(std::string(71, 'a')));
  EXPECT_FALSE(MultipartParser::valid_boundary("ends in space "));
  EXPECT_FALSE(MultipartParser::valid_boundary("semi;colon"));
  EXPECT_THROW(MultipartParser("bad\r\n"), corio::ValueError);
  EXPECT_EQ(MultipartReader::boundary("multipart/form-data; boundary=abc"), "abc");
  EXPECT_EQ(MultipartReader::boundary("multipart/form-data; charset=x; boundary=\"a b\""), "a b");
  EXPECT_EQ(MultipartReader::boundary("multipart/form-data"), std::nullopt);
}

// A handler that streams every part: fields whole, files by pieces,
// reporting sizes and the largest piece it was handed.
Coro<Response> upload(Request& req) {
  MultipartReader form(req);
  std::string report;
  std::size_t largest = 0;
  while (std::optional<BodyPart> part = co_await form.next()) {
    report += part->name() + "|" + part->filename().value_or("-") + "|" +
              std::string(part->content_type()) + "|";
    if (part->name() == "skipped") {
      report += "skipped\n";
      continue;  // next() drops the rest of it
    }
    if (!part->filename()) {
      report += co_await part->text() + "\n";
      continue;
    }
    std::size_t bytes = 0;
    char expect = 'a';
    bool in_order = true;
    for (std::string piece; !(piece = co_await part->read_chunk()).empty();) {
      largest = std::max(largest, piece.size());
      for (char ch : piece) {
        in_order = in_order && ch == expect;
        expect = expect == 'z' ? 'a' : char(expect + 1);
      }
      bytes += piece.size();
    }
    report += std::to_string(bytes) + (in_order ? " in order\n" : " garbled\n");
  }
  // A piece is what the connection read at once: far below the 5 MiB file.
  report += "largest piece " + std::string(largest <= 1024 * 1024 ? "bounded" : "too big " + std::to_string(largest));
  co_return Response::text(report);
}

std::string alphabet(std::size_t n) {
  std::string s(n, 'a');
  for (std::size_t i = 0; i < n; ++i) s[i] = char('a' + i % 26);
  return s;
}

std::string form_request(std::string_view body, std::string_view type) {
  return "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: " + std::string(type) +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + std::string(body);
}

Coro<void> upload_body() {
  ServerOptions opts = quiet();
  opts.limits.max_body = 64 * 1024 * 1024;
  Server server(opts);
  server.post("/upload", upload);
  co_await server.start("127.0.0.1", 0);
  const std::size_t big = 5 * 1024 * 1024;
  const std::string body =
      "--XyZ\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nmy file\r\n"
      "--XyZ\r\nContent-Disposition: form-data; name=\"skipped\"\r\n\r\n" + std::string(100000, 's') +
      "\r\n--XyZ\r\nContent-Disposition: form-data; name=\"doc\"; filename=\"a.txt\"\r\n"
      "Content-Type: text/x-letters\r\n\r\n" + alphabet(big) + "\r\n--XyZ--\r\n";
  Reply r = co_await exchange(server.port(), form_request(body, "multipart/form-data; boundary=XyZ"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "title|-|text/plain|my file\n"
                    "skipped|-|text/plain|skipped\n"
                    "doc|a.txt|text/x-letters|" + std::to_string(big) + " in order\n"
                    "largest piece bounded");

  r = co_await exchange(server.port(), form_request("x=1", "application/x-www-form-urlencoded"));
  EXPECT_EQ(r.status, 415);
  r = co_await exchange(server.port(), form_request("x", "multipart/form-data"));
  EXPECT_EQ(r.status, 400);
  r = co_await exchange(server.port(),
                        form_request("--XyZ\r\n\r\ncut", "multipart/form-data; boundary=XyZ"));
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("cut short"), std::string::npos) << r.body;
  co_await server.shutdown(1s);
}

TEST(HttpMultipart, HandlerStreamsPartsWithoutHoldingFiles) { run_bounded(upload_body(), 30s); }

}  // namespace
}  // namespace corio_http_test
