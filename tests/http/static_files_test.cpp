// Static files as nginx serves them: validators (ETag, Last-Modified),
// conditional requests (RFC 9110 section 13), byte ranges (section 14),
// HEAD, and precompressed .gz siblings. Raw exchanges on loopback, so
// every status and field is checked as it went over the wire; curl as a
// real peer for -r and -z.
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <sys/stat.h>

#include "common/programs.hpp"
#include "http/server_support.hpp"

namespace corio_http_test {
namespace {

using corio_testing::Ran;
using corio_testing::run_program;

// 2023-11-14 22:13:20 UTC: the mtime every file of the tree is given, so
// the validators are known in advance.
constexpr std::time_t kMtime = 1'700'000'000;
constexpr const char* kLastModified = "Tue, 14 Nov 2023 22:13:20 GMT";
constexpr const char* kEtag = "\"6553f100-3e8\"";  // mtime and size (1000) in hex

void set_mtime(const std::filesystem::path& p) {
  const struct timespec times[2] = {{kMtime, 0}, {kMtime, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, p.c_str(), times, 0), 0);
}

// data.txt: 1000 known bytes; page.html with a page.html.gz sibling;
// big.bin, 3 MB, for a range that outruns the socket's buffers.
struct Tree {
  std::filesystem::path root;
  std::string data, gz, big;
  Tree() {
    root = std::filesystem::temp_directory_path() / ("corio-static-" + std::to_string(::getpid()));
    std::filesystem::remove_all(root);
    std::filesystem::create_directories(root);
    for (int i = 0; data.size() < 1000; ++i) data += static_cast<char>('a' + i % 26);
    gz = std::string("\x1f\x8b\x08\x00 pretend gzip", 18);
    for (std::size_t i = 0; big.size() < 3'000'000; ++i) big += std::to_string(i) + ",";
    write("data.txt", data);
    write("page.html", "<p>plain</p>");
    write("page.html.gz", gz);
    write("big.bin", big);
  }
  void write(const char* name, const std::string& bytes) {
    std::ofstream(root / name, std::ios::binary) << bytes;
    set_mtime(root / name);
  }
  ~Tree() { std::filesystem::remove_all(root); }
};

Coro<void> start(Server& server, const Tree& tree) {
  server.add_static("/", tree.root.string());
  co_await server.start("127.0.0.1", 0);
}

// A test's exchanges, against a server on the tree.
using Body = Coro<void> (*)(const Server& server, const Tree& tree);

Coro<void> with_server(Body body, const Tree* tree) {
  Server server(quiet());
  co_await start(server, *tree);
  co_await body(server, *tree);
  co_await server.shutdown(1s);
}

void serve_tree(Body body, std::chrono::seconds limit = 10s) {
  Tree tree;
  run_bounded(with_server(body, &tree), limit);
}

// One request with extra header lines ("Name: value\r\n" each).
Coro<Reply> ask(const Server& server, std::string target, std::string fields = "",
                std::string method = "GET") {
  co_return co_await exchange(
      server.port(), method + " " + target + " HTTP/1.1\r\nHost: x\r\n" + fields + "\r\n", method);
}

Coro<void> validators_body(const Server& server, const Tree& tree) {
  Reply r = co_await ask(server, "/data.txt");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, tree.data);
  EXPECT_EQ(r.headers.get_or("ETag", ""), kEtag);
  EXPECT_EQ(r.headers.get_or("Last-Modified", ""), kLastModified);
  EXPECT_EQ(r.headers.get_or("Accept-Ranges", ""), "bytes");
  // HEAD: the same head, no body; a Range does not apply to it.
  r = co_await ask(server, "/data.txt", "Range: bytes=0-9\r\n", "HEAD");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "");
  EXPECT_EQ(r.headers.get_or("Content-Length", ""), "1000");
  EXPECT_EQ(r.headers.get_or("ETag", ""), kEtag);
  EXPECT_EQ(r.headers.get_or("Last-Modified", ""), kLastModified);
  EXPECT_EQ(r.headers.get_or("Accept-Ranges", ""), "bytes");
}

TEST(HttpStaticFiles, AnswersCarryEtagLastModifiedAndAcceptRanges) { serve_tree(validators_body); }

