// HTTP/2 over TLS on the server's writer path: many streams' large answers
// (files read a piece at a time as they go, whole or ranges; bodies from
// handlers) are gathered into passes of frames, each encrypted as one
// write; the bytes must arrive whole and in order on every stream.
#include <corio/gather.hpp>
#include <corio/http/client.hpp>

#include "http/client_support.hpp"
#include "http/server_support.hpp"
#include "net/record_count.hpp"
#include "net/tls_support.hpp"

namespace corio_http_test {
namespace {

namespace client = corio::http;

// Bytes whose every offset is told apart from its neighbours' and not
// periodic in a frame's or a record's size.
std::string numbered(std::size_t n, std::size_t seed) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 7919 + i / 251 + seed) & 0xff);
  return s;
}

constexpr std::size_t kFileBytes = 300'000;
constexpr std::size_t kBodyBytes = 200'000;

Coro<Response> generated(Request&) { co_return Response::text(numbered(kBodyBytes, 7)); }

// The body at url, or the range of it (a Range header's value, then 206).
Coro<std::string> fetch(client::ClientSession& session, std::string url, std::string range = {}) {
  client::RequestOptions opts;
  if (!range.empty()) opts.headers.add("Range", range);
  client::ClientResponse r = co_await session.get(std::move(url), std::move(opts));
  EXPECT_EQ(r.version(), (client::HttpVersion{2, 0}));
  EXPECT_EQ(r.status(), range.empty() ? 200 : 206);
  co_return co_await r.read();
}

// Ranges larger than a file's read piece (64 KiB), each starting and ending
// off a piece's and a frame's bounds.
constexpr std::size_t kRanges = 6;
std::string range(std::size_t i) {
  return "bytes=" + std::to_string(1001 * i) + "-" + std::to_string(200'000 + 1007 * i);
}

Coro<void> large_answers_body(const TempDir* dir) {
  write_file(dir->path() / "big.bin", numbered(kFileBytes, 3));
  ServerOptions so = quiet();
  so.ssl = corio_net_test::test_server();
  Server server(so);
  server.add_static("/files", dir->path().string());
  server.get("/generated", generated);
  co_await server.start("127.0.0.1", 0);
  client::ClientOptions o;
  o.ssl = corio_net_test::trusting_client();
  client::ClientSession session(o);
  const std::string base = "https://localhost:" + std::to_string(server.port());
  std::vector<Coro<std::string>> all;
  for (int i = 0; i < 8; ++i) {
    all.push_back(fetch(session, base + "/files/big.bin"));
    all.push_back(fetch(session, base + "/generated"));
  }
  for (std::size_t i = 0; i < kRanges; ++i) {
    all.push_back(fetch(session, base + "/files/big.bin", range(i)));
  }
  const std::vector<std::string> bodies = co_await corio::gather(std::move(all));
  for (std::size_t i = 0; i < 16; ++i) {
    EXPECT_TRUE(bodies[i] == (i % 2 == 0 ? numbered(kFileBytes, 3) : numbered(kBodyBytes, 7)))
        << "answer " << i << ": " << bodies[i].size() << " bytes";
  }
  for (std::size_t i = 0; i < kRanges; ++i) {
    EXPECT_TRUE(bodies[16 + i] == numbered(kFileBytes, 3).substr(1001 * i, 200'001 + 6 * i))
        << "range " << i << ": " << bodies[16 + i].size() << " bytes";
  }
  EXPECT_EQ(session.open_connections(), 1u);
  co_await session.close();
  server.close();
}

Coro<Response> hello(Request&) { co_return Response::text("Hello, World!"); }

// An answer's HEADERS and DATA frames go to TLS together, as one record
// (one AEAD, one send), as nginx's do: apart, each record costs its
// encryption and the socket a write (bench/http2/README.md, 2026-12-06).
// The first answer comes with the connection's setup (SETTINGS and their
// acknowledgements); the second is counted alone.
Coro<void> one_record_body() {
  ServerOptions so = quiet();
  so.ssl = corio_net_test::test_server();
  Server server(so);
  server.get("/hello", hello);
  co_await server.start("127.0.0.1", 0);
  corio_net_test::RecordCount count;
  client::ClientOptions o;
  o.ssl = corio_net_test::counting_client(count);
  client::ClientSession session(o);
  const std::string url = "https://localhost:" + std::to_string(server.port()) + "/hello";
  const std::string first = co_await fetch(session, url);
  const std::size_t before = count.application_data;
  const std::string second = co_await fetch(session, url);
  EXPECT_EQ(first, "Hello, World!");
  EXPECT_EQ(second, "Hello, World!");
  EXPECT_EQ(count.application_data - before, 1u);
  co_await session.close();
  server.close();
}

TEST(ServerH2Tls, AnAnswerLeavesInOneRecord) { run_bounded(one_record_body(), 10s); }

TEST(ServerH2Tls, ManyStreamsLargeAnswersArriveWhole) {
  TempDir dir;
  run_bounded(large_answers_body(&dir), 30s);
}

}  // namespace
}  // namespace corio_http_test
