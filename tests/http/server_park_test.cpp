// Parked keep-alive connections (issue 28): a connection waiting for its
// first or second request, or idle across two of the sweeper's ticks after
// that, has no task and waits in the loop's fd slot alone; its next request
// starts a task again. What a parked connection must still
// do as a waiting one did: answer, time out, close on shutdown or on the
// Server's end, give back its max_connections slot when the peer leaves, and
// the same over TLS.
#include "http/server_support.hpp"
#include "net/tls_support.hpp"

namespace corio_http_test {
namespace {

// The sweeper ticks every 10 ms (a quarter of the shortest timeout, at
// least 10 ms): a connection parks within 20-30 ms of idling.
ServerOptions fast_ticks(ServerOptions opts = {}) {
  opts = quiet(std::move(opts));
  opts.lingering_timeout = 40ms;
  return opts;
}

// fast_ticks() with this idle_timeout.
ServerOptions fast_ticks_idle(std::chrono::milliseconds idle_timeout) {
  ServerOptions opts = fast_ticks();
  opts.idle_timeout = idle_timeout;
  return opts;
}

std::size_t tasks_alive() { return corio::get_running_loop().stats().tasks_alive; }

// Until at most `n` tasks are alive (this test's own); false after 5 s.
Coro<bool> tasks_down_to(std::size_t n) {
  for (int i = 0; i < 500; ++i) {
    if (tasks_alive() <= n) co_return true;
    co_await corio::sleep(10ms);
  }
  co_return false;
}

Coro<void> start_hello(Server& server) {
  server.get("/hello", hello);
  co_await server.start("127.0.0.1", 0);
}

// One GET answered on c, then until its connection parked (false: not
// within 5 s); `own`: the tasks alive with no connection.
Coro<bool> get_then_park(RawClient& c, std::size_t own) {
  c.writer.write(kGetHello);
  EXPECT_EQ((co_await read_reply(c.reader)).body, "Hello, World!");
  co_return co_await tasks_down_to(own);
}

Coro<void> parked_connections_answer_again() {
  Server server(fast_ticks());
  co_await start_hello(server);
  const std::size_t own = tasks_alive();
  std::vector<RawClient> clients = co_await kept_alive_clients(server.port(), 20);
  CO_ASSERT(co_await tasks_down_to(own));  // idle connections park: no task left
  for (int round = 0; round < 2; ++round) {
    for (RawClient& c : clients) {
      c.writer.write(kGetHello);
      EXPECT_EQ((co_await read_reply(c.reader)).body, "Hello, World!") << "round " << round;
    }
    EXPECT_TRUE(co_await tasks_down_to(own)) << "parked again after round " << round;
  }
  co_await close_then_shutdown(server, std::move(clients));
}

TEST(HttpServerPark, ParkedConnectionsAnswerTheirNextRequests) {
  run_bounded(parked_connections_answer_again());
}

// With the default timeouts the sweeper ticks once a second: a connection
// parks at once before its first and its second request, and waits in its
// task after that (100 ms against the tick's 1 s: a wide margin).
Coro<void> when_connections_park() {
  Server server(quiet());
  co_await start_hello(server);
  const std::size_t own = tasks_alive();
  RawClient c = co_await connect(server.port());
  co_await corio::sleep(100ms);
  EXPECT_EQ(tasks_alive(), own) << "a connection that sent nothing has no task";
  c.writer.write(kGetHello);
  EXPECT_EQ((co_await read_reply(c.reader)).body, "Hello, World!");
  co_await corio::sleep(100ms);
  EXPECT_EQ(tasks_alive(), own) << "parked at once after its first request";
  c.writer.write(kGetHello);
  EXPECT_EQ((co_await read_reply(c.reader)).body, "Hello, World!");
  co_await corio::sleep(100ms);
  EXPECT_EQ(tasks_alive(), own + 1) << "one that came back waits in its task";
  co_await close_then_shutdown(server, c);
}

TEST(HttpServerPark, NewConnectionsParkAtOnceBusyOnesAtTheSweepersTicks) {
  run_bounded(when_connections_park());
}

// Whether the server ended c's connection (EOF or a reset), without waiting.
bool ended_now(RawClient& c) {
  try {
    return c.reader.try_fill().has_value();  // the server sends nothing more: EOF
  } catch (const std::system_error&) {
    return true;
  }
}

// The connection parks (its task gone, the connection still open) and stays
// parked until idle_timeout ends it: sampled every 5 ms from the answer to
// the end. Without parking its task is there until the timeout ends both,
// and the test fails (waiting for the task count alone, it would not: the
// timeout brings the count down too). Seen parked twice in a row, 5 ms
// apart: the client sees the end within a loop pass of the task's.
Coro<void> parked_connection_times_out() {
  Server server(fast_ticks_idle(300ms));
  co_await start_hello(server);
  const std::size_t own = tasks_alive();
  RawClient c = co_await connect(server.port());
  c.writer.write(kGetHello);
  EXPECT_EQ((co_await read_reply(c.reader)).body, "Hello, World!");
  int parked_in_a_row = 0;
  int most_in_a_row = 0;
  bool woke = false;
  for (int i = 0; i < 1000 && !ended_now(c); ++i) {
    parked_in_a_row = tasks_alive() <= own ? parked_in_a_row + 1 : 0;
    woke = woke || (most_in_a_row > 0 && parked_in_a_row == 0);
    most_in_a_row = std::max(most_in_a_row, parked_in_a_row);
    co_await corio::sleep(5ms);
  }
  EXPECT_TRUE(ended_now(c)) << "idle_timeout ends a parked connection";
  EXPECT_GE(most_in_a_row, 2) << "the connection never parked before its end";
  EXPECT_FALSE(woke) << "a task served the parked connection before its end";
  co_await server.shutdown(1s);
}

TEST(HttpServerPark, IdleTimeoutEndsAParkedConnection) { run_bounded(parked_connection_times_out()); }

// With only parked connections and no deadline near, the sweeper does not
// wake: the loop sleeps through 300 ms but for the test's own timer. (It
// used to wake every tick, here every 10 ms: some 30 passes.)
Coro<void> parked_connections_keep_the_loop_asleep() {
  Server server(fast_ticks_idle(60s));
  co_await start_hello(server);
  const std::size_t own = tasks_alive();
  std::vector<RawClient> clients = co_await kept_alive_clients(server.port(), 5);
  CO_ASSERT(co_await tasks_down_to(own));
  co_await corio::sleep(100ms);  // past the sweeper's look a tick after they went idle
  const std::uint64_t before = corio::get_running_loop().stats().iterations;
  co_await corio::sleep(300ms);
  const std::uint64_t passes = corio::get_running_loop().stats().iterations - before;
  EXPECT_LE(passes, 5u) << "the loop woke while nothing was due";
  co_await close_then_shutdown(server, std::move(clients));
}

TEST(HttpServerPark, ParkedConnectionsKeepTheLoopAsleep) {
  run_bounded(parked_connections_keep_the_loop_asleep());
}

Coro<void> shutdown_closes_parked() {
  auto server = std::make_unique<Server>(fast_ticks());
  co_await start_hello(*server);
  const std::size_t own = tasks_alive();
  RawClient a = co_await connect(server->port());
  RawClient b = co_await connect(server->port());
  CO_ASSERT(co_await get_then_park(a, own));
  CO_ASSERT(co_await get_then_park(b, own));
  co_await server->shutdown(5s);
  EXPECT_TRUE(co_await closed_by_server(a.reader)) << "shutdown closes a parked connection";
  EXPECT_TRUE(co_await closed_by_server(b.reader));
  // The Server's end alone, with no shutdown, ends them too.
  server = std::make_unique<Server>(fast_ticks());
  co_await start_hello(*server);
  RawClient c = co_await connect(server->port());
  CO_ASSERT(co_await get_then_park(c, own));
  server.reset();
  EXPECT_TRUE(co_await closed_by_server(c.reader)) << "the Server's end closes a parked one";
}

TEST(HttpServerPark, ShutdownAndTheServersEndCloseParkedConnections) {
  run_bounded(shutdown_closes_parked());
}

// With max_connections = 1, a parked connection holds the one slot until its
// peer leaves; then the next client is served.
Coro<void> parked_connection_keeps_its_slot() {
  ServerOptions opts = fast_ticks();
  opts.max_connections = 1;
  Server server(std::move(opts));
  co_await start_hello(server);
  const std::size_t own = tasks_alive();
  RawClient a = co_await connect(server.port());
  CO_ASSERT(co_await get_then_park(a, own));
  RawClient b = co_await connect(server.port());  // in the backlog: the slot is a's
  b.writer.write(kGetHello);
  co_await corio::sleep(100ms);
  EXPECT_TRUE(b.reader.buffered().empty()) << "not served while the parked one holds the slot";
  a.writer.close();
  EXPECT_EQ((co_await read_reply(b.reader)).body, "Hello, World!") << "served once a left";
  co_await close_then_shutdown(server, b);
}

TEST(HttpServerPark, AParkedConnectionKeepsItsSlotUntilThePeerLeaves) {
  run_bounded(parked_connection_keeps_its_slot());
}

Coro<void> parked_over_tls() {
  ServerOptions opts = fast_ticks();
  opts.ssl = corio_net_test::test_server();
  Server server(std::move(opts));
  co_await start_hello(server);
  const std::size_t own = tasks_alive();
  auto [reader, writer] = co_await corio::open_connection("127.0.0.1", server.port(),
                                                         corio_net_test::tls_options());
  for (int round = 0; round < 3; ++round) {
    writer.write(kGetHello);
    EXPECT_EQ((co_await read_reply(reader)).body, "Hello, World!") << "round " << round;
    EXPECT_TRUE(co_await tasks_down_to(own)) << "parked over TLS, round " << round;
  }
  co_await close_then_shutdown(server, RawClient{reader, writer});
}

TEST(HttpServerPark, ParkedConnectionsOverTls) { run_bounded(parked_over_tls()); }

}  // namespace
}  // namespace corio_http_test
