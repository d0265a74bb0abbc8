// WebSocket end to end over loopback, corio's server and corio's client:
// messages both ways with and without permessage-deflate, fragments,
// subprotocols, the closing handshake in both directions, the HTTP
// server's timeouts leaving a live WebSocket alone, and the server's
// shutdown closing a handler's WebSocket (1001; virtual time).
#include <corio/testing/virtual_clock.hpp>

#include "http/client_support.hpp"
#include "http/ws_support.hpp"

namespace corio_ws_test {
namespace {

using corio_http_test::run_bounded;

Coro<void> echo_body(bool compress) {
  WsOptions sopts;
  EchoServer es(sopts);
  co_await es.server.start("127.0.0.1", 0);
  ClientSession session;
  WsOptions copts;
  copts.deflate.enabled = compress;
  WebSocket ws = co_await session.ws_connect(ws_url(es.server.port()), copts);
  EXPECT_EQ(ws.compressed(), compress);
  const std::size_t sent = co_await expect_echoes(ws);
  co_await ws.close();
  EXPECT_EQ(ws.close_code(), 1000);
  co_await es.seen.done.wait();
  EXPECT_EQ(es.seen.close_code, 1000);
  EXPECT_EQ(es.seen.messages.size(), sent);
  co_await session.close();
  es.server.close();
}

TEST(WebSocket, EchoesTextAndBinaryCompressed) { run_bounded(echo_body(true), 30s); }
TEST(WebSocket, EchoesTextAndBinaryUncompressed) { run_bounded(echo_body(false), 30s); }

Coro<void> fragments_body(bool no_context_takeover) {
  WsOptions sopts;
  sopts.max_fragment = 333;
  sopts.deflate.server_no_context_takeover = no_context_takeover;
  EchoServer es(sopts);
  co_await es.server.start("127.0.0.1", 0);
  ClientSession session;
  WsOptions copts;
  copts.max_fragment = 1000;
  copts.deflate.client_no_context_takeover = no_context_takeover;
  copts.deflate.min_size = 0;
  WebSocket ws = co_await session.ws_connect(ws_url(es.server.port()), copts);
  for (int i = 0; i < 3; ++i) {
    const std::string text = "fragment me " + std::string(10000, static_cast<char>('a' + i));
    co_await ws.send_str(text);
    std::optional<WsMessage> back = co_await ws.receive();
    CO_ASSERT(back);
    EXPECT_EQ(back->data, text);
  }
  co_await ws.close();
  co_await session.close();
  es.server.close();
}

TEST(WebSocket, FragmentedMessagesWithContextTakeover) { run_bounded(fragments_body(false)); }
TEST(WebSocket, FragmentedMessagesWithoutContextTakeover) { run_bounded(fragments_body(true)); }

// Many alike messages each way under each context-takeover agreement: each
// side's deflate stream is made per message or kept, its inflater parked at
// every wait for the echo and made again; odd messages carry noise past
// max_fragment, so they go in fragments.
Coro<void> takeover_body(bool server_takes_over, bool client_takes_over) {
  WsOptions sopts;
  sopts.max_fragment = 300;
  sopts.deflate.server_no_context_takeover = !server_takes_over;
  EchoServer es(sopts);
  co_await es.server.start("127.0.0.1", 0);
  ClientSession session;
  WsOptions copts;
  copts.max_fragment = 300;
  copts.deflate.server_no_context_takeover = !server_takes_over;
  copts.deflate.client_no_context_takeover = !client_takes_over;
  WebSocket ws = co_await session.ws_connect(ws_url(es.server.port()), copts);
  EXPECT_TRUE(ws.compressed());
  co_await expect_alike_echoes(ws, 40);
  co_await ws.close();
  EXPECT_EQ(ws.close_code(), 1000) << ws.close_reason();
  co_await session.close();
  es.server.close();
}

TEST(WebSocket, ManyCompressedMessagesUnderEachContextTakeoverAgreement) {
  for (bool server : {false, true}) {
    for (bool client : {false, true}) {
      SCOPED_TRACE(std::string("server takes over: ") + (server ? "yes" : "no") +
                   ", client takes over: " + (client ? "yes" : "no"));
      run_bounded(takeover_body(server, client));
    }
  }
}

Coro<void> subprotocol_body() {
  WsOptions sopts;
  sopts.protocols = {"chat.v2", "chat.v1"};
  EchoServer es(sopts);
  co_await es.server.start("127.0.0.1", 0);
  ClientSession session;
  WsOptions both;
  both.protocols = {"chat.v1", "chat.v2"};
  WebSocket ws = co_await session.ws_connect(ws_url(es.server.port()), both);
  EXPECT_EQ(ws.protocol(), "chat.v2") << "the server's preference";
  co_await ws.close();
  WsOptions other;
  other.protocols = {"mqtt"};
  WebSocket none = co_await session.ws_connect(ws_url(es.server.port()), other);
  EXPECT_EQ(none.protocol(), "");
  co_await none.close();
  co_await session.close();
  es.server.close();
}

TEST(WebSocket, SubprotocolIsTheServersFirstChoiceAmongTheOffers) { run_bounded(subprotocol_body()); }

Coro<Response> close_at_once(Request& req) {
  WebSocket ws = co_await WebSocketResponse::prepare(req);
  co_await ws.close(corio::http::ws_close::going_away, "going");
  co_return Response{};
}

Coro<void> close_codes_body() {
  WsOptions sopts;
  EchoServer es(sopts);
  es.server.get("/bye", close_at_once);
  co_await es.server.start("127.0.0.1", 0);
  ClientSession session;
  WebSocket ws = co_await session.ws_connect(ws_url(es.server.port()));
  co_await ws.close(4001, "client done");
  EXPECT_EQ(ws.close_code(), 4001) << "the server echoes the code";
  co_await es.seen.done.wait();
  EXPECT_EQ(es.seen.close_code, 4001);
  EXPECT_EQ(es.seen.close_reason, "client done");
  EXPECT_THROW(co_await ws.send_str("late"), corio::RuntimeError);

  WebSocket closing = co_await session.ws_connect(ws_url(es.server.port(), "/bye"));
  const std::optional<WsMessage> nothing = co_await closing.receive();
  EXPECT_FALSE(nothing);
  EXPECT_EQ(closing.close_code(), 1001);
  EXPECT_EQ(closing.close_reason(), "going");
  co_await session.close();
  es.server.close();
}

TEST(WebSocket, CloseCodesAndReasonsBothWays) { run_bounded(close_codes_body()); }

Coro<void> receive_until_closed(WebSocket& ws, corio::Event& ended) {
  while (std::optional<WsMessage> msg = co_await ws.receive()) {
  }
  ended.set();
}

Coro<void> close_while_receiving_body() {
  WsOptions sopts;
  EchoServer es(sopts);
  co_await es.server.start("127.0.0.1", 0);
  ClientSession session;
  WebSocket ws = co_await session.ws_connect(ws_url(es.server.port()));
  corio::Event ended;
  corio::Task<void> reader = corio::create_task(receive_until_closed(ws, ended));
  co_await corio::sleep(0s);
  co_await ws.close(1000, "from another task");
  co_await ended.wait();
  co_await reader;
  EXPECT_EQ(ws.close_code(), 1000);
  co_await es.seen.done.wait();
  EXPECT_EQ(es.seen.close_reason, "from another task");
  co_await session.close();
  es.server.close();
}

TEST(WebSocket, CloseFromAnotherTaskWhileOneReceives) { run_bounded(close_while_receiving_body()); }

Coro<void> timeouts_body() {
  ServerOptions opts = quiet();
  opts.header_timeout = opts.idle_timeout = opts.body_timeout = opts.send_timeout = 50ms;
  WsOptions sopts;
  EchoServer es(sopts, opts);
  co_await es.server.start("127.0.0.1", 0);
  ClientSession session;
  WebSocket ws = co_await session.ws_connect(ws_url(es.server.port()));
  co_await corio::sleep(400ms);  // eight times every timeout of the HTTP server
  co_await ws.send_str("still here");
  std::optional<WsMessage> back = co_await ws.receive();
  CO_ASSERT(back);
  EXPECT_EQ(back->data, "still here");
  co_await ws.close();
  co_await session.close();
  es.server.close();
}

TEST(WebSocket, HttpServerTimeoutsLeaveALiveWebSocketAlone) { run_bounded(timeouts_body()); }

Coro<void> handshake_refused_body() {
  Server server(quiet());
  server.get("/hello", corio_http_test::hello);
  co_await server.start("127.0.0.1", 0);
  ClientSession session;
  int status = 0;
  try {
    (void)co_await session.ws_connect(ws_url(server.port(), "/nope"));
  } catch (const corio::http::WSServerHandshakeError& e) {
    status = e.status();
  }
  EXPECT_EQ(status, 404);
  try {
    (void)co_await session.ws_connect(ws_url(server.port(), "/hello"));
  } catch (const corio::http::WSServerHandshakeError& e) {
    status = e.status();
  }
  EXPECT_EQ(status, 200);
  co_await session.close();
  server.close();
}

TEST(WebSocket, ConnectFailsWithTheStatusWhenTheServerDoesNotSwitch) {
  run_bounded(handshake_refused_body());
}

Coro<void> wss_body(const corio_http_test::TempDir* dir) {
  ServerOptions opts = quiet();
  opts.ssl = corio::SslContext::server((dir->path() / "server.pem").string(),
                                       (dir->path() / "server.key").string());
  WsOptions sopts;
  EchoServer es(sopts, opts);
  co_await es.server.start("127.0.0.1", 0);
  corio::http::ClientOptions copts;
  copts.ssl = corio::SslContext::client();
  copts.ssl->load_verify_locations((dir->path() / "ca.pem").string());
  ClientSession session(copts);
  WebSocket ws = co_await session.ws_connect("wss://127.0.0.1:" + std::to_string(es.server.port()) + "/ws");
  EXPECT_TRUE(ws.compressed());
  const std::string text(100000, 's');
  co_await ws.send_str(text);
  const std::optional<WsMessage> back = co_await ws.receive();
  CO_ASSERT(back);
  EXPECT_EQ(back->data, text);
  co_await ws.close();
  EXPECT_EQ(ws.close_code(), 1000);
  co_await session.close();
  es.server.close();
}

TEST(WebSocket, WssOverCoriosTls) {
  corio_http_test::TempDir dir;
  if (!corio_http_test::make_certificates(dir.path())) GTEST_SKIP() << "the openssl tool is missing";
  run_bounded(wss_body(&dir));
}

// Virtual time: a shutdown (a Ctrl-C) starts the closing handshake (1001)
// on a WebSocket its handler owns (WebSocketResponse::prepare), and waits
// for a peer that never answers only ws_shutdown_timeout (1 s), not the
// shutdown's deadline (10 s): the handler's receive() then ends (1006).
Coro<void> prepared_stalled_peer_shutdown_body() {
  WsOptions sopts;
  EchoServer es(sopts);
  co_await es.server.start("127.0.0.1", 0);
  RawClient peer = co_await raw_ws(es.server.port());  // never answers
  const double t0 = corio::get_running_loop().time();
  co_await es.server.shutdown();
  const double took = corio::get_running_loop().time() - t0;
  EXPECT_GE(took, 1.0);
  EXPECT_LT(took, 1.5) << "not the shutdown's 10 s deadline";
  EXPECT_EQ(es.seen.close_code, 1006) << es.seen.close_reason;
  const WsEvent goodbye = co_await read_server_frame(peer.reader);
  EXPECT_EQ(goodbye.kind, WsEvent::Kind::close);
  EXPECT_EQ(goodbye.code, 1001);
  peer.writer.close();
}

TEST(WebSocket, ShutdownWaitsForAHandlersStalledPeerOnlyTheShutdownTimeout) {
  auto clock = std::make_shared<corio::testing::VirtualClock>();
  corio::run(prepared_stalled_peer_shutdown_body(), {.clock = clock});
}

// A peer that answers the server's close: the handler's pending receive()
// returns with the close, and the shutdown ends at once.
Coro<void> prepared_answering_peer_shutdown_body() {
  WsOptions sopts;
  EchoServer es(sopts);
  co_await es.server.start("127.0.0.1", 0);
  RawClient peer = co_await raw_ws(es.server.port());
  const double t0 = corio::get_running_loop().time();
  corio::Task<void> shutdown = corio::create_task(es.server.shutdown());
  const WsEvent goodbye = co_await read_server_frame(peer.reader);
  EXPECT_EQ(goodbye.kind, WsEvent::Kind::close);
  EXPECT_EQ(goodbye.code, 1001);
  peer.writer.write(client_frame(Opcode::close, std::string("\x03\xe9", 2)));  // 1001 back
  co_await shutdown;
  EXPECT_LT(corio::get_running_loop().time() - t0, 0.5);
  EXPECT_EQ(es.seen.close_code, 1001) << es.seen.close_reason;
  peer.writer.close();
}

TEST(WebSocket, ShutdownClosesAHandlersWebSocketWithItsPeer) {
  auto clock = std::make_shared<corio::testing::VirtualClock>();
  corio::run(prepared_answering_peer_shutdown_body(), {.clock = clock});
}

}  // namespace
}  // namespace corio_ws_test