// A 304: validators, no body, no Content-Length; the connection stays
// usable (the next answer on it is framed right).
Coro<void> expect_304(const Server& server, std::string fields) {
  RawClient c = co_await connect(server.port());
  c.writer.write("GET /data.txt HTTP/1.1\r\nHost: x\r\n" + fields +
                 "\r\nGET /page.html HTTP/1.1\r\nHost: x\r\n\r\n");
  Reply r = co_await read_reply(c.reader);
  EXPECT_EQ(r.status, 304) << fields;
  EXPECT_EQ(r.body, "");
  EXPECT_FALSE(r.headers.contains("Content-Length")) << fields;
  EXPECT_EQ(r.headers.get_or("ETag", ""), kEtag);
  EXPECT_EQ(r.headers.get_or("Last-Modified", ""), kLastModified);
  r = co_await read_reply(c.reader);
  EXPECT_EQ(r.body, "<p>plain</p>");
  c.writer.close();
}

Coro<int> status_of(const Server& server, std::string fields, std::string target = "/data.txt") {
  co_return (co_await ask(server, std::move(target), std::move(fields))).status;
}

Coro<void> not_modified_body(const Server& server, const Tree&) {
  const std::string etag = kEtag;
  co_await expect_304(server, "If-None-Match: " + etag + "\r\n");
  co_await expect_304(server, "If-None-Match: W/" + etag + "\r\n");  // weak comparison
  co_await expect_304(server, "If-None-Match: \"a,b\", " + etag + "\r\n");
  co_await expect_304(server, "If-None-Match: *\r\n");
  co_await expect_304(server, std::string("If-Modified-Since: ") + kLastModified + "\r\n");
  co_await expect_304(server, "If-Modified-Since: Wed, 15 Nov 2023 00:00:00 GMT\r\n");
  co_await expect_304(server, "If-Modified-Since: Tuesday, 14-Nov-23 22:13:20 GMT\r\n");  // RFC 850
  co_await expect_304(server, "If-Modified-Since: Tue Nov 14 22:13:20 2023\r\n");         // asctime
  EXPECT_EQ(co_await status_of(server, "If-None-Match: \"other\"\r\n"), 200);
  EXPECT_EQ(co_await status_of(server, "If-Modified-Since: Tue, 14 Nov 2023 22:13:19 GMT\r\n"),
            200);
  EXPECT_EQ(co_await status_of(server, "If-Modified-Since: yesterday\r\n"), 200);
  // If-None-Match decides alone: a matching date does not make a 304.
  EXPECT_EQ(co_await status_of(server, "If-None-Match: \"other\"\r\nIf-Modified-Since: " +
                                           std::string(kLastModified) + "\r\n"),
            200);
}

TEST(HttpStaticFiles, IfNoneMatchAndIfModifiedSinceAnswer304) { serve_tree(not_modified_body); }

Coro<void> precondition_body(const Server& server, const Tree&) {
  const std::string etag = kEtag;
  EXPECT_EQ(co_await status_of(server, "If-Match: \"other\"\r\n"), 412);
  EXPECT_EQ(co_await status_of(server, "If-Match: W/" + etag + "\r\n"), 412);  // strong only
  EXPECT_EQ(co_await status_of(server, "If-Match: \"other\", " + etag + "\r\n"), 200);
  EXPECT_EQ(co_await status_of(server, "If-Match: *\r\n"), 200);
  EXPECT_EQ(co_await status_of(server, "If-Unmodified-Since: Tue, 14 Nov 2023 22:13:19 GMT\r\n"),
            412);
  EXPECT_EQ(
      co_await status_of(server, std::string("If-Unmodified-Since: ") + kLastModified + "\r\n"),
      200);
  // If-Match decides alone: If-Unmodified-Since is not looked at.
  EXPECT_EQ(
      co_await status_of(server, "If-Match: " + etag +
                                     "\r\nIf-Unmodified-Since: Mon, 01 Jan 2001 00:00:00 GMT\r\n"),
      200);
}

TEST(HttpStaticFiles, IfMatchAndIfUnmodifiedSinceAnswer412) { serve_tree(precondition_body); }

