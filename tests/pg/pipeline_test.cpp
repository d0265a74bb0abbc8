// Many queries on one connection, and what ends them early: pipelining,
// cancellation and timeouts that cancel on the server, transactions rolled
// back by their guard, LISTEN/NOTIFY, large results, and a server restarted
// under a query.
#include <optional>
#include <string>
#include <vector>

#include <corio/gather.hpp>
#include <corio/sleep.hpp>
#include <corio/task.hpp>
#include <corio/to_thread.hpp>

#include "pg/pg_support.hpp"

namespace {

using corio::Coro;
using namespace corio::pg;
using namespace std::chrono_literals;
using pg_testing::connect;
using pg_testing::run_pg;

Coro<int> times_two(Connection* conn, int i) {
  Result r = co_await conn->query("SELECT $1::int * 2", i);
  co_return r[0].get<int>(0);
}

Coro<std::string> fails(Connection* conn) {
  try {
    co_await conn->query("SELECT 1/0");
  } catch (const ServerError& e) {
    co_return e.sqlstate();
  }
  co_return "no error";
}

TEST(PgPipeline, ConcurrentQueriesShareTheWireAndKeepTheirOrder) {
  run_pg([]() -> Coro<void> {
    Connection conn = co_await connect();
    std::vector<corio::Task<int>> tasks;
    for (int i = 0; i < 16; ++i) tasks.push_back(corio::create_task(times_two(&conn, i)));
    corio::Task<std::string> bad = corio::create_task(fails(&conn));
    co_await corio::sleep(0s);  // every task has sent its query by now
    EXPECT_EQ(conn.in_flight(), 17u);
    std::vector<int> got = co_await corio::gather(std::move(tasks));
    for (int i = 0; i < 16; ++i) EXPECT_EQ(got[static_cast<std::size_t>(i)], 2 * i);
    // A failing query fails alone: its Sync ends the aborted segment.
    EXPECT_EQ(co_await bad, "22012");
    EXPECT_EQ(co_await times_two(&conn, 21), 42);
    EXPECT_EQ(conn.in_flight(), 0u);
  }());
}

Coro<bool> sleeping_elsewhere(Connection* watcher, int pid) {
  Result r = co_await watcher->query(
      "SELECT count(*) FROM pg_stat_activity WHERE pid = $1 AND state = 'active'", pid);
  co_return r[0].get<int>(0) == 1;
}

// Waits (on the server's word) until the backend `pid` runs a query.
Coro<void> until_active(Connection* watcher, int pid) {
  for (;;) {
    // Not in the loop's condition: g++ 12 miscompiles a co_await there.
    const bool active = co_await sleeping_elsewhere(watcher, pid);
    if (active) break;
    co_await corio::sleep(10ms);
  }
}

Coro<void> sleep_on_server(Connection* conn) { co_await conn->query("SELECT pg_sleep(60)"); }

TEST(PgPipeline, CancellingTheTaskCancelsTheQueryOnTheServer) {
  run_pg([]() -> Coro<void> {
    Connection conn = co_await connect();
    Connection watcher = co_await connect();
    const auto started = std::chrono::steady_clock::now();
    corio::Task<void> t = corio::create_task(sleep_on_server(&conn));
    co_await until_active(&watcher, conn.backend_pid());
    // Queued behind the cancelled query: held until it is settled, then run.
    corio::Task<int> after = corio::create_task(times_two(&conn, 5));
    t.cancel();
    EXPECT_THROW(co_await t, corio::CancelledError);
    EXPECT_EQ(co_await after, 10);
    EXPECT_FALSE(co_await sleeping_elsewhere(&watcher, conn.backend_pid()));
    EXPECT_LT(std::chrono::steady_clock::now() - started, 30s);  // not pg_sleep's 60 s
    EXPECT_FALSE(conn.is_closed());
    EXPECT_EQ(conn.in_flight(), 0u);
  }());
}

TEST(PgPipeline, TimeoutCancelsASlowQueryAndTheConnectionStaysUsable) {
  run_pg([]() -> Coro<void> {
    Connection conn = co_await connect();
    const auto started = std::chrono::steady_clock::now();
    Coro<Result> slow = conn.query("SELECT pg_sleep(60)");
    EXPECT_THROW(co_await corio::wait_for(std::move(slow), 200ms), corio::TimeoutError);
    EXPECT_EQ(co_await times_two(&conn, 4), 8);
    EXPECT_LT(std::chrono::steady_clock::now() - started, 30s);
  }());
}

Coro<void> transfer(Connection* conn, bool fail) {
  Transaction tx = co_await Transaction::begin(*conn);
  co_await conn->query("UPDATE accounts SET balance = balance - 10 WHERE id = 1");
  co_await conn->query("UPDATE accounts SET balance = balance + 10 WHERE id = 2");
  if (fail) throw std::runtime_error("changed my mind");
  co_await tx.commit();
}

Coro<void> transfer_then_sleep(Connection* conn) {
  Transaction tx = co_await Transaction::begin(*conn);
  co_await conn->query("UPDATE accounts SET balance = 0 WHERE id = 1");
  co_await conn->query("SELECT pg_sleep(60)");
  co_await tx.commit();
}

Coro<std::vector<int>> balances(Connection* conn) {
  Result r = co_await conn->query("SELECT balance FROM accounts ORDER BY id");
  std::vector<int> out;
  for (Row row : r) out.push_back(row.get<int>(0));
  co_return out;
}

TEST(PgTransaction, CommitsExplicitlyAndRollsBackOnExceptionOrCancellation) {
  run_pg([]() -> Coro<void> {
    const std::vector<int> after_one{90, 10};
    Connection conn = co_await connect();
    co_await conn.query("CREATE TEMP TABLE accounts (id int PRIMARY KEY, balance int)");
    co_await conn.query("INSERT INTO accounts VALUES (1, 100), (2, 0)");
    co_await transfer(&conn, false);
    EXPECT_EQ(co_await balances(&conn), after_one);
    EXPECT_THROW(co_await transfer(&conn, true), std::runtime_error);
    EXPECT_EQ(co_await balances(&conn), after_one);
    EXPECT_EQ(conn.transaction_status(), TxStatus::idle);

    Connection watcher = co_await connect();
    corio::Task<void> t = corio::create_task(transfer_then_sleep(&conn));
    co_await until_active(&watcher, conn.backend_pid());
    t.cancel();
    EXPECT_THROW(co_await t, corio::CancelledError);
    EXPECT_EQ(co_await balances(&conn), after_one);
    EXPECT_EQ(conn.transaction_status(), TxStatus::idle);
  }());
}

TEST(PgTransaction, FinishingTwiceIsAnError) {
  run_pg([]() -> Coro<void> {
    Connection conn = co_await connect();
    const std::string begin = "BEGIN ISOLATION LEVEL SERIALIZABLE";
    Transaction tx = co_await Transaction::begin(conn, begin);
    EXPECT_EQ(conn.transaction_status(), TxStatus::in_transaction);
    co_await tx.rollback();
    EXPECT_FALSE(tx.is_open());
    EXPECT_THROW(co_await tx.commit(), corio::InvalidStateError);
  }());
}

TEST(PgNotify, NotificationsArriveInOrderAsAnAsyncSequence) {
  run_pg([]() -> Coro<void> {
    Connection listener = co_await connect();
    Connection sender = co_await connect();
    co_await listener.listen("Jobs Channel");  // quoted as an identifier
    for (int i = 0; i < 3; ++i) {
      co_await sender.query("SELECT pg_notify('Jobs Channel', $1)", "job " + std::to_string(i));
    }
    for (int i = 0; i < 3; ++i) {
      Notification n = co_await listener.next_notification();
      EXPECT_EQ(n.channel, "Jobs Channel");
      EXPECT_EQ(n.payload, "job " + std::to_string(i));
      EXPECT_EQ(n.backend_pid, sender.backend_pid());
    }
  }());
}

TEST(PgPipeline, LargeResultsArriveWhole) {
  run_pg([]() -> Coro<void> {
    Connection conn = co_await connect();
    Result r = co_await conn.query("SELECT g, repeat('x', 100) FROM generate_series(1, $1) g",
                                   200000);
    EXPECT_EQ(r.rows(), 200000);
    EXPECT_EQ(r[199999].get<int>(0), 200000);
    EXPECT_EQ(r[123].get<std::string_view>(1).size(), 100u);
  }());
}

Coro<void> restart_server(corio_testing::DbServer* server) {
  co_await corio::to_thread([server] { server->restart(); });
}

TEST(PgFaults, ServerRestartedMidQueryFailsClearlyAndANewConnectionWorks) {
  corio_testing::DbServer server("pg");
  run_pg([](corio_testing::DbServer* server) -> Coro<void> {
    Connection conn = co_await Connection::connect(server->address());
    Connection watcher = co_await Connection::connect(server->address());
    corio::Task<void> t = corio::create_task(sleep_on_server(&conn));
    co_await until_active(&watcher, conn.backend_pid());
    co_await restart_server(server);
    EXPECT_THROW(co_await t, ConnectionError);
    EXPECT_TRUE(conn.is_closed());
    EXPECT_THROW(co_await conn.query("SELECT 1"), ConnectionError);
    Connection again = co_await Connection::connect(server->address());
    EXPECT_EQ(co_await times_two(&again, 3), 6);
  }(&server));
}

}  // namespace
