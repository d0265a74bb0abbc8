// The server's HTTP/2 entry, without outside peers (those are in
// interop/h2_interop_test.cpp): which connections become h2, and what a
// handler sees of the version.
#include "http/server_support.hpp"

namespace corio_http_test {
namespace {

constexpr std::string_view kPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
constexpr std::string_view kEmptySettings{"\0\0\0\x04\0\0\0\0\0", 9};

Coro<Response> version(Request& req) {
  co_return Response::text(std::to_string(req.version().major) + "." +
                           std::to_string(req.version().minor));
}

Coro<void> h1_version_body() {
  Server server(quiet());
  server.get("/v", version);
  co_await server.start("127.0.0.1", 0);
  const Reply r11 = co_await exchange(server.port(), "GET /v HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_EQ(r11.body, "1.1");
  const Reply r10 = co_await exchange(server.port(), "GET /v HTTP/1.0\r\n\r\n");
  EXPECT_EQ(r10.body, "1.0");
  server.close();
}

TEST(ServerH2, Http1RequestsSayTheirVersion) { run_bounded(h1_version_body(), 10s); }

// The server's first frame after a client preface is its SETTINGS.
Coro<void> preface_body() {
  Server server(quiet());
  co_await server.start("127.0.0.1", 0);
  RawClient c = co_await connect(server.port());
  c.writer.write(std::string(kPreface) + std::string(kEmptySettings));
  while (c.reader.buffered().size() < 9) {
    CO_ASSERT(co_await c.reader.fill_buffer() > 0);
  }
  EXPECT_EQ(c.reader.buffered()[3], '\x04');  // SETTINGS
  EXPECT_EQ(c.reader.buffered()[4], '\x00');  // not an ACK
  c.writer.close();
  server.close();
}

TEST(ServerH2, ClientPrefaceStartsHttp2) { run_bounded(preface_body(), 10s); }

// With http2 off the preface is what it always was: a request line of an
// unsupported version.
Coro<void> off_body() {
  ServerOptions opts = quiet();
  opts.http2 = false;
  Server server(opts);
  co_await server.start("127.0.0.1", 0);
  const Reply r = co_await exchange(server.port(), std::string(kPreface));
  EXPECT_EQ(r.status, 505);
  server.close();
}

TEST(ServerH2, PrefaceWithHttp2OffIs505) { run_bounded(off_body(), 10s); }

// Only a connection's first request may be a preface.
Coro<void> second_body() {
  Server server(quiet());
  server.get("/v", version);
  co_await server.start("127.0.0.1", 0);
  RawClient c = co_await connect(server.port());
  c.writer.write("GET /v HTTP/1.1\r\nHost: h\r\n\r\n" + std::string(kPreface));
  EXPECT_EQ((co_await read_reply(c.reader)).body, "1.1");
  EXPECT_EQ((co_await read_reply(c.reader)).status, 505);
  c.writer.close();
  server.close();
}

TEST(ServerH2, PrefaceAfterAnHttp1RequestIs505) { run_bounded(second_body(), 10s); }

}  // namespace
}  // namespace corio_http_test