Coro<void> expect_range(const Server& server, const std::string& data, std::string range,
                        std::size_t first, std::size_t last, std::string target = "/data.txt") {
  const Reply r = co_await ask(server, std::move(target), "Range: " + range + "\r\n");
  EXPECT_EQ(r.status, 206) << range;
  EXPECT_EQ(r.headers.get_or("Content-Range", ""), "bytes " + std::to_string(first) + "-" +
                                                       std::to_string(last) + "/" +
                                                       std::to_string(data.size()));
  EXPECT_EQ(r.headers.get_or("Content-Length", ""), std::to_string(last - first + 1));
  EXPECT_TRUE(r.body == data.substr(first, last - first + 1)) << range;
}

Coro<void> single_range_body(const Server& server, const Tree& tree) {
  co_await expect_range(server, tree.data, "bytes=0-9", 0, 9);
  co_await expect_range(server, tree.data, "bytes=0-0", 0, 0);
  co_await expect_range(server, tree.data, "bytes=-500", 500, 999);      // suffix
  co_await expect_range(server, tree.data, "bytes=-5000", 0, 999);       // suffix past the start
  co_await expect_range(server, tree.data, "bytes=990-", 990, 999);      // open
  co_await expect_range(server, tree.data, "bytes=995-2000", 995, 999);  // clipped
  co_await expect_range(server, tree.data, "BYTES=10-19", 10, 19);  // the unit is case-insensitive
  // Ranges that overlap or touch are one range.
  co_await expect_range(server, tree.data, "bytes=0-9,5-14,15-19", 0, 19);
  // Past the socket's buffers: sendfile from an offset, waiting for room.
  co_await expect_range(server, tree.big, "bytes=1000000-2899999", 1'000'000, 2'899'999,
                        "/big.bin");
}

TEST(HttpStaticFiles, SingleRangesAnswer206) { serve_tree(single_range_body); }

Coro<void> unsatisfiable_body(const Server& server, const Tree& tree) {
  for (const char* range : {"bytes=1000-", "bytes=-0", "bytes=5000-6000,2000-"}) {
    const Reply r = co_await ask(server, "/data.txt", std::string("Range: ") + range + "\r\n");
    EXPECT_EQ(r.status, 416) << range;
    EXPECT_EQ(r.headers.get_or("Content-Range", ""), "bytes */1000") << range;
  }
  // Malformed: ignored, as RFC 9110 section 14.2 has it.
  for (const char* range : {"bytes=abc", "items=0-1", "bytes=5-1", "bytes=", "bytes=0-1,x",
                            "bytes=99999999999999999999999-", "bytes=--1"}) {
    const Reply r = co_await ask(server, "/data.txt", std::string("Range: ") + range + "\r\n");
    EXPECT_EQ(r.status, 200) << range;
    EXPECT_TRUE(r.body == tree.data) << range;
  }
}

TEST(HttpStaticFiles, UnsatisfiableRangesAnswer416AndMalformedOnesAreIgnored) {
  serve_tree(unsatisfiable_body);
}

// The parts of a multipart/byteranges body: each part's fields and bytes.
struct Part {
  Headers fields;
  std::string bytes;
};

std::vector<Part> split_parts(const std::string& body, const std::string& boundary) {
  std::vector<Part> parts;
  const std::string delimiter = "\r\n--" + boundary;
  std::size_t at = body.find("--" + boundary);  // the first may come without its CRLF
  EXPECT_NE(at, std::string::npos);
  at = body.find("\r\n", at);
  while (at != std::string::npos && at < body.size()) {
    const std::size_t head_end = body.find("\r\n\r\n", at);
    const std::size_t next = body.find(delimiter, head_end);
    if (head_end == std::string::npos || next == std::string::npos) break;
    Part part;
    std::string_view lines(body.data() + at + 2, head_end - at - 2);
    while (!lines.empty()) {
      const std::size_t eol = std::min(lines.find("\r\n"), lines.size());
      const std::string_view line = lines.substr(0, eol);
      const std::size_t colon = line.find(": ");
      part.fields.add(std::string(line.substr(0, colon)), std::string(line.substr(colon + 2)));
      lines.remove_prefix(std::min(eol + 2, lines.size()));
    }
    part.bytes = body.substr(head_end + 4, next - head_end - 4);
    parts.push_back(std::move(part));
    at = next + delimiter.size();
    if (body.compare(at, 2, "--") == 0) break;  // the close delimiter
  }
  return parts;
}

