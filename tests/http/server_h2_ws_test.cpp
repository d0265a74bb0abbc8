// WebSocket over HTTP/2 (RFC 8441) from a hand-built h2 peer (h2_frames.hpp):
// the extended CONNECT, then WebSocket frames in the stream's DATA frames,
// against the HTTP/1.1 tests' echo handler (ws_support.hpp), unchanged. No
// peer process, so the sanitizer passes run these; the interop suite
// (interop/ws_h2_interop_test.cpp) plays the same with python3-h2. Here:
// the lifetimes, a WebSocket that outlives its handler, and a connection
// or server that ends under a WebSocket.
#include <corio/testing/virtual_clock.hpp>

#include "http/h2_frames.hpp"
#include "http/ws_handlers_support.hpp"
#include "http/ws_support.hpp"

namespace corio_ws_test {
namespace {

namespace h2 = corio_http_test::h2;
using corio_http_test::run_bounded;

// CONNECT /ws with :protocol websocket (static table: :method 2, :path 4,
// :authority 1, :scheme http 6).
std::string connect_block(std::string_view path) {
  std::string b = h2::hpack_int(0x00, 4, 2) + h2::hpack_string("CONNECT");
  b += h2::literal(":protocol", "websocket");
  b += "\x86";
  b += h2::hpack_int(0x00, 4, 4) + h2::hpack_string(path);
  b += h2::hpack_int(0x00, 4, 1) + h2::hpack_string("h");
  b += h2::literal("sec-websocket-version", "13");
  return b;
}

// A peer with one WebSocket on stream 1: what came on it so far. Each
// co_await is a statement of its own: g++ 12 read uninitialised state for
// one inside a condition (`if (!co_await step())`; valgrind saw it).
struct Peer {
  explicit Peer(corio_http_test::RawClient client) : c(std::move(client)) {}
  corio_http_test::RawClient c;
  std::unique_ptr<h2::Inflater> inflater = std::make_unique<h2::Inflater>();  // movable
  corio_http_test::Headers head;
  std::string data;  // stream 1's DATA, not yet parsed
  bool ended = false;
  std::optional<std::uint32_t> reset;

