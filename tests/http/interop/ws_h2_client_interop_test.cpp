// corio's WebSocket client over HTTP/2 (RFC 8441) against another
// implementation: python3-h2 as the server (peers/ws_h2_server.py), which
// speaks the WebSocket frames itself: echoes past both windows, pongs for
// the heartbeat's pings, the close handshake either way, a stream it
// resets, a refusal, and the fallbacks to HTTP/1.1's Upgrade (no
// SETTINGS_ENABLE_CONNECT_PROTOCOL; ALPN choosing http/1.1 on wss). Part of
// the interop suite (label interop).
#include <corio/sleep.hpp>
#include <corio/task.hpp>

#include "http/client_support.hpp"
#include "http/ws_support.hpp"
#include "net/tls_support.hpp"

namespace corio_ws_test {
namespace {

using corio::http::ClientOptions;
using corio::http::ClientResponse;
using corio_http_test::PeerProcess;
using corio_http_test::run_bounded;

// The peer with these arguments; port 0 when it cannot start (no python3-h2).
struct Peer {
  explicit Peer(std::vector<std::string> args = {}) : process(command(std::move(args))) {}
  static std::vector<std::string> command(std::vector<std::string> args) {
    args.insert(args.begin(), {corio_http_test::python(), "-u",
                               (corio_http_test::peers_dir() / "ws_h2_server.py").string()});
    return args;
  }
  std::string url(std::string_view path, std::string_view scheme = "ws") const {
    return std::string(scheme) + "://127.0.0.1:" + std::to_string(port) + std::string(path);
  }
  PeerProcess process;
  std::uint16_t port = process.read_port();
};

Coro<std::string> next_text(WebSocket& ws) {
  const std::optional<WsMessage> m = co_await ws.receive();
  co_return m ? m->data : "(closed " + std::to_string(ws.close_code().value_or(0)) + ")";
}

// The peer's GET /hello on the session's h2 connection.
Coro<void> expect_hello(ClientSession& session, const Peer& peer) {
  ClientResponse r = co_await session.get(peer.url("/hello", "http"));
  EXPECT_EQ(r.version(), (corio::http::HttpVersion{2, 0}));
  EXPECT_EQ(co_await r.text(), "hello");
}

// The test's body against peer, or the test skipped without python3-h2.
void against(const Peer& peer, Coro<void> body) {
  if (peer.port == 0) GTEST_SKIP() << "python3-h2 unavailable";
  run_bounded(std::move(body), 60s);
}

Coro<void> echo_body(const Peer& peer) {
  ClientSession session(h2c());
  WsOptions opts = over_h2();
  opts.protocols = {"chat"};
  opts.heartbeat = 1s;
  WebSocket ws = co_await session.ws_connect(peer.url("/version"), std::move(opts));
  EXPECT_EQ(co_await next_text(ws), "h2");
  EXPECT_EQ(ws.protocol(), "chat");
  EXPECT_EQ(co_await expect_echoes(ws), 5u);  // 1 MiB and 300 kB past both windows
  // Quiet past two heartbeats, a receive() waiting (it reads the pongs):
  // the peer's pongs keep the WebSocket open.
  corio::Task<std::optional<WsMessage>> receiving = corio::create_task(ws.receive());
  co_await corio::sleep(2500ms);
  co_await ws.send_str("still there");
  const std::optional<WsMessage> back = co_await receiving;
  EXPECT_EQ(back ? back->data : "", "still there");
  co_await ws.close();
  EXPECT_EQ(ws.close_code(), 1000);
  co_await expect_hello(session, peer);
  EXPECT_EQ(session.open_connections(), 1u);
  co_await session.close();
}

TEST(WsH2ClientInterop, EchoLargeHeartbeatAndClientClose) {
  const Peer peer;
  against(peer, echo_body(peer));
}

// The server closes (4000 "bye"): the client answers, and the stream
// ends both ways with the connection still serving.
Coro<void> server_close_body(const Peer& peer) {
  ClientSession session(h2c());
  WebSocket ws = co_await session.ws_connect(peer.url("/close"), over_h2());
  EXPECT_FALSE(co_await ws.receive());
  EXPECT_EQ(ws.close_code(), 4000);
  EXPECT_EQ(ws.close_reason(), "bye");
  co_await expect_hello(session, peer);
  co_await session.close();
}

TEST(WsH2ClientInterop, ServerCloses) {
  const Peer peer;
  against(peer, server_close_body(peer));
}

// RST_STREAM(CANCEL) after the first message: 1006 for that WebSocket, and
// a GET on the same connection after it.
Coro<void> reset_body(const Peer& peer) {
  ClientSession session(h2c());
  WebSocket ws = co_await session.ws_connect(peer.url("/reset"), over_h2());
  co_await ws.send_str("the last one");
  EXPECT_FALSE(co_await ws.receive());
  EXPECT_EQ(ws.close_code(), 1006);
  co_await expect_hello(session, peer);
  EXPECT_EQ(session.open_connections(), 1u);
  co_await session.close();
}

TEST(WsH2ClientInterop, ServerResetIs1006AndTheConnectionLives) {
  const Peer peer;
  against(peer, reset_body(peer));
}

Coro<void> refused_body(const Peer& peer) {
  ClientSession session(h2c());
  int status = 0;
  try {
    WebSocket ws = co_await session.ws_connect(peer.url("/refuse"), over_h2());
  } catch (const corio::http::WSServerHandshakeError& e) {
    status = e.status();
  }
  EXPECT_EQ(status, 403);
  co_await expect_hello(session, peer);
  co_await session.close();
}

TEST(WsH2ClientInterop, RefusalIsAHandshakeError) {
  const Peer peer;
  against(peer, refused_body(peer));
}

// Without the setting the client does not try an extended CONNECT: it
// goes by HTTP/1.1's Upgrade, on a connection of its own.
Coro<void> no_setting_body(const Peer& peer) {
  ClientSession session(h2c());
  WebSocket ws = co_await session.ws_connect(peer.url("/version"), over_h2());
  EXPECT_EQ(co_await next_text(ws), "http/1.1");
  co_await ws.send_str("over h1");
  EXPECT_EQ(co_await next_text(ws), "over h1");
  co_await ws.close();
  EXPECT_EQ(ws.close_code(), 1000);
  co_await session.close();
}

TEST(WsH2ClientInterop, FallsBackWithoutTheSetting) {
  const Peer peer({"--no-connect"});
  against(peer, no_setting_body(peer));
}

// wss://: over h2 where ALPN chose it, else HTTP/1.1's Upgrade.
Coro<void> tls_body(const Peer& peer, std::string version) {
  ClientOptions o;
  o.ssl = corio_net_test::trusting_client();
  ClientSession session(o);
  WebSocket ws = co_await session.ws_connect(peer.url("/version", "wss"), over_h2());
  EXPECT_EQ(co_await next_text(ws), version);
  co_await ws.send_str("over tls");
  EXPECT_EQ(co_await next_text(ws), "over tls");
  co_await ws.close();
  EXPECT_EQ(ws.close_code(), 1000);
  co_await session.close();
}

Peer tls_peer(std::string alpn) {
  const corio_net_test::Pki& pki = corio_net_test::pki();
  return Peer({"--tls", pki.server_cert, pki.server_key, std::move(alpn)});
}

TEST(WsH2ClientInterop, WssOverH2ByAlpn) {
  const Peer peer = tls_peer("h2,http/1.1");
  against(peer, tls_body(peer, "h2"));
}

TEST(WsH2ClientInterop, WssFallsBackWhenAlpnChoosesHttp11) {
  const Peer peer = tls_peer("http/1.1");
  against(peer, tls_body(peer, "http/1.1"));
}

}  // namespace
}  // namespace corio_ws_test
