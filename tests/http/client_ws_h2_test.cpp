// ClientSession::ws_connect over HTTP/2 (RFC 8441) against corio's own
// server: the extended CONNECT on a stream of the session's pooled h2c
// connection, echoes past both windows, the close handshake either way, a
// server's reset, many WebSockets beside a GET, the fallback to HTTP/1.1's
// Upgrade, and cancellation. No peer process, so the sanitizer passes run
// these.
#include <corio/gather.hpp>
#include <corio/sleep.hpp>
#include <corio/task.hpp>
#include <corio/testing/virtual_clock.hpp>
#include <corio/timeout.hpp>

#include "http/h2_frames.hpp"
#include "http/ws/ws_handshake.hpp"
#include "http/ws_support.hpp"
#include "net/net_support.hpp"  // run_bounded

namespace corio_ws_test {
namespace {

namespace h2 = corio_http_test::h2;
using corio::http::ClientResponse;
using corio::http::HttpVersion;
using corio_net_test::run_bounded;

std::string url(const Server& s, std::string_view path) {
  return "http://127.0.0.1:" + std::to_string(s.port()) + std::string(path);
}

// What the server's handlers saw besides the echo's Seen.
struct Handlers {
  int major = 0;  // the last WebSocket request's HTTP version
  corio::Event entered;  // /hold's handler runs
  corio::Event hold;     // never set: /hold waits on it
  bool send_failed = false;  // /flood's writes ended in an error
  corio::Event flooded;
};

Coro<Response> versioned(Request& req, Handlers& h, Seen& seen) {
  h.major = req.version().major;
  return echo(req, WsOptions{}, seen);
}

Coro<Response> hello(Request&) { co_return Response::text("hello"); }

Coro<Response> hold(Request&, Handlers& h) {
  h.entered.set();
  co_await h.hold.wait();
  co_return Response{};
}

// Sends until its writes fail: the client reads nothing, its window shuts,
// and past send_timeout the server resets the stream.
Coro<Response> flood(Request& req, Handlers& h) {
  WebSocket ws = co_await WebSocketResponse::prepare(req);
  try {
    for (int i = 0; i < 16; ++i) co_await ws.send_bytes(noise(1 << 20));
  } catch (const std::exception&) {
    h.send_failed = true;
  }
  h.flooded.set();
  co_return Response{};
}

// The echo at /ws, /hello, /hold and /flood on one h2c server.
struct H2Server {
  explicit H2Server(ServerOptions so = quiet()) : server(std::move(so)) {
    server.get("/ws", [this](Request& r) { return versioned(r, h, seen); });
    server.get("/hello", hello);
    server.get("/hold", [this](Request& r) { return hold(r, h); });
    server.get("/flood", [this](Request& r) { return flood(r, h); });
  }
  Handlers h;
  Seen seen;
  Server server;
};

Coro<void> finish(ClientSession& session, Server& server) {
  co_await session.close();
  co_await server.shutdown(1s);
}

Coro<std::string> fetch_text(ClientSession& session, std::string u) {
  ClientResponse r = co_await session.get(std::move(u));
  EXPECT_EQ(r.version(), (HttpVersion{2, 0}));
  co_return co_await r.text();
}

Coro<void> echo_body() {
  H2Server s;
  co_await s.server.start("127.0.0.1", 0);
  ClientSession session(h2c());
  WebSocket ws = co_await session.ws_connect(url(s.server, "/ws"), over_h2());
  EXPECT_EQ(s.h.major, 2);
  co_await ws.send_str("over h2");
  const std::optional<WsMessage> text = co_await ws.receive();
  EXPECT_EQ(text->data, "over h2");
  co_await ws.ping("p1");
  EXPECT_EQ(co_await expect_echoes(ws), 5u);  // 1 MiB and 300 kB past both windows
  EXPECT_EQ(session.open_connections(), 1u);
  co_await ws.close();
  EXPECT_EQ(ws.close_code(), 1000);
  co_await s.seen.done.wait();
  EXPECT_EQ(s.seen.close_code, 1000);
  // The stream ended both ways: the connection serves on.
  EXPECT_EQ(co_await fetch_text(session, url(s.server, "/hello")), "hello");
  co_await finish(session, s.server);
}

TEST(ClientWsH2, EchoPingLargeAndClientClose) { run_bounded(echo_body(), 60s); }

// The server closes: the client answers, and its stream ends cleanly.
Coro<Response> closing(Request& req) {
  WebSocket ws = co_await WebSocketResponse::prepare(req);
  co_await ws.close(4000, "bye");
  co_return Response{};
}

Coro<void> server_close_body() {
  Server server(quiet());
  server.get("/close", closing);
  server.get("/hello", hello);
  co_await server.start("127.0.0.1", 0);
  ClientSession session(h2c());
  WebSocket ws = co_await session.ws_connect(url(server, "/close"), over_h2());
  EXPECT_FALSE(co_await ws.receive());
  EXPECT_EQ(ws.close_code(), 4000);
  EXPECT_EQ(ws.close_reason(), "bye");
  EXPECT_EQ(co_await fetch_text(session, url(server, "/hello")), "hello");
  co_await finish(session, server);
}

TEST(ClientWsH2, ServerCloses) { run_bounded(server_close_body(), 60s); }

// The server resets the stream (its writes stalled past send_timeout): the
// client's WebSocket ends abnormally (1006), the connection's other
// streams live on.
Coro<void> reset_body() {
  ServerOptions so = quiet();
  so.send_timeout = 200ms;
  H2Server s(std::move(so));
  co_await s.server.start("127.0.0.1", 0);
  ClientSession session(h2c());
  WebSocket ws = co_await session.ws_connect(url(s.server, "/flood"), over_h2());
  co_await s.h.flooded.wait();
  EXPECT_TRUE(s.h.send_failed);
  while (co_await ws.receive()) {
  }
  EXPECT_EQ(ws.close_code(), 1006);
  EXPECT_EQ(co_await fetch_text(session, url(s.server, "/hello")), "hello");
  EXPECT_EQ(session.open_connections(), 1u);
  co_await finish(session, s.server);
}

TEST(ClientWsH2, ServerResetIs1006AndTheConnectionLives) { run_bounded(reset_body(), 60s); }

Coro<void> echo_once(WebSocket& ws, std::string text) {
  co_await ws.send_str(text);
  const std::optional<WsMessage> back = co_await ws.receive();
  EXPECT_EQ(back ? back->data : "", text);
}

Coro<void> many_body() {
  H2Server s;
  co_await s.server.start("127.0.0.1", 0);
  ClientSession session(h2c());
  std::vector<WebSocket> all;
  for (int i = 0; i < 8; ++i) all.push_back(co_await session.ws_connect(url(s.server, "/ws"), over_h2()));
  std::vector<Coro<void>> echoes;
  for (std::size_t i = 0; i < all.size(); ++i) echoes.push_back(echo_once(all[i], "ws " + std::to_string(i)));
  co_await corio::gather(std::move(echoes));
  EXPECT_EQ(co_await fetch_text(session, url(s.server, "/hello")), "hello");
  EXPECT_EQ(session.open_connections(), 1u);
  for (WebSocket& ws : all) co_await ws.close();
  co_await finish(session, s.server);
}

TEST(ClientWsH2, EightWebSocketsAndAGetOnOneConnection) { run_bounded(many_body(), 60s); }

// Unset http2: HTTP/1.1 until the session holds an h2 connection to the
// origin, then over it.
Coro<void> default_body() {
  H2Server s;
  co_await s.server.start("127.0.0.1", 0);
  ClientSession session(h2c());
  WebSocket first = co_await session.ws_connect(url(s.server, "/ws"));
  EXPECT_EQ(s.h.major, 1);
  EXPECT_EQ(co_await fetch_text(session, url(s.server, "/hello")), "hello");
  WebSocket second = co_await session.ws_connect(url(s.server, "/ws"));
  EXPECT_EQ(s.h.major, 2);
  co_await echo_once(second, "second");
  co_await first.close();
  co_await second.close();
  co_await finish(session, s.server);
}

TEST(ClientWsH2, DefaultGoesOverAnOpenH2Connection) { run_bounded(default_body(), 60s); }

// A refused extended CONNECT is the same error as a refused Upgrade.
Coro<void> refused_body() {
  H2Server s;
  co_await s.server.start("127.0.0.1", 0);
  ClientSession session(h2c());
  int status = 0;
  try {
    WebSocket ws = co_await session.ws_connect(url(s.server, "/nowhere"), over_h2());
  } catch (const corio::http::WSServerHandshakeError& e) {
    status = e.status();
  }
  EXPECT_EQ(status, 404);
  EXPECT_EQ(co_await fetch_text(session, url(s.server, "/hello")), "hello");
  co_await finish(session, s.server);
}

TEST(ClientWsH2, RefusedIsAHandshakeError) { run_bounded(refused_body(), 60s); }

// A server whose first connection speaks h2 without
// SETTINGS_ENABLE_CONNECT_PROTOCOL, and whose next one takes an HTTP/1.1
// Upgrade by hand.
struct NoConnectState {
  int connections = 0;
  std::string upgrade;  // the HTTP/1.1 request's head
};

Coro<void> serve_no_connect(corio::StreamReader r, corio::StreamWriter w,
                            std::shared_ptr<NoConnectState> st) {
  if (st->connections++ == 0) {
    w.write(h2::settings());
    try {
      co_await r.readexactly(h2::kPreface.size());
      for (bool more = true; more;) {
        const std::optional<h2::Frame> f = co_await h2::read_frame(r);
        more = f.has_value();
      }
    } catch (const std::exception&) {
      // The client went.
    }
    co_return;
  }
  st->upgrade = co_await r.readuntil("\r\n\r\n");
  const std::size_t at = st->upgrade.find("Sec-WebSocket-Key: ") + 19;
  const std::string key = st->upgrade.substr(at, st->upgrade.find("\r\n", at) - at);
  w.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
          "Sec-WebSocket-Accept: " + corio::http::detail::ws_accept(key) + "\r\n\r\n");
  co_await w.drain();
  try {
    co_await r.read();
  } catch (const std::exception&) {
  }
}

Coro<void> fallback_body() {
  auto st = std::make_shared<NoConnectState>();
  corio::ClientConnected handler = [st](corio::StreamReader r, corio::StreamWriter w) {
    return serve_no_connect(std::move(r), std::move(w), st);
  };
  corio::Server raw = co_await corio::start_server(std::move(handler), "127.0.0.1", 0);
  const std::uint16_t port = raw.port();
  ClientSession session(h2c());
  WebSocket ws = co_await session.ws_connect("ws://127.0.0.1:" + std::to_string(port) + "/ws", over_h2());
  EXPECT_EQ(st->connections, 2);
  EXPECT_EQ(st->upgrade.rfind("GET /ws HTTP/1.1\r\n", 0), 0u) << st->upgrade;
  co_await session.close();
  raw.close();
}

TEST(ClientWsH2, FallsBackWithoutTheSetting) { run_bounded(fallback_body(), 60s); }

// One stream at most on one connection: a stream a cancelled ws_connect,
// or a dropped WebSocket, left open would hold the GET back for good.
Coro<void> cancel_body() {
  ServerOptions so = quiet();
  so.max_concurrent_streams = 1;
  H2Server s(std::move(so));
  co_await s.server.start("127.0.0.1", 0);
  ClientSession session(h2c(1));
  EXPECT_EQ(co_await fetch_text(session, url(s.server, "/hello")), "hello");
  corio::Task<WebSocket> connecting = corio::create_task(session.ws_connect(url(s.server, "/hold"), over_h2()));
  co_await s.h.entered.wait();
  connecting.cancel();
  bool cancelled = false;
  try {
    (void)co_await connecting;
  } catch (const corio::CancelledError&) {
    cancelled = true;
  }
  EXPECT_TRUE(cancelled);
  EXPECT_EQ(co_await fetch_text(session, url(s.server, "/hello")), "hello");
  {
    WebSocket ws = co_await session.ws_connect(url(s.server, "/ws"), over_h2());
    corio::Task<std::optional<WsMessage>> receiving = corio::create_task(ws.receive());
    co_await corio::sleep(0ms);
    receiving.cancel();
    try {
      (void)co_await receiving;
    } catch (const corio::CancelledError&) {
    }
  }  // dropped unclosed: END_STREAM, the server's WebSocket ends, and so does the stream
  EXPECT_EQ(co_await fetch_text(session, url(s.server, "/hello")), "hello");
  EXPECT_EQ(session.open_connections(), 1u);
  co_await finish(session, s.server);
}

TEST(ClientWsH2, CancelledConnectAndReceiveLeaveNoStream) { run_bounded(cancel_body(), 60s); }

// A server that takes the extended CONNECT and never ends its side of the
// stream: when the client's END_STREAM and its RST_STREAM came (loop time).
struct NeverEnding {
  double ended_at = -1;
  double reset_at = -1;
  std::optional<std::uint32_t> reset;
  corio::Event done;  // the RST_STREAM came, or the connection ended
};

void on_frame(const h2::Frame& f, corio::StreamWriter& w, NeverEnding& st) {
  const double now = corio::get_running_loop().time();
  if (f.type == h2::kSettings && (f.flags & h2::kAck) == 0) {
    w.write(h2::frame(h2::kSettings, h2::kAck, 0, ""));
  }
  if (f.stream != 1) return;
  if (f.type == h2::kHeaders) {
    w.write(h2::frame(h2::kHeaders, h2::kEndHeaders, 1, "\x88"));  // :status 200
  }
  if (f.type == h2::kData && (f.flags & h2::kEndStream) != 0) st.ended_at = now;
  if (f.type == h2::kRst) {
    st.reset = f.u32(0);
    st.reset_at = now;
    st.done.set();
  }
}

Coro<void> serve_never_ending(corio::StreamReader r, corio::StreamWriter w,
                              std::shared_ptr<NeverEnding> st) {
  w.write(h2::settings({{NGHTTP2_SETTINGS_ENABLE_CONNECT_PROTOCOL, 1}}));
  try {
    co_await r.readexactly(h2::kPreface.size());
    for (;;) {
      const std::optional<h2::Frame> f = co_await h2::read_frame(r);
      if (!f) break;
      on_frame(*f, w, *st);
    }
  } catch (const std::exception&) {
    // The client went.
  }
  st->done.set();
}

// Virtual time: a WebSocket dropped sends END_STREAM, and its stream waits
// for the peer's own no longer than close_timeout, then resets (CANCEL);
// the connection stays.
Coro<void> linger_body() {
  Ticker ticker;
  auto st = std::make_shared<NeverEnding>();
  corio::ClientConnected handler = [st](corio::StreamReader r, corio::StreamWriter w) {
    return serve_never_ending(std::move(r), std::move(w), st);
  };
  corio::Server raw = co_await corio::start_server(std::move(handler), "127.0.0.1", 0);
  ClientSession session(h2c());
  WsOptions opts = over_h2();
  opts.close_timeout = 3s;
  {
    const std::string u = "ws://127.0.0.1:" + std::to_string(raw.port()) + "/ws";
    WebSocket ws = co_await session.ws_connect(u, std::move(opts));
  }
  const double dropped_at = corio::get_running_loop().time();
  try {
    co_await corio::wait_for(st->done.wait(), 60s);
  } catch (const corio::TimeoutError&) {
    ADD_FAILURE() << "the stream is still open a minute later";
  }
  EXPECT_EQ(st->reset, h2::kCancel);
  EXPECT_GE(st->ended_at, dropped_at) << "END_STREAM first";
  EXPECT_GE(st->reset_at - dropped_at, 3.0);
  EXPECT_LT(st->reset_at - dropped_at, 3.5);
  EXPECT_EQ(session.open_connections(), 1u);
  co_await session.close();
  raw.close();
  co_await ticker.stop();
}

TEST(ClientWsH2, AStreamThePeerNeverEndsLingersOnlyCloseTimeout) {
  auto clock = std::make_shared<corio::testing::VirtualClock>();
  corio::run(linger_body(), {.clock = clock});
}

}  // namespace
}  // namespace corio_ws_test
