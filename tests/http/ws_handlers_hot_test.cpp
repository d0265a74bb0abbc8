// A handler set's busy ("hot") connection (ws_served.hpp, rule 2): from its
// second message on it waits for the next one in its task, and parks only
// once idle at two of the server's hot ticks (1 to 2 s, virtual time here);
// whatever ends it while hot ends it once, with the right close code (the
// loop's close: ws_handlers_test.cpp).
#include "http/ws_handlers_support.hpp"
#include <corio/testing/virtual_clock.hpp>

namespace corio_ws_test {
namespace {

using corio_http_test::run_bounded;

// One echo of `text` on ws.
Coro<void> echo_once(WebSocket& ws, const std::string& text) {
  co_await ws.send_str(text);
  const std::optional<WsMessage> back = co_await ws.receive();
  EXPECT_TRUE(back && back->data == text);
}

// log's echo served, then a client connected to it; own: the tasks alive
// before the connection.
Coro<WebSocket> connect_echo(Server& server, Log& log, ClientSession& session, std::size_t& own) {
  co_await serve_echo(server, log);
  own = tasks_alive();
  co_return co_await session.ws_connect(ws_url(server.port()));
}

Coro<void> hot_then_parks_body() {
  Log log;
  Server server(quiet());
  ClientSession session;
  std::size_t own = 0;
  WebSocket ws = co_await connect_echo(server, log, session, own);
  // Half a second apart: never idle at two ticks in a row.
  for (int i = 0; i < 10; ++i) {
    co_await echo_once(ws, "m" + std::to_string(i));
    if (i > 0) {
      EXPECT_EQ(tasks_alive(), own + 1) << "waits in its task after message " << i;
    }
    co_await corio::sleep(500ms);
  }
  co_await corio::sleep(400ms);
  EXPECT_EQ(tasks_alive(), own + 1) << "0.9 s idle: still hot";
  co_await corio::sleep(1200ms);
  EXPECT_EQ(tasks_alive(), own) << "2.1 s idle: parked";
  co_await echo_once(ws, "back");
  EXPECT_EQ(tasks_alive(), own + 1) << "it came back: hot again at once";
  co_await ws.close(4000, "bye");
  co_await log.closed.wait();
  EXPECT_EQ(log.closes, (std::vector<std::pair<int, std::string>>{{4000, "bye"}}));
  EXPECT_EQ(log.messages.size(), 11u);
  co_await session.close();
  server.close();
}

TEST(WsHandlersHot, BusyConnectionWaitsInItsTaskThenParksOnceIdle) {
  auto clock = std::make_shared<corio::testing::VirtualClock>();
  corio::run(hot_then_parks_body(), {.clock = clock});
}

enum class End { server_close, server_shutdown, handle_close, handle_abort };

// A hot connection (two echoes), then ended by `how`: the peer sees
// `code` (none for an abort), `close` runs once with it, and the task ends.
Coro<void> hot_ends_body(End how, int code) {
  Log log;
  Server server(quiet());
  ClientSession session;
  std::size_t own = 0;
  WebSocket ws = co_await connect_echo(server, log, session, own);
  co_await echo_once(ws, "one");
  co_await echo_once(ws, "two");
  CO_ASSERT(tasks_alive() == own + 1);  // hot: waiting in its task
  corio::Task<std::optional<WsMessage>> reading = corio::create_task(ws.receive());
  CO_ASSERT(log.open.size() == 1u);
  const ServerWebSocket<> handle = *log.open.begin();
  switch (how) {
    case End::server_close:
      server.close();
      break;
    case End::server_shutdown:
      co_await server.shutdown(5s);
      break;
    case End::handle_close:
      handle.close(code, "done");
      break;
    case End::handle_abort:
      handle.abort();
      break;
  }
  EXPECT_FALSE(co_await reading);
  if (how != End::handle_abort) {
    EXPECT_EQ(ws.close_code(), code);
  }
  co_await log.closed.wait();
  EXPECT_TRUE(co_await tasks_down_to(own));
  CO_ASSERT(log.closes.size() == 1u);
  EXPECT_EQ(log.closes[0].first, code);
  EXPECT_EQ(handle.close_code(), code);
  co_await session.close();
  server.close();
}

TEST(WsHandlersHot, ServerCloseSaysGoingAway) {
  run_bounded(hot_ends_body(End::server_close, 1001));
}
TEST(WsHandlersHot, ServerShutdownSaysGoingAway) {
  run_bounded(hot_ends_body(End::server_shutdown, 1001));
}
TEST(WsHandlersHot, HandleCloseSendsItsCode) {
  run_bounded(hot_ends_body(End::handle_close, 4002));
}
TEST(WsHandlersHot, HandleAbortIs1006) { run_bounded(hot_ends_body(End::handle_abort, 1006)); }

}  // namespace
}  // namespace corio_ws_test
