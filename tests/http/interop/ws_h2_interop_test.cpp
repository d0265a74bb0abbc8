// WebSocket over HTTP/2 (RFC 8441) with an outside client: python3-h2
// (peers/ws_h2_client.py) opens extended CONNECT streams and speaks the
// WebSocket frames itself, against the same WebSocketResponse echo handler
// the HTTP/1.1 tests use (ws_support.hpp), unchanged. Part of the interop
// suite (label interop).
#include "http/client_support.hpp"
#include "http/ws_support.hpp"

namespace corio_ws_test {
namespace {

using corio_http_test::run_bounded;

Coro<Response> hello(Request&) { co_return Response::text("hello"); }

// The peer's lines, read as they come.
struct WsH2Peer {
  corio::Process process;
  static Coro<WsH2Peer> start(std::uint16_t port, std::string scenario) {
    corio::SubprocessOptions opts;
    opts.out = corio::Redirect::pipe;
    opts.err = corio::Redirect::inherit;  // a failing scenario's traceback, in the test's log
    std::vector<std::string> args{"-u", (corio_http_test::peers_dir() / "ws_h2_client.py").string(),
                                  std::to_string(port), std::move(scenario)};
    // Named first: g++ 12 destroys an aggregate's temporary inside a co_await twice.
    corio::Process process =
        co_await corio::create_subprocess_exec(corio_http_test::python(), std::move(args), opts);
    co_return WsH2Peer{std::move(process)};
  }
  Coro<std::vector<std::string>> lines() {
    std::vector<std::string> out;
    for (std::string l; !(l = co_await process.out.readline()).empty();) {
      l.pop_back();
      out.push_back(std::move(l));
    }
    EXPECT_EQ(co_await process.wait(), 0);
    co_return out;
  }
};

// The scenario's lines, against an echo server over h2c (prior knowledge);
// the server then shuts down, and es.seen holds what its handlers saw.
Coro<std::vector<std::string>> scenario(EchoServer& es, std::string name) {
  es.server.get("/hello", hello);
  co_await es.server.start("127.0.0.1", 0);
  WsH2Peer peer = co_await WsH2Peer::start(es.server.port(), std::move(name));
  std::vector<std::string> out = co_await peer.lines();
  co_await es.server.shutdown(1s);
  co_return out;
}

using Lines = std::vector<std::string>;

Coro<void> setting_body() {
  EchoServer es{WsOptions{}};
  const Lines out = co_await scenario(es, "setting");
  EXPECT_EQ(out, Lines({"setting 1"}));
}

TEST(WsH2Interop, ServerAnnouncesExtendedConnect) { run_bounded(setting_body(), 60s); }

// A 200 without Sec-WebSocket-Accept, then text, binary, ping and the close
// handshake, which ends the stream both ways (END_STREAM, no reset).
Coro<void> echo_body() {
  EchoServer es{WsOptions{}};
  const Lines out = co_await scenario(es, "echo");
  EXPECT_EQ(out, (Lines{"status 200 accept False", "text hello", "binary 000102", "pong p1", "close 1000",
                   "end-stream"}));
  EXPECT_EQ(es.seen.close_code, 1000);
  EXPECT_EQ(es.seen.messages.size(), 2u);
}

TEST(WsH2Interop, EchoPingAndCloseHandshake) { run_bounded(echo_body(), 60s); }

// 1 MiB each way: 16 times the stream's window (ServerOptions'
// initial_window_size) and the peer's, so both directions wait on flow
// control, and the server's tunnel buffer stays bounded meanwhile.
Coro<void> large_body() {
  EchoServer es{WsOptions{}};
  const Lines out = co_await scenario(es, "large");
  EXPECT_EQ(out, (Lines{"echoed 1048576 True", "close 1000", "end-stream"}));
}

TEST(WsH2Interop, MessagePastTheWindows) { run_bounded(large_body(), 60s); }

// Eight WebSockets and a plain GET multiplexed on one connection.
Coro<void> many_body() {
  EchoServer es{WsOptions{}};
  Lines expected{"GET 200 hello"};
  for (int i = 7; i >= 0; --i) expected.push_back("ws " + std::to_string(i) + " m" + std::to_string(i));
  for (int i = 0; i < 8; ++i) {
    expected.push_back("close 1000");
    expected.push_back("end-stream");
  }
  const Lines out = co_await scenario(es, "many");
  EXPECT_EQ(out, expected);
  EXPECT_EQ(es.seen.messages.size(), 8u);
}

TEST(WsH2Interop, ManyWebSocketsBesideAGet) { run_bounded(many_body(), 60s); }

// The peer resets its WebSocket's stream: the handler sees 1006, and the
// connection's next request is answered.
Coro<void> reset_body() {
  EchoServer es{WsOptions{}};
  const Lines out = co_await scenario(es, "reset");
  EXPECT_EQ(out, Lines({"GET 200 hello"}));
  co_await es.seen.done.wait();
  EXPECT_EQ(es.seen.close_code, 1006);
}

TEST(WsH2Interop, PeerResetEndsThatWebSocketOnly) { run_bounded(reset_body(), 60s); }

// A protocol error (an unmasked client frame): the server's close 1002, the
// stream ended, and the connection goes on.
Coro<void> unmasked_body() {
  EchoServer es{WsOptions{}};
  const Lines out = co_await scenario(es, "unmasked");
  EXPECT_EQ(out, (Lines{"close 1002", "end-stream", "GET 200 hello"}));
  EXPECT_EQ(es.seen.close_code, 1002);
}

TEST(WsH2Interop, MisbehavingPeerEndsItsStreamOnly) { run_bounded(unmasked_body(), 60s); }

// permessage-deflate is the WebSocket's own: it comes over h2 unchanged.
Coro<void> deflate_body() {
  EchoServer es{WsOptions{}};  // deflate on, as by default
  const Lines out = co_await scenario(es, "deflate");
  EXPECT_EQ(out.size(), 4u);
  if (out.size() != 4) co_return;
  EXPECT_TRUE(out[0].starts_with("extensions permessage-deflate")) << out[0];
  EXPECT_EQ(out[1], "text 20 compressed");
  EXPECT_EQ(out[2], "close 1000");
}

TEST(WsH2Interop, PermessageDeflate) { run_bounded(deflate_body(), 60s); }

}  // namespace
}  // namespace corio_ws_test
