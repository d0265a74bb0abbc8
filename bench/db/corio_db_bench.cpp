// corio's side of the db suite (bench/db/db_suite.py): PostgreSQL and Redis
// round trips, one at a time and 16 in flight on one connection, and a
// 100k-row fetch. Each workload runs for --duration seconds and prints one
// JSON line: operations per second and per CPU-second of this process
// (getrusage, user + system, over the measured window only).
//
//   corio_db_bench --pg "host=127.0.0.1 port=5432 user=postgres" --redis 127.0.0.1:6379
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <corio/corio.hpp>
#include <corio/pg.hpp>
#include <corio/redis.hpp>

using corio::Coro;
namespace pg = corio::pg;
namespace redis = corio::redis;

namespace {

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto s = [](timeval t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

struct Window {
  double wall0 = corio::get_running_loop().time(), cpu0 = cpu_seconds();
  void report(const char* metric, long ops) const {
    const double wall = corio::get_running_loop().time() - wall0, cpu = cpu_seconds() - cpu0;
    std::printf("{\"impl\": \"corio\", \"metric\": \"%s\", \"ops\": %ld, \"ops_per_s\": %.1f,"
                " \"ops_per_cpu_s\": %.1f}\n", metric, ops, ops / wall, ops / cpu);
    std::fflush(stdout);
  }
};

Coro<long> pg_selects(pg::Connection* conn, double until) {
  long n = 0;
  while (corio::get_running_loop().time() < until) {
    pg::Result r = co_await conn->query("SELECT $1::int", static_cast<int>(n));
    n += r[0].get<int>(0) == static_cast<int>(n);
  }
  co_return n;
}

Coro<long> pg_fetches(pg::Connection* conn, double until) {
  long n = 0;
  while (corio::get_running_loop().time() < until) {
    pg::Result r = co_await conn->query("SELECT g FROM generate_series(1, 100000) g");
    long sum = 0;
    for (pg::Row row : r) sum += row.get<int>(0);
    n += sum == 5000050000L;
  }
  co_return n;
}

Coro<long> redis_ops(redis::Client* r, bool set, double until) {
  long n = 0;
  const std::string value(64, 'v');
  while (corio::get_running_loop().time() < until) {
    if (set) {
      co_await r->command("SET", "bench:key", value);
    } else {
      co_await r->command("GET", "bench:key");
    }
    ++n;
  }
  co_return n;
}

// `width` copies of one loop at once: 16 on one connection is pipelining.
template <class Make>
Coro<long> concurrently(int width, Make make) {
  std::vector<Coro<long>> loops;
  for (int i = 0; i < width; ++i) loops.push_back(make());
  std::vector<long> counts = co_await corio::gather(std::move(loops));
  long total = 0;
  for (long c : counts) total += c;
  co_return total;
}

Coro<void> pg_suite(std::string dsn, double duration) {
  pg::Connection conn = co_await pg::Connection::connect(dsn);
  auto& loop = corio::get_running_loop();
  for (int width : {1, 16}) {
    Window w;
    const double until = loop.time() + duration;
    const long ops = co_await concurrently(width, [&] { return pg_selects(&conn, until); });
    w.report(width == 1 ? "pg_select_1" : "pg_select_16", ops);
  }
  Window w;
  const long fetched = co_await pg_fetches(&conn, loop.time() + duration);
  w.report("pg_fetch_100k", fetched);
}

Coro<void> redis_suite(redis::ClientOptions options, double duration) {
  redis::Client r = co_await redis::Client::connect(options);
  auto& loop = corio::get_running_loop();
  co_await r.command("SET", "bench:key", std::string(64, 'v'));
  for (int width : {1, 16}) {
    for (bool set : {false, true}) {
      Window w;
      const double until = loop.time() + duration;
      const long ops = co_await concurrently(width, [&] { return redis_ops(&r, set, until); });
      const std::string metric = std::string("redis_") + (set ? "set_" : "get_") + std::to_string(width);
      w.report(metric.c_str(), ops);
    }
  }
}

Coro<int> run(std::string dsn, std::string address, double duration) {
  if (!dsn.empty()) co_await pg_suite(dsn, duration);
  if (!address.empty()) {
    redis::ClientOptions o;
    o.host = address.substr(0, address.rfind(':'));
    o.port = std::stoi(address.substr(address.rfind(':') + 1));
    co_await redis_suite(o, duration);
  }
  co_return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dsn, address;
  double duration = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--pg")) dsn = argv[i + 1];
    else if (!std::strcmp(argv[i], "--redis")) address = argv[i + 1];
    else if (!std::strcmp(argv[i], "--duration")) duration = std::atof(argv[i + 1]);
  }
  return corio::run_main(run(dsn, address, duration));
}
