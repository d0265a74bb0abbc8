// The server's HTTP/2 entry, without outside peers (those are in
// interop/h2_interop_test.cpp): which connections become h2, and what a
// handler sees of the version.
#include "http/server_support.hpp"

namespace corio_http_test {
namespace {

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

}  // namespace
}  // namespace corio_http_test
