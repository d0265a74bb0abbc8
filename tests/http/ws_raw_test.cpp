// The WebSocket server against a raw peer that breaks the rules on
// purpose (unmasked frames, bad UTF-8, oversize messages, a bad handshake),
// the heartbeat against a peer that never answers (virtual time), the
// backpressure a peer that never reads applies, and the takeover under
// both (an Upgrade with bytes after its head, a CONNECT tunnel).
#include <corio/http/tunnel.hpp>
#include <corio/testing/virtual_clock.hpp>

#include "http/ws/ws_handshake.hpp"
#include "common/support.hpp"
#include "http/ws_support.hpp"

namespace corio_ws_test {
namespace {

using corio_http_test::run_bounded;

// Sends `frames` after the handshake; the server must answer with a close
// frame carrying `code`, then end the connection, and its handler must see
// the same code.
Coro<void> violation_body(std::string frames, int code, std::size_t max_msg_size) {
  WsOptions sopts;
  sopts.max_msg_size = max_msg_size;
  EchoServer es(sopts);
  co_await es.server.start("127.0.0.1", 0);
  RawClient c = co_await raw_ws(es.server.port());
  c.writer.write(frames);
  const WsEvent ev = co_await read_server_frame(c.reader);
  EXPECT_EQ(ev.kind, WsEvent::Kind::close);
  EXPECT_EQ(ev.code, code);
  EXPECT_TRUE(co_await corio_http_test::closed_by_server(c.reader));
  co_await es.seen.done.wait();
  EXPECT_EQ(es.seen.close_code, code);
  EXPECT_TRUE(es.seen.messages.empty());
  es.server.close();
}

TEST(WebSocketPeer, UnmaskedFrameFromTheClientIs1002) {
  std::string unmasked;
  corio::http::detail::append_frame(unmasked, Opcode::text, true, false, "hi", std::nullopt);
  run_bounded(violation_body(unmasked, 1002, 1 << 20));
}

TEST(WebSocketPeer, InvalidUtf8AcrossFragmentsIs1007) {
  run_bounded(violation_body(client_frame(Opcode::text, "ok \xe2\x82", false) +
                                 client_frame(Opcode::continuation, "\x28"),
                             1007, 1 << 20));
}

TEST(WebSocketPeer, OversizeMessageIs1009) {
  run_bounded(violation_body(client_frame(Opcode::binary, std::string(2000, 'x')), 1009, 1000));
}

// The limit holds across fragments: the message is refused when the frame
// that would take it over arrives, not once it is whole.
TEST(WebSocketPeer, OversizeFragmentedMessageIs1009) {
  run_bounded(violation_body(client_frame(Opcode::binary, std::string(600, 'x'), false) +
                                 client_frame(Opcode::continuation, std::string(600, 'x'), false),
                             1009, 1000));
}

TEST(WebSocketPeer, BadOpcodeIs1002) {
  std::string bad = client_frame(Opcode::text, "x");
  bad[0] = static_cast<char>(0x85);
  run_bounded(violation_body(bad, 1002, 1 << 20));
}

Coro<void> ping_body() {
  WsOptions sopts;
  EchoServer es(sopts);
  co_await es.server.start("127.0.0.1", 0);
  RawClient c = co_await raw_ws(es.server.port());
  // A ping between two fragments of a message: answered at once.
  c.writer.write(client_frame(Opcode::text, "frag", false) + client_frame(Opcode::ping, "are you there"));
  const WsEvent pong = co_await read_server_frame(c.reader);
  EXPECT_EQ(pong.kind, WsEvent::Kind::pong);
  EXPECT_EQ(pong.data, "are you there");
  c.writer.write(client_frame(Opcode::continuation, "ment"));
  const WsEvent echo = co_await read_server_frame(c.reader);
  EXPECT_EQ(echo.kind, WsEvent::Kind::text);
  EXPECT_EQ(echo.data, "fragment");
  c.writer.write(client_frame(Opcode::close, "\x03\xe8"));
  const WsEvent close = co_await read_server_frame(c.reader);
  EXPECT_EQ(close.kind, WsEvent::Kind::close);
  EXPECT_EQ(close.code, 1000);
  es.server.close();
}

TEST(WebSocketPeer, PingBetweenFragmentsIsAnsweredWithPong) { run_bounded(ping_body()); }

// A peer that pings without reading the pongs: each pong waits for room in
// the server's write buffer, so the server stops reading at its high-water
// mark and the pings wait in the peer's own buffer. Virtual time: the sleep
// returns once neither side can go on.
Coro<void> ping_flood_body() {
  // 39 MB of pings: well past what the kernel's autotuned buffers take
  // (about 11 MB of them was seen).
  constexpr int kPings = 300'000;
  WsOptions sopts;
  EchoServer es(sopts);
  co_await es.server.start("127.0.0.1", 0);
  RawClient c = co_await raw_ws(es.server.port());
  const std::string ping = client_frame(Opcode::ping, std::string(125, 'p'));
  for (int i = 0; i < kPings; ++i) c.writer.write(ping);
  co_await corio::sleep(1s);
  // What the server took: the kernel's buffers and its high-water mark.
  const std::size_t left = c.writer.get_write_buffer_size();
  std::printf("%zu of %zu bytes of pings left unread\n", left, kPings * ping.size());
  EXPECT_GT(left, kPings * ping.size() / 2) << "the server read on, queuing pongs";
  int pongs = 0;
  while (pongs < kPings) {
    const WsEvent ev = co_await read_server_frame(c.reader);
    CO_ASSERT(ev.kind == WsEvent::Kind::pong);
    ++pongs;
  }
  EXPECT_EQ(c.writer.get_write_buffer_size(), 0u);
  c.writer.abort();
  es.server.close();
}

TEST(WebSocketPeer, APingFloodFromAPeerThatDoesNotReadStopsTheReading) {
  corio_testing::run_vt(ping_flood_body());
}

Coro<void> bad_handshake_body() {
  WsOptions sopts;
  EchoServer es(sopts);
  co_await es.server.start("127.0.0.1", 0);
  std::string no_key = handshake_request();
  no_key.replace(no_key.find("Sec-WebSocket-Key"), 17, "X-Not-The-Key");
  EXPECT_EQ((co_await corio_http_test::exchange(es.server.port(), no_key)).status, 400);
  std::string v8 = handshake_request();
  v8.replace(v8.find("Version: 13"), 11, "Version: 8");
  EXPECT_EQ((co_await corio_http_test::exchange(es.server.port(), v8)).status, 426);
  std::string short_key = handshake_request();
  short_key.replace(short_key.find(kKey), kKey.size(), "c2hvcnQ=");
  EXPECT_EQ((co_await corio_http_test::exchange(es.server.port(), short_key)).status, 400);
  // After all that, the server still switches for a good one.
  RawClient c = co_await raw_ws(es.server.port());
  c.writer.close();
  es.server.close();
}

TEST(WebSocketPeer, BadHandshakesGet400Or426AndTheServerGoesOn) { run_bounded(bad_handshake_body()); }

// The head of the answer to `request`, as it came on the wire.
Coro<std::string> answer_head(std::uint16_t port, std::string request) {
  RawClient c = co_await corio_http_test::connect(port);
  c.writer.write(request);
  std::string head = co_await corio::wait_for(c.reader.readuntil("\r\n\r\n"), 10s);
  c.writer.close();
  co_return head;
}

// The handshake with one field's line replaced (or dropped: "").
std::string with_field(std::string_view field, std::string_view line, std::string_view extra = {}) {
  std::string r = handshake_request("/ws", extra);
  const std::size_t at = r.find(field);
  r.replace(at, r.find("\r\n", at) + 2 - at, line);
  return r;
}

// RFC 6455 section 4.4: an unsupported version (or none, or a list) gets
// 426 naming the one we speak; 4.2.1: anything else that is no opening
// handshake is a 400.
Coro<void> refusals_body() {
  WsOptions sopts;
  EchoServer es(sopts);
  co_await es.server.start("127.0.0.1", 0);
  const std::uint16_t port = es.server.port();
  const std::vector<std::string> versions = {
      "Sec-WebSocket-Version: 8\r\n", "", "Sec-WebSocket-Version: 13, 8\r\n",
      "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Version: 8\r\n"};
  for (const std::string& version : versions) {
    const std::string head =
        co_await answer_head(port, with_field("Sec-WebSocket-Version", version));
    EXPECT_TRUE(head.starts_with("HTTP/1.1 426 Upgrade Required\r\n")) << version << head;
    EXPECT_NE(head.find("\r\nSec-WebSocket-Version: 13\r\n"), std::string::npos) << head;
    // RFC 9110 sections 15.5.22 and 7.8: a 426 names the protocol to upgrade to.
    EXPECT_NE(head.find("\r\nUpgrade: websocket\r\n"), std::string::npos) << head;
    EXPECT_NE(head.find("\r\nConnection: Upgrade\r\n"), std::string::npos) << head;
  }
  std::string http10 = handshake_request();
  http10.replace(http10.find("HTTP/1.1"), 8, "HTTP/1.0");
  const std::vector<std::string> not_handshakes = {
      with_field("Sec-WebSocket-Key", ""),
      with_field("Sec-WebSocket-Key", "Sec-WebSocket-Key: c2hvcnQ=\r\n"),
      with_field("Sec-WebSocket-Key", "",
                 "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                 "Sec-WebSocket-Key: AAAAAAAAAAAAAAAAAAAAAA==\r\n"),
      with_field("Upgrade:", ""),
      with_field("Upgrade:", "Upgrade: h2c\r\n"),
      with_field("Connection:", ""),
      with_field("Connection:", "Connection: keep-alive\r\n"),
      http10,
  };
  for (const std::string& request : not_handshakes) {
    const std::string head = co_await answer_head(port, request);
    EXPECT_TRUE(head.starts_with("HTTP/1.1 400 Bad Request\r\n")) << request << head;
  }
  es.server.close();
}

TEST(WebSocketPeer, RefusedHandshakesFollowRfc6455) { run_bounded(refusals_body()); }

// A server that switches and then neither reads nor answers anything.
Coro<void> silent_peer(corio::StreamReader reader, corio::StreamWriter writer) {
  std::string head;
  while (head.find("\r\n\r\n") == std::string::npos) head += co_await reader.read(4096);
  const std::size_t at = head.find("Sec-WebSocket-Key: ") + 19;
  const std::string key = head.substr(at, head.find("\r\n", at) - at);
  writer.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Accept: " + corio::http::detail::ws_accept(key) + "\r\n\r\n");
  co_await corio::sleep(3600s);
}

Coro<void> heartbeat_body() {
  corio::Server peer = co_await corio::start_server(silent_peer, "127.0.0.1", 0);
  corio::http::ClientOptions copts;
  copts.timeout.total = std::nullopt;  // no timer before the heartbeat's
  ClientSession session(copts);
  WsOptions opts;
  opts.heartbeat = 10s;
  WebSocket ws = co_await session.ws_connect(ws_url(peer.port()), opts);
  const double t0 = corio::get_running_loop().time();
  const std::optional<WsMessage> msg = co_await ws.receive();
  const double took = corio::get_running_loop().time() - t0;
  EXPECT_FALSE(msg);
  EXPECT_EQ(ws.close_code(), 1006);
  EXPECT_GE(took, 15.0) << "a ping after 10 s of silence, then 5 s for its pong";
  EXPECT_LT(took, 16.0);
  peer.close();
}

TEST(WebSocketPeer, HeartbeatAbortsAPeerThatNeverAnswers) {
  auto clock = std::make_shared<corio::testing::VirtualClock>();
  corio::run(heartbeat_body(), {.clock = clock});
}

Coro<void> keep_receiving(WebSocket& ws, std::vector<std::string>& got, corio::Event& arrived) {
  while (std::optional<WsMessage> msg = co_await ws.receive()) {
    got.push_back(msg->data);
    arrived.set();
  }
  arrived.set();
}

// Both sides corio, one loop, virtual time: every ping is answered at once.
Coro<void> heartbeat_answered_body() {
  WsOptions sopts;
  EchoServer es(sopts);
  co_await es.server.start("127.0.0.1", 0);
  corio::http::ClientOptions copts;
  copts.timeout.total = std::nullopt;
  ClientSession session(copts);
  WsOptions opts;
  opts.heartbeat = 10s;
  WebSocket ws = co_await session.ws_connect(ws_url(es.server.port()), opts);
  std::vector<std::string> got;
  corio::Event arrived;
  corio::Task<void> reader = corio::create_task(keep_receiving(ws, got, arrived));
  co_await corio::sleep(600s);  // sixty heartbeats' worth of silence from the application
  EXPECT_FALSE(ws.close_code()) << ws.close_reason();
  co_await ws.send_str("still there?");
  co_await arrived.wait();
  EXPECT_EQ(got, std::vector<std::string>{"still there?"});
  co_await ws.close();
  co_await reader;
  co_await session.close();
  es.server.close();
}

TEST(WebSocketPeer, HeartbeatKeepsAnAnsweringPeer) {
  auto clock = std::make_shared<corio::testing::VirtualClock>();
  corio::run(heartbeat_answered_body(), {.clock = clock});
}

}  // namespace
}  // namespace corio_ws_test
