// WebSocket routes served by a handler set (ws_handlers.hpp): echo and
// order, a plain function as `message`, open's Request and typed data,
// back-pressure from a slow handler, broadcast from another task and sending
// after the close, close codes both ways, a throwing handler (1011), the
// heartbeat while parked (virtual time), the server's close and shutdown
// (1001; a stalled peer held for ws_shutdown_timeout only), and no task while idle (a busy connection: ws_handlers_hot_test.cpp).
#include "http/ws/ws_served.hpp"
#include "http/ws_handlers_support.hpp"
#include <corio/testing/virtual_clock.hpp>

namespace corio_ws_test {
namespace {

using corio_http_test::run_bounded;

Coro<void> echo_in_order_body(bool compress) {
  Log log;
  Server server(quiet());
  co_await serve_echo(server, log);
  ClientSession session;
  WsOptions copts;
  copts.deflate.enabled = compress;
  WebSocket ws = co_await session.ws_connect(ws_url(server.port()), copts);
  const std::size_t sent = co_await expect_echoes(ws);
  for (int i = 0; i < 20; ++i) co_await ws.send_str("n" + std::to_string(i));  // sent ahead of the echoes
  for (int i = 0; i < 20; ++i) {
    const std::optional<WsMessage> back = co_await ws.receive();
    CO_ASSERT(back);
    EXPECT_EQ(back->data, "n" + std::to_string(i));
  }
  co_await ws.close(4000, "bye");
  co_await log.closed.wait();
  EXPECT_EQ(log.messages.size(), sent + 20);
  EXPECT_EQ(log.closes, (std::vector<std::pair<int, std::string>>{{4000, "bye"}}));
  EXPECT_TRUE(log.open.empty());
  co_await session.close();
  server.close();
}

TEST(WsHandlers, EchoesInOrder) { run_bounded(echo_in_order_body(false), 30s); }
TEST(WsHandlers, EchoesInOrderCompressed) { run_bounded(echo_in_order_body(true), 30s); }

// Typed data, filled by open from the Request, read by message.
struct Named {
  std::string name;
};

Coro<void> name_from_path(ServerWebSocket<Named> ws, Request& req) {
  ws.data().name = std::string(req.param("name"));
  co_return;
}

Coro<void> greet(ServerWebSocket<Named> ws, WsMessage msg) {
  co_await ws.send_str(ws.data().name + ": " + msg.data);
}

Coro<void> typed_data_body() {
  Server server(quiet());
  server.ws<Named>("/chat/{name}", {.open = name_from_path, .message = greet});
  co_await server.start("127.0.0.1", 0);
  ClientSession session;
  WebSocket ws = co_await session.ws_connect(ws_url(server.port(), "/chat/ada"));
  co_await ws.send_str("hello");
  const std::optional<WsMessage> back = co_await ws.receive();
  CO_ASSERT(back);
  EXPECT_EQ(back->data, "ada: hello");
  co_await ws.close();
  co_await session.close();
  server.close();
}

TEST(WsHandlers, OpenFillsTypedDataFromTheRequest) { run_bounded(typed_data_body()); }

// A plain function as `message` (what the docs show) is called without its
// std::function (WsErase): it echoes as a lambda does.
Coro<void> plain_echo(ServerWebSocket<> ws, WsMessage msg) { co_await ws.send(msg); }

Coro<void> plain_function_body() {
  Server server(quiet());
  server.ws("/ws", WsHandlers<>{.message = plain_echo});
  co_await server.start("127.0.0.1", 0);
  ClientSession session;
  WebSocket ws = co_await session.ws_connect(ws_url(server.port()));
  EXPECT_EQ(co_await expect_echoes(ws), 5u);
  co_await ws.close();
  co_await session.close();
  server.close();
}

TEST(WsHandlers, APlainFunctionAsMessage) { run_bounded(plain_function_body()); }

TEST(WsHandlers, MessageIsRequired) {
  Server server(quiet());
  EXPECT_THROW(server.ws("/ws", WsHandlers<>{}), corio::ValueError);
}

// Between messages the connection has no task: only the test's own remain.
Coro<void> parks_body() {
  Log log;
  Server server(quiet());
  co_await serve_echo(server, log);
  const std::size_t own = tasks_alive();
  ClientSession session;
  WebSocket ws = co_await session.ws_connect(ws_url(server.port()));
  for (int round = 0; round < 3; ++round) {
    co_await ws.send_str("ping " + std::to_string(round));
    const std::optional<WsMessage> back = co_await ws.receive();
    CO_ASSERT(back);
    EXPECT_TRUE(co_await tasks_down_to(own)) << "parked after round " << round;
  }
  EXPECT_EQ(log.open.size(), 1u);
  co_await ws.close();
  co_await log.closed.wait();
  co_await session.close();
  server.close();
}

TEST(WsHandlers, NoTaskWhileIdle) { run_bounded(parks_body()); }

// A handler that waits: the peer's messages stay in the socket, not in the
// server's memory.
Coro<void> slow(ServerWebSocket<> ws, WsMessage msg, Log& log, std::size_t& buffered) {
  // The server's own buffers, as the handler runs (the test's view inside).
  struct Peek : ServerWebSocket<> {
    explicit Peek(const ServerWebSocket<>& w) : ServerWebSocket<>(w) {}
    std::size_t storage() const { return corio::detail::buffer_storage(s_->state().reader); }
  };
  buffered = std::max(buffered, Peek(ws).storage());
  co_await log.gate.wait();
  log.bytes += msg.data.size();
}

Coro<void> send_all(WebSocket& ws, std::size_t n, std::size_t size, std::size_t& sent) {
  const std::string chunk = noise(size);
  for (; sent < n; ++sent) co_await ws.send_bytes(chunk);
}

Coro<void> back_pressure_body() {
  Log log;
  std::size_t buffered = 0;
  WsHandlers<> h = echo_handlers(log);
  h.message = [&log, &buffered](ServerWebSocket<> ws, WsMessage m) {
    return slow(std::move(ws), std::move(m), log, buffered);
  };
  h.options.max_msg_size = 256 * 1024;
  h.options.deflate.enabled = false;
  Server server(quiet());
  server.ws("/ws", std::move(h));
  co_await server.start("127.0.0.1", 0);
  ClientSession session;
  WsOptions copts;
  copts.deflate.enabled = false;
  WebSocket ws = co_await session.ws_connect(ws_url(server.port()), copts);
  // 32 MiB: more than the kernel's socket buffers of both sides hold.
  constexpr std::size_t kSize = 64 * 1024, kCount = 512;
  std::size_t sent = 0;
  corio::Task<void> sender = corio::create_task(send_all(ws, kCount, kSize, sent));
  co_await corio::sleep(300ms);  // the sender runs into the full socket (any wait would do)
  EXPECT_LT(sent, kCount) << "the slow handler did not push back";
  EXPECT_LE(buffered, 512u * 1024) << "bytes the server held for a handler that did not read";
  log.gate.set();
  co_await sender;
  co_await ws.close();
  co_await log.closed.wait();
  EXPECT_EQ(log.bytes, kCount * kSize);
  co_await session.close();
  server.close();
}

TEST(WsHandlers, SlowHandlerPushesBackOnThePeer) { run_bounded(back_pressure_body(), 60s); }

// Another task sends to every open connection; after a close, sending
// through a kept handle throws as on a closed WebSocket.
Coro<void> broadcast_body() {
  Log log;
  Server server(quiet());
  co_await serve_echo(server, log);
  ClientSession session;
  WebSocket a = co_await session.ws_connect(ws_url(server.port()));
  WebSocket b = co_await session.ws_connect(ws_url(server.port()));
  co_await a.send_str("a is here");  // once echoed, a's open ran
  co_await a.receive();
  co_await b.send_str("b is here");
  co_await b.receive();
  CO_ASSERT(log.open.size() == 2u);
  std::vector<ServerWebSocket<>> kept(log.open.begin(), log.open.end());
  for (const ServerWebSocket<>& c : kept) co_await c.send_str("news");
  for (WebSocket* ws : {&a, &b}) {
    const std::optional<WsMessage> got = co_await ws->receive();
    CO_ASSERT(got);
    EXPECT_EQ(got->data, "news");
  }
  co_await a.close();
  co_await b.close();
  while (log.closes.size() < 2) {
    log.closed.clear();
    co_await log.closed.wait();
  }
  EXPECT_TRUE(log.open.empty());
  EXPECT_EQ(kept[0].close_code(), 1000);
  EXPECT_THROW(co_await kept[0].send_str("late"), corio::RuntimeError);
  co_await session.close();
  server.close();
}

TEST(WsHandlers, BroadcastFromAnotherTask) { run_bounded(broadcast_body()); }

// The server closes (4001 from the handler); a handler that throws closes
// with 1011 and is reported.
Coro<void> server_closes_body() {
  Log log;
  int reported = 0;
  corio::get_running_loop().set_exception_handler(
      [&reported](corio::EventLoop&, const corio::ExceptionContext&) { ++reported; });
  Server server(quiet());
  co_await serve_echo(server, log);
  ClientSession session;
  WebSocket ws = co_await session.ws_connect(ws_url(server.port()));
  co_await ws.send_str("quit");
  EXPECT_FALSE(co_await ws.receive());
  EXPECT_EQ(ws.close_code(), 4001);
  EXPECT_EQ(ws.close_reason(), "asked to");
  co_await log.closed.wait();
  EXPECT_EQ(log.closes.back().first, 4001);  // the peer's answer to our close
  EXPECT_EQ(reported, 0);

  log.closed.clear();
  WebSocket ws2 = co_await session.ws_connect(ws_url(server.port()));
  co_await ws2.send_str("throw");
  EXPECT_FALSE(co_await ws2.receive());
  EXPECT_EQ(ws2.close_code(), 1011);
  co_await log.closed.wait();
  EXPECT_EQ(log.closes.back().first, 1011);
  EXPECT_EQ(reported, 1);
  co_await session.close();
  server.close();
}

TEST(WsHandlers, ServerSideCloseAndAThrowingHandler) { run_bounded(server_closes_body()); }

// Server::close() and shutdown() end parked WebSockets with 1001.
Coro<void> server_goes_away_body(bool graceful) {
  Log log;
  Server server(quiet());
  co_await serve_echo(server, log);
  ClientSession session;
  WebSocket ws = co_await session.ws_connect(ws_url(server.port()));
  co_await ws.send_str("hi");
  co_await ws.receive();
  corio::Task<std::optional<WsMessage>> reading = corio::create_task(ws.receive());
  if (graceful) {
    co_await server.shutdown(5s);
  } else {
    server.close();
  }
  EXPECT_FALSE(co_await reading);
  EXPECT_EQ(ws.close_code(), 1001);
  co_await log.closed.wait();
  CO_ASSERT(log.closes.size() == 1u);
  EXPECT_EQ(log.closes[0].first, 1001);
  co_await session.close();
}

TEST(WsHandlers, ServerCloseSaysGoingAway) { run_bounded(server_goes_away_body(false)); }
TEST(WsHandlers, ServerShutdownSaysGoingAway) { run_bounded(server_goes_away_body(true)); }

// Virtual time: a peer that never answers the heartbeat's ping is aborted
// (1006) 15 s into its silence, while parked.
Coro<void> heartbeat_body() {
  Log log;
  Server server(quiet());
  co_await serve_echo(server, log, heartbeat_10s());
  const double t0 = corio::get_running_loop().time();
  corio_http_test::RawClient peer = co_await raw_ws(server.port());  // never reads or answers
  co_await log.closed.wait();
  const double took = corio::get_running_loop().time() - t0;
  EXPECT_EQ(log.closes.at(0).first, 1006);
  EXPECT_GE(took, 15.0) << "a ping after 10 s of silence, then 5 s for its pong";
  EXPECT_LT(took, 16.0);
  peer.writer.close();
  server.close();
}

TEST(WsHandlers, HeartbeatAbortsASilentPeerWhileParked) {
  auto clock = std::make_shared<corio::testing::VirtualClock>();
  corio::run(heartbeat_body(), {.clock = clock});
}

// Virtual time: a shutdown (a Ctrl-C) waits for a peer that never answers
// the close frame only ws_shutdown_timeout (1 s by default, or as set), not
// the route's close_timeout (10 s), then drops it (1006).
Coro<void> stalled_peer_shutdown_body(std::optional<std::chrono::milliseconds> within) {
  Log log;
  ServerOptions opts = quiet();
  if (within) opts.ws_shutdown_timeout = *within;
  Server server(opts);
  co_await serve_echo(server, log);
  corio_http_test::RawClient peer = co_await raw_ws(server.port());  // never reads or answers
  const double t0 = corio::get_running_loop().time();
  co_await server.shutdown(30s);
  const double took = corio::get_running_loop().time() - t0;
  const double expected = within ? std::chrono::duration<double>(*within).count() : 1.0;
  EXPECT_GE(took, expected);
  EXPECT_LT(took, expected + 0.5) << "not the close_timeout's 10 s";
  CO_ASSERT(log.closes.size() == 1u);
  EXPECT_EQ(log.closes[0].first, 1006) << "no close frame from the peer in time";
  peer.writer.close();
}

TEST(WsHandlers, ShutdownWaitsForAStalledPeerOnlyTheShutdownTimeout) {
  auto clock = std::make_shared<corio::testing::VirtualClock>();
  corio::run(stalled_peer_shutdown_body(std::nullopt), {.clock = clock});
}

TEST(WsHandlers, TheShutdownTimeoutIsAServerOption) {
  auto clock = std::make_shared<corio::testing::VirtualClock>();
  corio::run(stalled_peer_shutdown_body(3s), {.clock = clock});
}

Coro<void> keep_receiving(WebSocket& ws, corio::Event& ended) {
  while (std::optional<WsMessage> msg = co_await ws.receive()) {
  }
  ended.set();
}

// A peer that answers (corio's client, receiving) stays for an hour.
Coro<void> heartbeat_answered_body() {
  Log log;
  Server server(quiet());
  co_await serve_echo(server, log, heartbeat_10s());
  corio::http::ClientOptions copts;
  copts.timeout.total = std::nullopt;
  ClientSession session(copts);
  WebSocket ws = co_await session.ws_connect(ws_url(server.port()));
  corio::Event ended;
  corio::Task<void> reader = corio::create_task(keep_receiving(ws, ended));
  co_await corio::sleep(3600s);
  EXPECT_TRUE(log.closes.empty());
  EXPECT_EQ(log.open.size(), 1u);
  co_await ws.close();
  co_await reader;
  co_await log.closed.wait();
  EXPECT_EQ(log.closes.at(0).first, 1000);
  co_await session.close();
  server.close();
}

TEST(WsHandlers, HeartbeatKeepsAnAnsweringPeer) {
  auto clock = std::make_shared<corio::testing::VirtualClock>();
  corio::run(heartbeat_answered_body(), {.clock = clock});
}

// `echoes` echoes on a raw client: after one the server's connection parks
// (no task), after two it waits in its task (hot, ws_handlers_hot_test.cpp).
Coro<void> echo_on_raw(Server& server, Log& log, corio_http_test::RawClient& peer, int echoes) {
  co_await serve_echo(server, log);
  const std::size_t own = tasks_alive();
  peer = co_await raw_ws(server.port());
  for (int i = 0; i < echoes; ++i) {
    peer.writer.write(client_frame(Opcode::text, "hi"));
    const WsEvent echo = co_await read_server_frame(peer.reader);
    EXPECT_EQ(echo.data, "hi");
  }
  if (echoes == 1) {
    EXPECT_TRUE(co_await tasks_down_to(own));
  } else {
    EXPECT_EQ(tasks_alive(), own + 1);
  }
}

// The loop closes under a parked connection (its watch, no task) or a hot
// one (its task's frame): the connection ends there (1006), once, and
// nothing is left (ASan's leak check in the sanitizer runs).
void loops_close_ends_it(int echoes) {
  Log log;
  corio::EventLoop loop;
  {
    corio_http_test::RawClient peer;
    Server server(quiet());
    loop.run_until_complete(echo_on_raw(server, log, peer, echoes));
    EXPECT_TRUE(log.closes.empty());
    loop.close();
    ASSERT_EQ(log.closes.size(), 1u);
    EXPECT_EQ(log.closes[0].first, 1006);
    EXPECT_TRUE(log.open.empty());
  }
}

TEST(WsHandlers, TheLoopsCloseEndsAParkedConnection) { loops_close_ends_it(1); }
TEST(WsHandlers, TheLoopsCloseEndsAHotConnection) { loops_close_ends_it(2); }

}  // namespace
}  // namespace corio_ws_test