  void send_ws(Opcode op, std::string_view payload, bool end_stream = false) {
    c.writer.write(h2::frame(h2::kData, end_stream ? h2::kEndStream : 0, 1, client_frame(op, payload)));
  }
  // Sends text, returns what came back.
  Coro<std::string> echo(std::string_view text) {
    send_ws(Opcode::text, text);
    const WsEvent ev = co_await next();
    co_return ev.data;
  }
  // Our close frame with `code` and END_STREAM; the server's close code.
  Coro<int> close_with(int code) {
    const char payload[2] = {static_cast<char>(code >> 8), static_cast<char>(code & 0xff)};
    send_ws(Opcode::close, std::string_view(payload, 2), true);
    const WsEvent ev = co_await next();
    co_return ev.code;
  }
  // Frames until stream 1's head came; false if the connection ended first.
  Coro<bool> read_head() {
    bool more = true;
    while (more && head.empty()) more = co_await step();
    co_return more;
  }
  // The next WebSocket frame on stream 1 (Kind::none once the stream or
  // the connection ended).
  Coro<WsEvent> next() {
    for (;;) {
      corio::http::detail::WsReaderConfig config;
      config.expect_masked = false;
      corio::http::detail::WsReader reader(std::move(config));
      WsEvent ev;
      if (const std::size_t n = reader.parse(data, ev); n > 0) {
        data.erase(0, n);
        co_return ev;
      }
      if (ended || reset) co_return WsEvent{};
      const bool more = co_await step();
      if (!more) co_return WsEvent{};
    }
  }
  // One frame of the server's; false at EOF.
  Coro<bool> step() {
    std::optional<h2::Frame> f = co_await h2::read_frame(c.reader);
    if (!f) co_return false;
    if (f->type == h2::kSettings && (f->flags & h2::kAck) == 0) {
      c.writer.write(h2::frame(h2::kSettings, h2::kAck, 0, ""));
    }
    if (f->type == h2::kHeaders) {
      corio_http_test::Headers fields = inflater->fields(*f);
      if (f->stream == 1) head = std::move(fields);
    }
    if (f->stream != 1) co_return true;
    if (f->type == h2::kData) {
      data += f->payload;
      // Our window opens as we read, as a client's does.
      if (!f->payload.empty()) {
        const auto n = static_cast<std::uint32_t>(f->payload.size());
        c.writer.write(h2::window_update(0, n) + h2::window_update(1, n));
      }
    }
    if ((f->type == h2::kData || f->type == h2::kHeaders) && (f->flags & h2::kEndStream) != 0) ended = true;
    if (f->type == h2::kRst) reset = f->u32(0);
    co_return true;
  }
};

Coro<std::unique_ptr<Peer>> open_ws(std::uint16_t port, std::string_view path = "/ws") {
  corio_http_test::RawClient c = co_await corio_http_test::connect(port);
  auto p = std::make_unique<Peer>(std::move(c));
  p->c.writer.write(h2::opening() + h2::frame(h2::kHeaders, h2::kEndHeaders, 1, connect_block(path)));
  const bool head = co_await p->read_head();
  EXPECT_TRUE(head);
  co_return p;
}

// es started, and a WebSocket open on its /ws.
Coro<std::unique_ptr<Peer>> started(EchoServer& es) {
  co_await es.server.start("127.0.0.1", 0);
  std::unique_ptr<Peer> p = co_await open_ws(es.server.port());
  co_return p;
}

Coro<void> echo_body() {
  EchoServer es{WsOptions{}};
  std::unique_ptr<Peer> p = co_await started(es);
  EXPECT_EQ(p->head.get_or(":status", ""), "200");
  EXPECT_FALSE(p->head.contains("sec-websocket-accept"));
  p->send_ws(Opcode::text, "over h2");
  const WsEvent echoed = co_await p->next();
  EXPECT_EQ(echoed.kind, WsEvent::Kind::text);
  EXPECT_EQ(echoed.data, "over h2");
  p->send_ws(Opcode::close, std::string("\x03\xe8", 2), true);  // 1000, and our END_STREAM
  const WsEvent closed = co_await p->next();
  EXPECT_EQ(closed.kind, WsEvent::Kind::close);
  EXPECT_EQ(closed.code, 1000);
  for (bool more = true; more && !p->ended && !p->reset;) more = co_await p->step();
  EXPECT_TRUE(p->ended) << "the server's END_STREAM, no reset";
  co_await es.seen.done.wait();
  EXPECT_EQ(es.seen.close_code, 1000);
  co_await es.server.shutdown(1s);
}

TEST(ServerH2WebSocket, EchoAndCloseHandshake) { run_bounded(echo_body(), 30s); }

// The peer's connection goes under a WebSocket: its stream goes with it,
// and the handler's task is cancelled, as every stream's is when its
// connection ends (h2_connection.hpp, rule 3), with nothing left pointing
// at the stream (the sanitizer passes check it).
Coro<Response> echo_until_end(Request& req, std::string* how, corio::Event* ended) {
  struct Ended {
    corio::Event* e;
    ~Ended() { e->set(); }
  } on_exit{ended};
  WebSocket ws = co_await WebSocketResponse::prepare(req);
  try {
    for (;;) {
      std::optional<WsMessage> msg = co_await ws.receive();
      if (!msg) break;
      co_await ws.send(*msg);
    }
    *how = std::to_string(ws.close_code().value_or(0));
  } catch (const corio::CancelledError&) {
    *how = "cancelled";
    throw;
  }
  co_return Response{};
}

Coro<void> lost_body() {
  std::string how;
  corio::Event ended;
  Server server(corio_http_test::quiet());
  server.get("/ws", [&](Request& req) { return echo_until_end(req, &how, &ended); });
  co_await server.start("127.0.0.1", 0);
  std::unique_ptr<Peer> p = co_await open_ws(server.port());
  const auto got = co_await p->echo("one");
  EXPECT_EQ(got, "one");
  p->c.writer.close();
  co_await ended.wait();
  EXPECT_EQ(how, "cancelled");
  co_await server.shutdown(1s);
}

TEST(ServerH2WebSocket, ConnectionLostUnderAWebSocket) { run_bounded(lost_body(), 30s); }

// A WebSocket moved out of its handler lives on its stream after the
// handler's task ended: its messages are still read, not discarded as an
// ended handler's body is.
Coro<void> echo_on(WebSocket ws, Seen* seen) {
  while (std::optional<WsMessage> msg = co_await ws.receive()) co_await ws.send(*msg);
  seen->close_code = ws.close_code();
  seen->done.set();
}

Coro<Response> detach(Request& req, std::vector<corio::Task<void>>* tasks, Seen* seen) {
  WebSocket ws = co_await WebSocketResponse::prepare(req);
  tasks->push_back(corio::create_task(echo_on(std::move(ws), seen)));
  co_return Response{};
}

Coro<void> outlives_body() {
  std::vector<corio::Task<void>> tasks;
  Seen seen;
  Server server(corio_http_test::quiet());
  server.get("/ws", [&](Request& req) { return detach(req, &tasks, &seen); });
  co_await server.start("127.0.0.1", 0);
  std::unique_ptr<Peer> p = co_await open_ws(server.port());
  for (const std::string text : {"after", "the", "handler"}) {
    const auto got_echo = co_await p->echo(text);
    EXPECT_EQ(got_echo, text);
  }
  const auto got_close_with = co_await p->close_with(1000);
  EXPECT_EQ(got_close_with, 1000);
  co_await seen.done.wait();
  EXPECT_EQ(seen.close_code, 1000);
  for (corio::Task<void>& t : tasks) co_await t;
  co_await server.shutdown(1s);
}

TEST(ServerH2WebSocket, AWebSocketOutlivesItsHandler) { run_bounded(outlives_body(), 30s); }

// Server::close() with a WebSocket open: the connection ends, its stream
// and the handler's task with it, and nothing is left behind (the sanitizer
// passes check the memory).
Coro<void> closed_body() {
  EchoServer es{WsOptions{}};
  std::unique_ptr<Peer> p = co_await started(es);
  const auto got_echo = co_await p->echo("one");
  EXPECT_EQ(got_echo, "one");
  es.server.close();
  for (bool more = true; more;) more = co_await p->step();
  EXPECT_FALSE(p->ended) << "no clean end: the connection went";
  co_await es.server.shutdown(1s);  // closed already: returns once all ended
}

TEST(ServerH2WebSocket, ServerCloseUnderAWebSocket) { run_bounded(closed_body(), 30s); }

// A handler set (Router::ws) serves h2 too: its connection cannot park
// (no socket of its own), so its task waits between messages.
Coro<void> handler_set_body() {
  Log log;
  Server server(corio_http_test::quiet());
  server.ws("/hs", echo_handlers(log));
  co_await server.start("127.0.0.1", 0);
  std::unique_ptr<Peer> p = co_await open_ws(server.port(), "/hs");
  EXPECT_EQ(p->head.get_or(":status", ""), "200");
  const auto got_echo = co_await p->echo("set");
  EXPECT_EQ(got_echo, "set");
  const auto got_close_with = co_await p->close_with(1000);
  EXPECT_EQ(got_close_with, 1000);
  co_await log.closed.wait();
  EXPECT_EQ(log.messages, std::vector<std::string>{"set"});
  co_await server.shutdown(1s);
}

TEST(ServerH2WebSocket, AHandlerSetServesH2) { run_bounded(handler_set_body(), 30s); }

// A graceful shutdown says goodbye to an h2 WebSocket as to an HTTP/1.1
// one: a close frame with 1001, and the peer's answer is awaited.
Coro<void> shutdown_body() {
  EchoServer es{WsOptions{}};
  std::unique_ptr<Peer> p = co_await started(es);
  corio::Task<void> shutdown = corio::create_task(es.server.shutdown(5s));
  const WsEvent bye = co_await p->next();
  EXPECT_EQ(bye.kind, WsEvent::Kind::close);
  EXPECT_EQ(bye.code, 1001);
  p->send_ws(Opcode::close, std::string("\x03\xe9", 2), true);  // 1001 back
  co_await shutdown;
  co_await es.seen.done.wait();
  EXPECT_EQ(es.seen.close_code, 1001);
}

TEST(ServerH2WebSocket, AGracefulShutdownSaysGoingAway) { run_bounded(shutdown_body(), 30s); }

// A request that is no extended CONNECT cannot be taken over, and a
// CONNECT for another protocol is no WebSocket handshake.
Coro<void> refused_body() {
  EchoServer es{WsOptions{}};
  co_await es.server.start("127.0.0.1", 0);
  corio_http_test::RawClient c = co_await corio_http_test::connect(es.server.port());
  c.writer.write(h2::opening() + h2::get(1, "/ws"));
  const h2::Answer a = co_await h2::read_answer(c.reader);
  EXPECT_EQ(a.fields.get_or(":status", ""), "400");
  co_await es.server.shutdown(1s);
}

TEST(ServerH2WebSocket, APlainGetIsNoHandshake) { run_bounded(refused_body(), 30s); }

// Virtual time: the handler's WebSocket closed (its close answered ours,
// then END_STREAM), and a peer that never ends its side of the stream: the
// stream is reset (CANCEL) lingering_time later, not at send_timeout (60 s).
Coro<void> linger_body() {
  Ticker ticker;
  ServerOptions so = corio_http_test::quiet();
  so.lingering_time = 3s;
  EchoServer es{WsOptions{}, std::move(so)};
  std::unique_ptr<Peer> p = co_await started(es);
  p->send_ws(Opcode::close, std::string("\x03\xe8", 2));  // 1000, our stream left open
  while (!p->ended && !p->reset) {
    const bool more = co_await p->step();
    if (!more) break;
  }
  EXPECT_TRUE(p->ended);
  const double ended_at = corio::get_running_loop().time();
  while (!p->reset) {
    const bool more = co_await p->step();
    if (!more) break;
  }
  EXPECT_EQ(p->reset, h2::kCancel);
  const double took = corio::get_running_loop().time() - ended_at;
  EXPECT_GT(took, 2.5);
  EXPECT_LT(took, 3.5) << "lingering_time, not send_timeout";
  EXPECT_EQ(es.seen.close_code, 1000);
  co_await es.server.shutdown(1s);
  co_await ticker.stop();
}

TEST(ServerH2WebSocket, AStreamThePeerNeverEndsLingersOnlyLingeringTime) {
  auto clock = std::make_shared<corio::testing::VirtualClock>();
  corio::run(linger_body(), {.clock = clock});
}

}  // namespace
}  // namespace corio_ws_test
