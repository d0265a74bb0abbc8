// pg::Pool against a real server: bounds and acquire timeouts, reuse, reset
// on return, and recovery after the server restarts under it.
#include <string>

#include <nlohmann/json.hpp>

#include <corio/sleep.hpp>
#include <corio/task.hpp>
#include <corio/to_thread.hpp>

#include "pg/pg_support.hpp"

namespace {

using corio::Coro;
using namespace corio::pg;
using namespace std::chrono_literals;
using pg_testing::run_pg;

PoolOptions options(std::string conninfo, std::size_t min, std::size_t max) {
  PoolOptions o;
  o.conninfo = std::move(conninfo);
  o.min_size = min;
  o.max_size = max;
  o.acquire_timeout = 200ms;
  return o;
}

Coro<std::string> setting(Connection& conn) {
  Result r = co_await conn.query("SELECT current_setting('statement_timeout')");
  co_return r[0].get<std::string>(0);
}

TEST(PgPool, BoundsConnectionsAndTimesOutAcquire) {
  run_pg([]() -> Coro<void> {
    Pool pool = co_await Pool::create(options(pg_testing::conninfo(), 1, 2));
    EXPECT_EQ(pool.size(), 1u);
    PooledConnection a = co_await pool.acquire();
    PooledConnection b = co_await pool.acquire();
    EXPECT_EQ(pool.size(), 2u);
    EXPECT_NE(a->backend_pid(), b->backend_pid());
    EXPECT_THROW(co_await pool.acquire(), corio::TimeoutError);
    const int pid = a->backend_pid();
    { PooledConnection gone = std::move(a); }
    PooledConnection c = co_await pool.acquire();
    EXPECT_EQ(c->backend_pid(), pid);  // reused, not reopened
    EXPECT_EQ(pool.size(), 2u);
  }());
}

// pool.query(): a connection borrowed for one query and back at once; the
// result as JSON by column type (nlohmann's conversion, asyncpg's dict(row)).
TEST(PgPool, QueryBorrowsForOneQueryAndRowsBecomeJson) {
  run_pg([]() -> Coro<void> {
    Pool pool = co_await Pool::create(options(pg_testing::conninfo(), 1, 1));
    co_await pool.execute("SELECT 1; SELECT 2");
    const Result r = co_await pool.query(
        "SELECT $1::int AS n, $2::text AS s, true AS b, 1.5::float8 AS f, NULL::int AS z,"
        " '{\"a\": [1]}'::jsonb AS j, 2.25::numeric AS d, '2024-01-02'::date AS day",
        7, std::string("x"));
    EXPECT_EQ(pool.idle(), 1u) << "given back once the result is in";
    const nlohmann::json rows = r;
    EXPECT_EQ(rows, nlohmann::json::parse(R"([{"n": 7, "s": "x", "b": true, "f": 1.5, "z": null,
        "j": {"a": [1]}, "d": 2.25, "day": "2024-01-02"}])"));
    EXPECT_EQ(nlohmann::json(r[0]), rows[0]);
    PooledConnection again = co_await pool.acquire();  // max_size 1: it was returned
    EXPECT_FALSE(again->is_closed());
  }());
}

Coro<int> leave_dirty(Pool* pool) {
  PooledConnection conn = co_await pool->acquire();
  co_await conn->query("SET statement_timeout = '123s'");
  co_await conn->query("BEGIN");
  co_await conn->query("CREATE TABLE pool_leak (x int)");
  co_return conn->backend_pid();
}

TEST(PgPool, ConnectionsAreResetOnReturn) {
  run_pg([]() -> Coro<void> {
    Pool pool = co_await Pool::create(options(pg_testing::conninfo(), 1, 1));
    const int pid = co_await leave_dirty(&pool);
    PooledConnection conn = co_await pool.acquire();
    EXPECT_EQ(conn->backend_pid(), pid);
    EXPECT_EQ(co_await setting(*conn), "0");
    EXPECT_EQ(conn->transaction_status(), TxStatus::idle);  // once the reset has run
    Result r = co_await conn->query("SELECT to_regclass('pool_leak') IS NULL");
    EXPECT_TRUE(r[0].get<bool>(0));  // the open transaction was rolled back
  }());
}

Coro<void> restart(corio_testing::DbServer* server) {
  co_await corio::to_thread([server] { server->restart(); });
}

TEST(PgPool, RecoversAfterTheServerRestarts) {
  corio_testing::DbServer server("pg");
  run_pg([](corio_testing::DbServer* server) -> Coro<void> {
    Pool pool = co_await Pool::create(options(server->address(), 2, 2));
    const int before = (co_await pool.acquire())->backend_pid();
    co_await restart(server);
    // Every old connection is dead; the pool hands out a fresh one.
    for (int i = 0; i < 3; ++i) {
      PooledConnection conn = co_await pool.acquire();
      EXPECT_NE(conn->backend_pid(), before);
      Result r = co_await conn->query("SELECT 1");
      EXPECT_EQ(r[0].get<int>(0), 1);
    }
    EXPECT_LE(pool.size(), 2u);
  }(&server));
}

TEST(PgPool, RejectsImpossibleSizes) {
  run_pg([]() -> Coro<void> {
    EXPECT_THROW(co_await Pool::create(options(pg_testing::conninfo(), 3, 2)), corio::ValueError);
  }());
}

}  // namespace
