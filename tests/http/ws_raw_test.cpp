// The WebSocket server against a raw peer that breaks the rules on
// purpose (unmasked frames, bad UTF-8, oversize messages, a bad handshake),
// the heartbeat against a peer that never answers (virtual time), the
// backpressure a peer that never reads applies, and the takeover under
// both (an Upgrade with bytes after its head, a CONNECT tunnel).
#include <corio/http/tunnel.hpp>
#include <corio/testing/virtual_clock.hpp>

#include "http/ws/ws_handshake.hpp"
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
