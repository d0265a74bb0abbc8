// What runs alone on a connection: scripts, rows streamed one at a time
// with bounded memory, and COPY both ways; each also abandoned midway, after
// which the connection must be usable.
#include <fstream>
#include <string>

#include <corio/detail/sanitizers.hpp>
#include <corio/gather.hpp>
#include <corio/sleep.hpp>
#include <corio/task.hpp>

#include "pg/pg_support.hpp"

namespace {

using corio::Coro;
using namespace corio::pg;
using namespace std::chrono_literals;
using pg_testing::connect;
using pg_testing::run_pg;

Coro<int> one_value(Connection* conn, std::string sql) {
  Result r = co_await conn->query(std::move(sql));
  co_return r[0].get<int>(0);
}

// Sanitizers keep freed memory quarantined: resident size says nothing there.
using corio::detail::kSanitized;

long resident_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return 0;
}

TEST(PgScript, ExecuteRunsManyStatementsAndStopsAtTheFirstError) {
  run_pg([]() -> Coro<void> {
    Connection conn = co_await connect();
    co_await conn.execute(
        "CREATE TEMP TABLE s (v int); INSERT INTO s VALUES (1); INSERT INTO s VALUES (2)");
    EXPECT_EQ(co_await one_value(&conn, "SELECT sum(v)::int FROM s"), 3);
    try {
      co_await conn.execute("INSERT INTO s VALUES (10); SELECT 1/0; INSERT INTO s VALUES (20)");
      ADD_FAILURE() << "no error";
    } catch (const ServerError& e) {
      EXPECT_EQ(e.sqlstate(), "22012");
    }
    // One implicit transaction: the first INSERT went with the error.
    EXPECT_EQ(co_await one_value(&conn, "SELECT sum(v)::int FROM s"), 3);
  }());
}

TEST(PgStream, HugeResultsStreamInBoundedMemory) {
  run_pg([]() -> Coro<void> {
    Connection conn = co_await connect();
    // 400k rows of 200 bytes: about 80 MB were it held whole.
    RowStream rows = co_await conn.stream(
        "SELECT g, repeat('y', 200) FROM generate_series(1, $1) g", 400000);
    const long before = resident_kib();
    long peak = before;
    long count = 0, sum = 0;
    while (co_await rows.next()) {
      ++count;
      sum += rows.row().get<int>(0);
      if (count % 10000 == 0) peak = std::max(peak, resident_kib());
    }
    EXPECT_EQ(count, 400000);
    EXPECT_EQ(sum, 400000L * 400001L / 2);
    if (!kSanitized) {
      EXPECT_LT(peak - before, 20 * 1024) << "KiB grown while streaming";
    }
    EXPECT_EQ(co_await one_value(&conn, "SELECT 5"), 5);
  }());
}

TEST(PgStream, ErrorMidStreamIsThrownAfterTheRowsBeforeIt) {
  run_pg([]() -> Coro<void> {
    Connection conn = co_await connect();
    RowStream rows = co_await conn.stream("SELECT 10 / (5 - g) FROM generate_series(1, 10) g");
    int seen = 0;
    try {
      while (co_await rows.next()) ++seen;
      ADD_FAILURE() << "no error";
    } catch (const ServerError& e) {
      EXPECT_EQ(e.sqlstate(), "22012");
    }
    EXPECT_LE(seen, 4);
    EXPECT_FALSE(co_await rows.next());
    EXPECT_EQ(co_await one_value(&conn, "SELECT 6"), 6);
  }());
}

Coro<void> read_a_few(Connection* conn) {
  // In the select list the set-returning function streams (FROM would
  // materialize all of it before the first row).
  RowStream rows = co_await conn->stream("SELECT generate_series(1, 1000000000)");
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(co_await rows.next());
}  // abandoned here: cancelled on the server, drained