Coro<void> multipart_body(const Server& server, const Tree& tree) {
  const Reply r = co_await ask(server, "/data.txt", "Range: bytes=0-9,20-29,-5\r\n");
  EXPECT_EQ(r.status, 206);
  const std::string type(r.headers.get_or("Content-Type", ""));
  const std::string prefix = "multipart/byteranges; boundary=";
  EXPECT_EQ(type.substr(0, prefix.size()), prefix);
  CO_ASSERT(type.rfind(prefix, 0) == 0);
  EXPECT_FALSE(r.headers.contains("Content-Range"));
  EXPECT_EQ(r.headers.get_or("Content-Length", ""), std::to_string(r.body.size()));
  const std::vector<Part> parts = split_parts(r.body, type.substr(prefix.size()));
  EXPECT_EQ(parts.size(), 3u) << r.body;
  CO_ASSERT(parts.size() == 3u);
  const std::pair<std::size_t, std::size_t> want[] = {{0, 9}, {20, 29}, {995, 999}};
  for (std::size_t i = 0; i < 3; ++i) {
    const auto [first, last] = want[i];
    EXPECT_EQ(parts[i].fields.get_or("Content-Type", ""), "text/plain; charset=utf-8");
    EXPECT_EQ(parts[i].fields.get_or("Content-Range", ""),
              "bytes " + std::to_string(first) + "-" + std::to_string(last) + "/1000");
    EXPECT_EQ(parts[i].bytes, tree.data.substr(first, last - first + 1));
  }
}

TEST(HttpStaticFiles, SeveralRangesAnswerMultipartByteranges) { serve_tree(multipart_body); }

std::string many_ranges(int n) {
  std::string range = "Range: bytes=";
  for (int i = 0; i < n; ++i)
    range += (i ? "," : "") + std::to_string(i * 2) + "-" + std::to_string(i * 2);
  return range + "\r\n";
}

// CVE-2011-3192 ("Apache Killer"): many ranges, or many overlapping ones,
// multiplying the bytes sent. Past 16 ranges the header is ignored (200,
// the whole file, once), as nginx does past max_ranges.
Coro<void> range_cap_body(const Server& server, const Tree& tree) {
  Reply r = co_await ask(server, "/data.txt", many_ranges(16));
  EXPECT_EQ(r.status, 206);
  EXPECT_EQ(
      split_parts(r.body, std::string(r.headers.get_or("Content-Type", "")).substr(31)).size(),
      16u);
  for (const std::string& range : {many_ranges(17), many_ranges(1000)}) {
    r = co_await ask(server, "/big.bin", range);
    EXPECT_EQ(r.status, 200);
    EXPECT_TRUE(r.body == tree.big);
  }
  // Overlapping ranges are coalesced: 16 times the whole file is sent once.
  std::string overlapping = "Range: bytes=0-";
  for (int i = 1; i < 16; ++i) overlapping += ",0-";
  r = co_await ask(server, "/big.bin", overlapping + "\r\n");
  EXPECT_EQ(r.status, 206);
  EXPECT_EQ(r.body.size(), tree.big.size());
  // Still answering.
  r = co_await ask(server, "/data.txt", "Range: bytes=0-1\r\n");
  EXPECT_EQ(r.status, 206);
  EXPECT_EQ(r.body, "ab");
}

TEST(HttpStaticFiles, TooManyRangesAnswerTheWholeFileOnce) { serve_tree(range_cap_body); }

Coro<void> if_range_body(const Server& server, const Tree& tree) {
  const std::string range = "Range: bytes=0-9\r\n";
  const std::string etag = kEtag;
  EXPECT_EQ(co_await status_of(server, range + "If-Range: " + etag + "\r\n"), 206);
  EXPECT_EQ(co_await status_of(server, range + "If-Range: " + kLastModified + "\r\n"), 206);
  EXPECT_EQ(co_await status_of(server, range + "If-Range: \"other\"\r\n"), 200);
  EXPECT_EQ(co_await status_of(server, range + "If-Range: W/" + etag + "\r\n"), 200);
  EXPECT_EQ(co_await status_of(server, range + "If-Range: Wed, 15 Nov 2023 00:00:00 GMT\r\n"), 200);
  const Reply r = co_await ask(server, "/data.txt", range + "If-Range: \"other\"\r\n");
  EXPECT_TRUE(r.body == tree.data);
}

