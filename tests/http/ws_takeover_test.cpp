// Request::take_connection under its two users besides WebSocket: an
// Upgrade to a made-up protocol whose first bytes came with the request,
// and a CONNECT tunnel opened with open_tunnel; the WebSocket sender's
// backpressure against a peer that never reads; and the Request a handler
// keeps reading after the switch.
#include <corio/http/tunnel.hpp>

#include "http/client_support.hpp"
#include "http/ws_support.hpp"

namespace corio_ws_test {
namespace {

using corio_http_test::run_bounded;

// "Upgrade: shout": every byte after the head comes back upper-cased.
Coro<Response> shout(Request& req) {
  EXPECT_TRUE(req.is_upgrade());
  Response answer(101);
  answer.headers.add("Upgrade", "shout");
  answer.headers.add("Connection", "Upgrade");
  auto [reader, writer] = co_await req.take_connection(std::move(answer));
  for (;;) {
    std::string piece = co_await reader.read(1024);
    if (piece.empty()) break;
    for (char& ch : piece) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    writer.write(piece);
  }
  writer.close();
  co_return Response::text("never sent");
}

Coro<void> upgrade_body() {
  Server server(quiet());
  server.get("/shout", shout);
  co_await server.start("127.0.0.1", 0);
  RawClient c = co_await corio_http_test::connect(server.port());
  // The new protocol's first bytes in the same write as the request.
  c.writer.write("GET /shout HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: shout\r\n\r\nhello");
  const corio_http_test::Reply reply = co_await corio_http_test::read_reply(c.reader);
  EXPECT_EQ(reply.status, 101);
  EXPECT_EQ(reply.headers.get_or("Connection", ""), "Upgrade");
  EXPECT_FALSE(reply.headers.contains("Content-Length"));
  EXPECT_FALSE(reply.headers.contains("Transfer-Encoding"));
  EXPECT_EQ(co_await c.reader.readexactly(5), "HELLO");
  c.writer.write(" world");
  EXPECT_EQ(co_await c.reader.readexactly(6), " WORLD");
  c.writer.write_eof();
  EXPECT_EQ(co_await c.reader.read(), "") << "the server sends nothing of its own after the switch";
  server.close();
}

TEST(TakeConnection, UpgradeKeepsTheBytesThatCameWithTheRequest) { run_bounded(upgrade_body()); }

Coro<void> client_upgrade_body() {
  Server server(quiet());
  server.get("/shout", shout);
  server.get("/hello", corio_http_test::hello);
  co_await server.start("127.0.0.1", 0);
  ClientSession session;
  corio::http::RequestOptions opts;
  opts.headers.set("Connection", "Upgrade");
  opts.headers.set("Upgrade", "shout");
  const std::string base = "http://127.0.0.1:" + std::to_string(server.port());
  corio::http::UpgradedConnection up = co_await session.upgrade(base + "/shout", opts);
  EXPECT_EQ(up.head.status, 101);
  EXPECT_EQ(up.head.headers.get_or("Upgrade", ""), "shout");
  up.writer.write("quiet words");
  EXPECT_EQ(co_await up.reader.readexactly(11), "QUIET WORDS");
  up.writer.close();
  int status = 0;
  try {
    (void)co_await session.upgrade(base + "/hello", opts);
  } catch (const corio::http::ClientResponseError& e) {
    status = e.status();
  }
  EXPECT_EQ(status, 200) << "a server that does not switch";
  co_await session.close();
  server.close();
}

TEST(TakeConnection, ClientUpgradeTakesTheConnectionAfterA101) { run_bounded(client_upgrade_body()); }

// A CONNECT proxy for one target: a tunnel to the echo server at echo_port.
Coro<void> pump(corio::StreamReader from, corio::StreamWriter to) {
  for (;;) {
    std::string piece = co_await from.read(65536);
    if (piece.empty()) break;
    to.write(piece);
    co_await to.drain();
  }
  to.write_eof();
}

Coro<Response> proxy(Request& req, std::uint16_t echo_port) {
  if (req.headers().get_or("Proxy-Authorization", "") != "Basic dGVzdDp0ZXN0") {
    co_return Response::text("who are you", 407);
  }
  auto [up_reader, up_writer] = co_await corio::open_connection("127.0.0.1", echo_port);
  auto [reader, writer] = co_await req.take_connection(Response(200));
  co_await corio::gather(pump(reader, up_writer), pump(up_reader, writer));
  writer.close();
  co_return Response{};
}

Coro<void> echo_peer(corio::StreamReader reader, corio::StreamWriter writer) {
  co_await pump(std::move(reader), std::move(writer));
}

Coro<void> tunnel_body() {
  corio::Server echo_server = co_await corio::start_server(echo_peer, "127.0.0.1", 0);
  const std::uint16_t echo_port = echo_server.port();
  Server server(quiet());
  server.route("CONNECT", "/{authority}", [&](Request& r) { return proxy(r, echo_port); });
  co_await server.start("127.0.0.1", 0);
  const corio::http::Url proxy_url =
      corio::http::Url::parse("http://127.0.0.1:" + std::to_string(server.port()));
  corio::http::TunnelOptions opts;
  opts.headers.set("Proxy-Authorization", "Basic dGVzdDp0ZXN0");
  auto [reader, writer] = co_await corio::http::open_tunnel(proxy_url, "127.0.0.1", echo_port, opts);
  writer.write("through the tunnel");
  EXPECT_EQ(co_await reader.readexactly(18), "through the tunnel");
  writer.close();

  int status = 0;
  try {
    (void)co_await corio::http::open_tunnel(proxy_url, "127.0.0.1", echo_port);
  } catch (const corio::http::ClientHttpProxyError& e) {
    status = e.status();
  }
  EXPECT_EQ(status, 407);
  server.close();
  echo_server.close();
}

TEST(TakeConnection, ConnectTunnelThroughOpenTunnel) { run_bounded(tunnel_body()); }

// TLS end to end through the tunnel: the proxy sees only ciphertext.
Coro<void> tls_tunnel_body(const corio_http_test::TempDir* dir) {
  corio::ServerOptions tls_opts;
  tls_opts.ssl = corio::SslContext::server((dir->path() / "server.pem").string(),
                                           (dir->path() / "server.key").string());
  corio::Server echo_server = co_await corio::start_server(echo_peer, "127.0.0.1", 0, tls_opts);
  const std::uint16_t echo_port = echo_server.port();
  Server server(quiet());
  server.route("CONNECT", "/{authority}", [&](Request& r) { return proxy(r, echo_port); });
  co_await server.start("127.0.0.1", 0);
  corio::http::TunnelOptions opts;
  opts.headers.set("Proxy-Authorization", "Basic dGVzdDp0ZXN0");
  opts.ssl = corio::SslContext::client();
  opts.ssl->load_verify_locations((dir->path() / "ca.pem").string());
  auto [reader, writer] = co_await corio::http::open_tunnel(
      corio::http::Url::parse("http://127.0.0.1:" + std::to_string(server.port())), "127.0.0.1", echo_port,
      opts);
  EXPECT_EQ(writer.get_extra_info("ssl_version").substr(0, 4), "TLSv");
  const std::string big(200000, 'z');  // more than the inner writer's high-water mark
  writer.write(big);
  EXPECT_EQ(co_await reader.readexactly(big.size()), big);
  writer.close();
  co_await writer.wait_closed();
  server.close();
  echo_server.close();
}

TEST(TakeConnection, TlsThroughTheTunnel) {
  corio_http_test::TempDir dir;
  if (!corio_http_test::make_certificates(dir.path())) GTEST_SKIP() << "the openssl tool is missing";
  run_bounded(tls_tunnel_body(&dir));
}

// Sends 256 KiB messages to a peer that never reads, counting them.
Coro<Response> flood(Request& req, int& sent) {
  WebSocket ws = co_await WebSocketResponse::prepare(req);
  const std::string big(256 * 1024, 'x');
  try {
    for (sent = 0; sent < 4000; ++sent) co_await ws.send_bytes(big);
  } catch (const std::system_error&) {
    // The test went away.
  }
  co_return Response{};
}

Coro<void> backpressure_body() {
  int sent = 0;
  Server server(quiet());
  server.get("/ws", [&](Request& r) { return flood(r, sent); });
  co_await server.start("127.0.0.1", 0);
  RawClient c = co_await raw_ws(server.port());
  co_await corio::sleep(500ms);  // long enough to send 1 GB if nothing held the sender back
  // What the kernel's socket buffers and the writer's high-water mark hold: some MiB.
  EXPECT_LT(sent, 100) << "the sender ran ahead of a peer that reads nothing";
  EXPECT_GT(sent, 0);
  c.writer.abort();
  server.close();
}

TEST(WebSocketPeer, SlowPeerSuspendsTheSender) { run_bounded(backpressure_body()); }

// Answers the first message with what the handler's Request says then.
Coro<Response> describe(Request& req) {
  WebSocket ws = co_await WebSocketResponse::prepare(req);
  const std::optional<WsMessage> go = co_await ws.receive();
  EXPECT_TRUE(go.has_value());
  const std::optional<std::string_view> seat = req.query().get("seat");
  co_await ws.send_str(req.method() + " " + req.path() + " " + std::string(req.param("room")) + " " +
                       std::string(seat.value_or("-")) + " " +
                       std::string(req.headers().get_or("X-Token", "-")));
  co_await ws.close();
  co_return Response{};
}

// After the switch the request state goes back to the server (lifetime rule
// 5 in src/http/server/server_connection.hpp) and the handler keeps the head
// alone: still its own when another request has reused the state meanwhile.
Coro<void> request_after_prepare_body() {
  Server server(quiet());
  server.get("/rooms/{room}", describe);
  server.get("/hello", corio_http_test::hello);
  co_await server.start("127.0.0.1", 0);
  const std::string base = "127.0.0.1:" + std::to_string(server.port());
  ClientSession session;
  WsOptions opts;
  opts.headers.set("X-Token", "a token longer than a short string's buffer");
  WebSocket ws = co_await session.ws_connect("ws://" + base + "/rooms/blue?seat=7", opts);
  corio::http::RequestOptions other;
  other.headers.set("X-Token", "another request's token, as long or longer");
  corio::http::ClientResponse hello = co_await session.get("http://" + base + "/hello", other);
  EXPECT_EQ(co_await hello.text(), "Hello, World!");
  co_await ws.send_str("go");
  const std::optional<WsMessage> seen = co_await ws.receive();
  EXPECT_TRUE(seen.has_value());
  EXPECT_EQ(seen.value_or(WsMessage{}).data, "GET /rooms/blue blue 7 a token longer than a short string's buffer");
  co_await ws.close();
  co_await session.close();
  server.close();
}

TEST(TakeConnection, TheHandlersRequestStaysReadableAfterTheSwitch) {
  run_bounded(request_after_prepare_body());
}

}  // namespace
}  // namespace corio_ws_test
