// pg::Connection against a real server: the handshake, typed values both
// ways, parameters that stay data, server errors with their fields, and
// prepared statements.
#include <cmath>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include <corio/errors.hpp>
#include <corio/task.hpp>

#include "common/value_error.hpp"
#include "pg/pg_support.hpp"

namespace {

using corio::Coro;
using namespace corio::pg;
using namespace std::chrono;
using pg_testing::connect;
using pg_testing::run_pg;

TEST(PgConnection, ConnectsAndReadsTypedColumns) {
  run_pg([]() -> Coro<void> {
    Connection conn = co_await connect();
    EXPECT_FALSE(conn.is_closed());
    EXPECT_GT(conn.backend_pid(), 0);
    Result r = co_await conn.query(
        "SELECT 42::int4 AS i, 9000000000::int8 AS big, 2.5::float8 AS f, 'hé'::text AS t,"
        " true AS b, NULL::int AS n, '\\x00ff41'::bytea AS bytes, 12.345::numeric AS num,"
        " '{\"a\": [1, 2]}'::jsonb AS j, '2024-02-29'::date AS d,"
        " '2024-02-29 12:34:56.789+02'::timestamptz AS ts, 'NaN'::float8 AS nan");
    EXPECT_EQ(r.rows(), 1);
    Row row = r[0];
    EXPECT_EQ(row.get<int>("i"), 42);
    EXPECT_EQ(row.get<long long>("big"), 9000000000LL);
    EXPECT_DOUBLE_EQ(row.get<double>("f"), 2.5);
    EXPECT_EQ(row.get<std::string>("t"), "hé");
    EXPECT_TRUE(row.get<bool>("b"));
    EXPECT_EQ(row.get<std::optional<int>>("n"), std::nullopt);
    EXPECT_TRUE(row.is_null(5));
    EXPECT_EQ(row.get<Bytea>("bytes").bytes, std::string("\0\xff" "A", 3));
    EXPECT_EQ(row.get<std::string>("num"), "12.345");
    EXPECT_EQ(row.get<nlohmann::json>("j"), nlohmann::json::parse(R"({"a": [1, 2]})"));
    EXPECT_EQ(row.get<Date>("d"), sys_days(year(2024) / February / 29));
    const Timestamp want = sys_days(year(2024) / February / 29) + 10h + 34min + 56s + 789ms;
    EXPECT_EQ(row.get<Timestamp>("ts"), want);
    EXPECT_TRUE(std::isnan(row.get<double>("nan")));
  }());
}

TEST(PgConnection, ParametersRoundTripEveryType) {
  run_pg([]() -> Coro<void> {
    Connection conn = co_await connect();
    const std::string bytes("a\0b\xff\n'", 6);
    const Timestamp ts = sys_days(year(1999) / December / 31) + 23h + 59min + 59s + 123456us;
    const nlohmann::json doc = {{"k", "v"}, {"n", 3}};
    // Built before the co_await: g++ 12 destroys temporaries inside a
    // co_await expression twice.
    const std::string text = "it's \"quoted\"\n";
    const Bytea blob{bytes};
    const std::optional<int> null;
    const Date day = sys_days(year(2000) / January / 1);
    Coro<Result> q = conn.query(
        "SELECT $1::int8, $2::float8, $3::text, $4::bool, $5::bytea, $6::int, $7::jsonb,"
        " $8::date, $9::timestamptz, $10::numeric",
        -1234567890123LL, 0.1, text, false, blob, null, doc, day, ts, "1e-3");
    Result r = co_await std::move(q);
    Row row = r[0];
    EXPECT_EQ(row.get<long long>(0), -1234567890123LL);
    EXPECT_EQ(row.get<double>(1), 0.1);  // shortest round-trip text: exact
    EXPECT_EQ(row.get<std::string>(2), "it's \"quoted\"\n");
    EXPECT_FALSE(row.get<bool>(3));
    EXPECT_EQ(row.get<Bytea>(4).bytes, bytes);
    EXPECT_FALSE(row.get<std::optional<int>>(5).has_value());
    EXPECT_EQ(row.get<nlohmann::json>(6), doc);
    EXPECT_EQ(row.get<Date>(7), sys_days(year(2000) / January / 1));
    EXPECT_EQ(row.get<Timestamp>(8), ts);
    EXPECT_EQ(row.get<std::string>(9), "0.001");
  }());
}

TEST(PgConnection, ParametersCarryingSqlStayData) {
  run_pg([]() -> Coro<void> {
    Connection conn = co_await connect();
    co_await conn.query("CREATE TEMP TABLE victims (name text)");
    const std::string evil = "x'); DROP TABLE victims; --";
    Result ins = co_await conn.query("INSERT INTO victims VALUES ($1)", evil);
    EXPECT_EQ(ins.affected(), 1);
    const std::string evil2 = "' OR '1'='1";
    Result none = co_await conn.query("SELECT count(*) FROM victims WHERE name = $1", evil2);
    EXPECT_EQ(none[0].get<int>(0), 0);
    Result all = co_await conn.query("SELECT name FROM victims");
    EXPECT_EQ(all.rows(), 1);
    EXPECT_EQ(all[0].get<std::string>(0), evil);
  }());
}

TEST(PgConnection, ServerErrorsCarryTheirFieldsAndTheConnectionGoesOn) {
  run_pg([]() -> Coro<void> {
    Connection conn = co_await connect();
    try {
      co_await conn.query("SELECT nothing FROM no_such_table");
      ADD_FAILURE() << "no error";
    } catch (const ServerError& e) {
      EXPECT_EQ(e.sqlstate(), "42P01");
      EXPECT_NE(e.message().find("no_such_table"), std::string::npos);
      EXPECT_EQ(e.position(), 21);
      EXPECT_EQ(e.severity(), "ERROR");
      EXPECT_NE(std::string(e.what()).find("42P01"), std::string::npos);
    }
    try {
      co_await conn.query("CREATE TEMP TABLE u (k int PRIMARY KEY)");
      co_await conn.query("INSERT INTO u VALUES (1), (1)");
      ADD_FAILURE() << "no error";
    } catch (const ServerError& e) {
      EXPECT_EQ(e.sqlstate(), "23505");
      EXPECT_NE(e.detail().find("(k)=(1)"), std::string::npos);
    }
    Result r = co_await conn.query("SELECT 1");
    EXPECT_EQ(r[0].get<int>(0), 1);
  }());
}

TEST(PgConnection, WrongTypesAndNullsAreDecodeErrors) {
  run_pg([]() -> Coro<void> {
    Connection conn = co_await connect();
    Result r = co_await conn.query("SELECT 'abc'::text AS word, NULL::int AS nothing, 70000");
    EXPECT_THROW(r[0].get<int>("word"), DecodeError);
    EXPECT_THROW(r[0].get<int>("nothing"), DecodeError);
    EXPECT_THROW(r[0].get<short>(2), DecodeError);
    EXPECT_THROW(r[0].get<int>("missing"), std::out_of_range);
    EXPECT_THROW(r.at(1), std::out_of_range);
  }());
}

TEST(PgConnection, PreparedStatementsKnowTheirParameters) {
  run_pg([]() -> Coro<void> {
    Connection conn = co_await connect();
    PreparedStatement twice = co_await conn.prepare("SELECT $1::int * 2, $2::text");
    EXPECT_EQ(twice.parameters, 2);
    for (int i = 0; i < 3; ++i) {
      Result r = co_await conn.query(twice, i, "p");
      EXPECT_EQ(r[0].get<int>(0), 2 * i);
      EXPECT_EQ(r[0].get<std::string>(1), "p");
    }
    PreparedStatement named = co_await conn.prepare("SELECT 7", "seven");
    EXPECT_EQ(named.name, "seven");
    EXPECT_EQ((co_await conn.query(named))[0].get<int>(0), 7);
    EXPECT_THROW(co_await conn.prepare("SELECT 8", "seven"), ServerError);  // 42P05
  }());
}

Coro<long> count_rows(Connection* conn) {
  Result r = co_await conn->query("SELECT g, md5(g::text) FROM generate_series(1, 50000) g");
  co_return r.rows();
}

TEST(PgConnection, TlsThroughSslmodeCarriesPipelinedQueriesAndLargeResults) {
  run_pg([]() -> Coro<void> {
    std::string conninfo = pg_testing::conninfo();
    conninfo.replace(conninfo.find("sslmode=disable"), 15, "sslmode=require");
    Connection conn = co_await Connection::connect(conninfo);
    Result ssl = co_await conn.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()");
    EXPECT_TRUE(ssl[0].get<bool>(0));
    // libpq decrypts whole TLS records: data it holds must not wait for
    // the socket to turn readable again.
    corio::Task<long> a = corio::create_task(count_rows(&conn));
    corio::Task<long> b = corio::create_task(count_rows(&conn));
    EXPECT_EQ(co_await a, 50000);
    EXPECT_EQ(co_await b, 50000);
    RowStream rows = co_await conn.stream("SELECT g FROM generate_series(1, 20000) g");
    long streamed = 0;
    while (co_await rows.next()) ++streamed;
    EXPECT_EQ(streamed, 20000);
  }());
}

// Whether awaiting what make() starts throws ValueError naming the NUL.
template <class F>
Coro<bool> refused(F make) {
  return corio_testing::raises_value_error(std::move(make), "NUL");
}

// libpq takes SQL and text-format values as C strings: a NUL would end them
// early ("admin\0' OR true --" compared as "admin"). Each is refused before
// anything is sent, and the connection goes on; bytea carries any byte.
TEST(PgConnection, NulInTextIsRefusedBeforeSending) {
  run_pg([]() -> Coro<void> {
    Connection conn = co_await connect();
    const std::string evil("admin\0' OR true --", 18);
    const std::string sql("SELECT 1\0; SELECT 2", 19);
    PreparedStatement stmt = co_await conn.prepare("SELECT $1::text");
    EXPECT_TRUE(co_await refused([&] { return conn.query("SELECT $1::text", evil); }));
    EXPECT_TRUE(co_await refused([&] { return conn.query(stmt, evil); }));
    EXPECT_TRUE(co_await refused([&] { return conn.query(sql); }));
    EXPECT_TRUE(co_await refused([&] { return conn.prepare(sql); }));
    EXPECT_TRUE(co_await refused([&] { return conn.execute(sql); }));
    EXPECT_TRUE(co_await refused([&] { return conn.stream("SELECT $1::text", evil); }));
    EXPECT_TRUE(co_await refused([&] { return conn.copy_out(sql); }));
    EXPECT_TRUE(co_await refused([&] { return conn.listen(std::string("chan\0nel", 8)); }));
    const std::string conninfo = pg_testing::conninfo() + std::string("\0 dbname=other", 14);
    EXPECT_TRUE(co_await refused([&] { return Connection::connect(conninfo); }));

    const Bytea blob{evil};
    Result r = co_await conn.query("SELECT $1::bytea, $2::text", blob, "after");
    EXPECT_EQ(r[0].get<Bytea>(0).bytes, evil);
    EXPECT_EQ(r[0].get<std::string>(1), "after");
    EXPECT_EQ(conn.transaction_status(), TxStatus::idle);
  }());
}

TEST(PgConnection, RefusedConnectIsAConnectionError) {
  run_pg([]() -> Coro<void> {
    // A port nobody listens on: the shared server's, plus a closed one.
    EXPECT_THROW(co_await Connection::connect("host=127.0.0.1 port=1 connect_timeout=5"),
                 ConnectionError);
  }());
}

}  // namespace