TEST(HttpStaticFiles, IfRangeMismatchSendsTheWholeFile) { serve_tree(if_range_body); }

Coro<void> gzip_body(const Server& server, const Tree& tree) {
  for (const char* accept : {"gzip", "deflate, gzip;q=0.5", "br, *"}) {
    const Reply r =
        co_await ask(server, "/page.html", std::string("Accept-Encoding: ") + accept + "\r\n");
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, tree.gz) << accept;
    EXPECT_EQ(r.headers.get_or("Content-Encoding", ""), "gzip") << accept;
    EXPECT_EQ(r.headers.get_or("Vary", ""), "Accept-Encoding");
    EXPECT_EQ(r.headers.get_or("Content-Type", ""), "text/html; charset=utf-8");
  }
  for (const char* accept : {"", "Accept-Encoding: br\r\n", "Accept-Encoding: gzip;q=0\r\n",
                             "Accept-Encoding: *, gzip;q=0.000\r\n"}) {
    const Reply r = co_await ask(server, "/page.html", accept);
    EXPECT_EQ(r.body, "<p>plain</p>") << accept;
    EXPECT_FALSE(r.headers.contains("Content-Encoding")) << accept;
    EXPECT_EQ(r.headers.get_or("Vary", ""), "Accept-Encoding") << accept;
  }
  // Ranges apply to the bytes sent: the .gz file's, as nginx's gzip_static.
  Reply r = co_await ask(server, "/page.html", "Accept-Encoding: gzip\r\nRange: bytes=0-3\r\n");
  EXPECT_EQ(r.status, 206);
  EXPECT_EQ(r.body, tree.gz.substr(0, 4));
  // No sibling: no Vary, no Content-Encoding.
  r = co_await ask(server, "/data.txt", "Accept-Encoding: gzip\r\n");
  EXPECT_FALSE(r.headers.contains("Vary"));
  EXPECT_FALSE(r.headers.contains("Content-Encoding"));
}

TEST(HttpStaticFiles, PrecompressedSiblingOnlyWhenGzipIsAccepted) { serve_tree(gzip_body); }

Coro<Response> one_file(Request&, std::string path) { co_return Response::file(std::move(path)); }

// Response::file from any handler gets the same treatment.
Coro<void> response_file_body(const Tree& tree) {
  Server server(quiet());
  const std::string path = (tree.root / "data.txt").string();
  server.get("/f", [path](Request& req) { return one_file(req, path); });
  co_await server.start("127.0.0.1", 0);
  co_await expect_range(server, tree.data, "bytes=-3", 997, 999, "/f");
  EXPECT_EQ(co_await status_of(server, std::string("If-None-Match: ") + kEtag + "\r\n", "/f"), 304);
  co_await server.shutdown(1s);
}

TEST(HttpStaticFiles, ResponseFileHonoursRangesAndConditions) {
  Tree tree;
  run_bounded(response_file_body(tree));
}

Coro<void> curl_body(const Server& server, const Tree& tree) {
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port()) + "/data.txt";
  // (Named vectors: g++ 12 rejects a braced list as an argument inside co_await.)
  const std::vector<std::string> resume = {"-sS", "-r", "0-9", "-w", " %{http_code}", url};
  Ran r = co_await run_program("curl", resume);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, tree.data.substr(0, 10) + " 206");
  // -z DATE: If-Modified-Since; the file is not newer, so 304 and nothing.
  const std::vector<std::string> fresh = {"-sS", "-z",           "Wed, 15 Nov 2023 00:00:00 GMT",
                                          "-w",  "%{http_code}", url};
  r = co_await run_program("curl", fresh);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "304");
  const std::vector<std::string> stale = {
      "-sS", "-z", "Mon, 13 Nov 2023 00:00:00 GMT", "-w", " %{http_code}", url};
  r = co_await run_program("curl", stale);
  EXPECT_EQ(r.out, tree.data + " 200");
}

TEST(HttpStaticFiles, CurlResumesAndRevalidates) {
  REQUIRE_PROGRAM("curl");
  serve_tree(curl_body, 60s);
}

}  // namespace
}  // namespace corio_http_test