TEST(PgStream, AbandonedStreamIsCancelledAndTheConnectionGoesOn) {
  run_pg([]() -> Coro<void> {
    Connection conn = co_await connect();
    const auto started = std::chrono::steady_clock::now();
    co_await read_a_few(&conn);
    // Queued while the recovery runs; sent once it is done.
    EXPECT_EQ(co_await one_value(&conn, "SELECT 7"), 7);
    EXPECT_LT(std::chrono::steady_clock::now() - started, 30s);
    EXPECT_FALSE(conn.is_closed());
  }());
}

TEST(PgStream, QueriesFromOtherTasksWaitForTheStream) {
  run_pg([]() -> Coro<void> {
    Connection conn = co_await connect();
    RowStream rows = co_await conn.stream("SELECT g FROM generate_series(1, 1000) g");
    corio::Task<int> other = corio::create_task(one_value(&conn, "SELECT 8"));
    int count = 0;
    while (co_await rows.next()) ++count;
    EXPECT_EQ(count, 1000);
    EXPECT_EQ(co_await other, 8);
  }());
}

Coro<void> close_soon(Connection* conn) {
  co_await corio::sleep(50ms);
  conn->close();
}

TEST(PgStream, ClosingTheConnectionEndsAWaitingStream) {
  run_pg([]() -> Coro<void> {
    Connection conn = co_await connect();
    RowStream rows = co_await conn.stream("SELECT pg_sleep(60)");
    corio::Task<void> closer = corio::create_task(close_soon(&conn));
    EXPECT_THROW(co_await rows.next(), ConnectionError);
    co_await closer;
    EXPECT_TRUE(conn.is_closed());
    EXPECT_THROW(co_await conn.query("SELECT 1"), ConnectionError);
  }());
}

TEST(PgCopy, CopyInThenCopyOutRoundTrips) {
  run_pg([]() -> Coro<void> {
    Connection conn = co_await connect();
    co_await conn.query("CREATE TEMP TABLE items (id int, name text)");
    CopyIn in = co_await conn.copy_in("COPY items (id, name) FROM STDIN");
    std::string batch;
    for (int i = 1; i <= 20000; ++i) {
      batch += std::to_string(i) + "\titem " + std::to_string(i) + "\n";
      if (i % 1000 == 0) co_await in.write(std::exchange(batch, {}));
    }
    EXPECT_EQ(co_await in.finish(), 20000);
    EXPECT_EQ(co_await one_value(&conn, "SELECT count(*)::int FROM items"), 20000);

    CopyOut out = co_await conn.copy_out("COPY (SELECT * FROM items ORDER BY id) TO STDOUT");
    int rows = 0;
    std::string first;
    while (auto chunk = co_await out.read()) {
      if (rows++ == 0) first = *chunk;
    }
    EXPECT_EQ(rows, 20000);
    EXPECT_EQ(first, "1\titem 1\n");
  }());
}

Coro<void> copy_without_finish(Connection* conn) {
  CopyIn in = co_await conn->copy_in("COPY items2 FROM STDIN");
  co_await in.write("1\n2\n");
}

TEST(PgCopy, BadDataOrAnUnfinishedCopyStoresNothing) {
  run_pg([]() -> Coro<void> {
    Connection conn = co_await connect();
    co_await conn.query("CREATE TEMP TABLE items2 (id int)");
    CopyIn in = co_await conn.copy_in("COPY items2 FROM STDIN");
    co_await in.write("1\nnot a number\n");
    EXPECT_THROW(co_await in.finish(), ServerError);  // 22P02
    co_await copy_without_finish(&conn);
    EXPECT_EQ(co_await one_value(&conn, "SELECT count(*)::int FROM items2"), 0);
    EXPECT_THROW(co_await conn.copy_in("SELECT 1"), Error);
    EXPECT_THROW(co_await conn.copy_out("COPY items2 FROM STDIN"), Error);
    EXPECT_EQ(co_await one_value(&conn, "SELECT 9"), 9);
  }());
}

}  // namespace
