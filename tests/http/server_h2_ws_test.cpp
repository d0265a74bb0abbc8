// WebSocket over HTTP/2 (RFC 8441) from a hand-built h2 peer (h2_frames.hpp):
// the extended CONNECT, then WebSocket frames in the stream's DATA frames,
// against the HTTP/1.1 tests' echo handler (ws_support.hpp), unchanged. No
// peer process, so the sanitizer passes run these; the interop suite
// (interop/ws_h2_interop_test.cpp) plays the same with python3-h2. Here:
// the lifetimes, a WebSocket that outlives its handler, and a connection
// or server that ends under a WebSocket.
#include "http/h2_frames.hpp"
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

// A peer with one WebSocket on stream 1: what came on it so far.
struct Peer {
  corio_http_test::RawClient c;
  h2::Inflater inflater;
  corio_http_test::Headers head;
  std::string data;  // stream 1's DATA, not yet parsed
  bool ended = false;
  std::optional<std::uint32_t> reset;

  void send_ws(Opcode op, std::string_view payload, bool end_stream = false) {
    c.writer.write(h2::frame(h2::kData, end_stream ? h2::kEndStream : 0, 1, client_frame(op, payload)));
  }
  // Frames until stream 1's head came; false if the connection ended first.
  Coro<bool> read_head() {
    while (head.size() == 0) {
      if (!co_await step()) co_return false;
    }
    co_return true;
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
      if (ended || reset || !co_await step()) co_return WsEvent{};
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
      corio_http_test::Headers fields = inflater.fields(*f);
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

Coro<Peer> open_ws(std::uint16_t port, std::string_view path = "/ws") {
  Peer p{co_await corio_http_test::connect(port)};
  p.c.writer.write(h2::opening() + h2::frame(h2::kHeaders, h2::kEndHeaders, 1, connect_block(path)));
  EXPECT_TRUE(co_await p.read_head());
  co_return p;
}

Coro<void> echo_body() {
  EchoServer es{WsOptions{}};
  co_await es.server.start("127.0.0.1", 0);
  Peer p = co_await open_ws(es.server.port());
  EXPECT_EQ(p.head.get_or(":status", ""), "200");
  EXPECT_FALSE(p.head.contains("sec-websocket-accept"));
  p.send_ws(Opcode::text, "over h2");
  const WsEvent echoed = co_await p.next();
  EXPECT_EQ(echoed.kind, WsEvent::Kind::text);
  EXPECT_EQ(echoed.data, "over h2");
  p.send_ws(Opcode::close, std::string("\x03\xe8", 2), true);  // 1000, and our END_STREAM
  const WsEvent closed = co_await p.next();
  EXPECT_EQ(closed.kind, WsEvent::Kind::close);
  EXPECT_EQ(closed.code, 1000);
  while (!p.ended && !p.reset && co_await p.step()) {
  }
  EXPECT_TRUE(p.ended) << "the server's END_STREAM, no reset";
  co_await es.seen.done.wait();
  EXPECT_EQ(es.seen.close_code, 1000);
  co_await es.server.shutdown(1s);
}

TEST(ServerH2WebSocket, EchoAndCloseHandshake) { run_bounded(echo_body(), 30s); }

// The peer's connection goes under a WebSocket: its stream goes with it,
// and the handler's receive() ends (1006) with nothing left pointing at it.
Coro<void> lost_body() {
  EchoServer es{WsOptions{}};
  co_await es.server.start("127.0.0.1", 0);
  Peer p = co_await open_ws(es.server.port());
  p.send_ws(Opcode::text, "one");
  EXPECT_EQ((co_await p.next()).data, "one");
  p.c.writer.close();
  co_await es.seen.done.wait();
  EXPECT_EQ(es.seen.close_code, 1006);
  co_await es.server.shutdown(1s);
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
  Peer p = co_await open_ws(server.port());
  for (const std::string text : {"after", "the", "handler"}) {
    p.send_ws(Opcode::text, text);
    EXPECT_EQ((co_await p.next()).data, text);
  }
  p.send_ws(Opcode::close, std::string("\x03\xe8", 2), true);
  EXPECT_EQ((co_await p.next()).code, 1000);
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
  co_await es.server.start("127.0.0.1", 0);
  Peer p = co_await open_ws(es.server.port());
  p.send_ws(Opcode::text, "one");
  EXPECT_EQ((co_await p.next()).data, "one");
  es.server.close();
  while (co_await p.step()) {
  }
  EXPECT_FALSE(p.ended) << "no clean end: the connection went";
  co_await es.server.shutdown(1s);  // closed already: returns once all ended
}

TEST(ServerH2WebSocket, ServerCloseUnderAWebSocket) { run_bounded(closed_body(), 30s); }

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

}  // namespace
}  // namespace corio_ws_test
