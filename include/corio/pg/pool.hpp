// corio::pg::Pool: connections shared by many tasks (asyncpg's Pool).
//
//   pg::Pool pool = co_await pg::Pool::create({.conninfo = "host=... dbname=app", .max_size = 8});
//   {
//     pg::PooledConnection conn = co_await pool.acquire();
//     co_await conn->query("UPDATE ...");
//   }  // back to the pool, reset
//   pg::Result r = co_await pool.query("SELECT ...", 42);  // the same, for one query
//
// acquire() suspends while max_size connections are out and throws
// TimeoutError after acquire_timeout. A connection handed out is healthy as
// far as the pool can tell: not closed, younger than max_lifetime, and
// checked with a round trip when it sat idle longer than health_check_after.
// On return it is reset: an open transaction rolled back, then reset_sql
// (one statement) sent; both ride the pipeline ahead of the next user's
// first query, so they cost no extra round trip. A closed connection (the
// server restarted) is dropped, and the next acquire opens a fresh one.
// Idle connections above min_size are closed after max_idle (checked at
// acquire and release; no background task).
//
// Loop-affine; PooledConnection keeps the pool's state alive.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <corio/coro.hpp>
#include <corio/pg/connection.hpp>

namespace corio::pg {

struct PoolOptions {
  std::string conninfo;
  std::size_t min_size = 1;
  std::size_t max_size = 10;
  std::chrono::duration<double> acquire_timeout = std::chrono::seconds(30);
  std::chrono::duration<double> max_idle = std::chrono::minutes(5);
  std::chrono::duration<double> max_lifetime = std::chrono::hours(1);
  std::chrono::duration<double> health_check_after = std::chrono::seconds(1);
  std::string reset_sql = "RESET ALL";  // empty: none
};

namespace detail {
struct PoolState;
}

class PooledConnection {
 public:
  PooledConnection(std::shared_ptr<detail::PoolState> pool, Connection conn, double created);
  PooledConnection(PooledConnection&&) noexcept;
  PooledConnection& operator=(PooledConnection&&) = delete;
  ~PooledConnection();

  Connection& operator*() noexcept { return conn_; }
  Connection* operator->() noexcept { return &conn_; }
  // Closes it instead of returning it (its session state is unwanted).
  void discard() noexcept { conn_.close(); }

 private:
  std::shared_ptr<detail::PoolState> pool_;
  Connection conn_;
  double created_;
};

class Pool {
 public:
  // Opens min_size connections; throws the first connection error.
  static Coro<Pool> create(PoolOptions options);
  Pool(Pool&&) noexcept;
  Pool& operator=(Pool&&) noexcept;
  ~Pool();

  Coro<PooledConnection> acquire();
  // One query on a connection borrowed for it and given back at once
  // (asyncpg's pool.fetch / pool.execute): the parameters are encoded
  // before the call returns, so temporaries may be passed.
  template <class... A>
  Coro<Result> query(std::string sql, const A&... params) {
    return query_params(std::move(sql), {pg::to_param(params)...});
  }
  Coro<Result> query_params(std::string sql, std::vector<Param> params);
  // A script (Connection::execute) on a borrowed connection.
  Coro<void> execute(std::string script);
  std::size_t size() const noexcept;  // open connections, in use or idle
  std::size_t idle() const noexcept;
  // Closes the idle connections; those in use are closed when returned.
  void close() noexcept;

 private:
  explicit Pool(std::shared_ptr<detail::PoolState> s) noexcept;
  std::shared_ptr<detail::PoolState> s_;
};

}  // namespace corio::pg
