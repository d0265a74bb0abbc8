// corio::pg::Connection: one PostgreSQL session driven by the loop (asyncpg's
// Connection, on libpq).
//
//   pg::Connection conn = co_await pg::Connection::connect("host=127.0.0.1 port=5432 dbname=app");
//   pg::Result r = co_await conn.query("SELECT $1::int + $2::int", 40, 2);
//
// Queries are pipelined (libpq's pipeline mode, each query with its own Sync,
// so one failing query aborts only itself): tasks that query one connection
// at once all have their queries on the wire together, and results come back
// in order. A query's parameters are always sent apart from its text ($1,
// $2, ...), so a parameter can never be read as SQL.
//
// Suspends: connect() until libpq's handshake is done; query() until its
// result arrives. Resumed by the loop's reader callback on the socket.
// Cancelling the awaiting task cancels the query on the server (PQcancel on
// a worker thread, since it blocks); the connection stays usable, later
// queries wait until the cancelled one is settled. When the server goes away
// every pending query fails with ConnectionError and is_closed() is true.
//
// Server notices (NOTICE, WARNING) are dropped, not printed.
//
// Loop-affine and move-only; the loop must outlive the connection.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <corio/coro.hpp>
#include <corio/pg/copy.hpp>
#include <corio/pg/result.hpp>
#include <corio/pg/stream.hpp>
#include <corio/pg/value.hpp>

namespace corio::pg {

namespace detail {
struct ConnState;
}

struct Notification {
  std::string channel;
  std::string payload;
  int backend_pid = 0;
};

// A server-side prepared statement of one connection.
struct PreparedStatement {
  std::string name;
  int parameters = 0;  // how many $n the server saw
};

enum class TxStatus { idle, active, in_transaction, in_error, unknown };

class Connection {
 public:
  // `conninfo` is libpq's: "host=... port=... dbname=... user=..." or a
  // postgresql:// URI; sslmode and the other keywords work as in libpq.
  static Coro<Connection> connect(std::string conninfo);

  Connection(Connection&&) noexcept;
  Connection& operator=(Connection&&) noexcept;
  ~Connection();

  bool is_closed() const noexcept;
  // Fails what is pending with ConnectionError and closes the session.
  void close() noexcept;

  template <class... A>
  Coro<Result> query(std::string sql, const A&... params) {
    return query_params(std::move(sql), {pg::to_param(params)...});
  }
  Coro<Result> query_params(std::string sql, std::vector<Param> params);

  Coro<PreparedStatement> prepare(std::string sql, std::string name = {});
  template <class... A>
  Coro<Result> query(const PreparedStatement& stmt, const A&... params) {
    return query_prepared(stmt.name, {pg::to_param(params)...});
  }
  Coro<Result> query_prepared(std::string name, std::vector<Param> params);

  // Runs a script of statements separated by ';' (the simple protocol: no
  // parameters). Throws the first statement's error; the rest of the script
  // is then not run, as the server does.
  Coro<void> execute(std::string script);

  // Rows one at a time (stream.hpp) and COPY (copy.hpp): these hold the
  // connection alone until they end.
  template <class... A>
  Coro<RowStream> stream(std::string sql, const A&... params) {
    return stream_params(std::move(sql), {pg::to_param(params)...});
  }
  Coro<RowStream> stream_params(std::string sql, std::vector<Param> params);
  Coro<CopyIn> copy_in(std::string sql);
  Coro<CopyOut> copy_out(std::string sql);

  // Sends a statement whose result nobody awaits, in order with the others
  // (what a Transaction's destructor uses to roll back). Its failure, if
  // any, is dropped.
  void send_detached(std::string sql);

  // LISTEN/NOTIFY: notifications arrive whenever the connection reads, and
  // wait here in order. Those not yet taken hold at most max_unread_bytes
  // (channels and payloads, 1 MiB by default, plus one read's worth): past
  // it, with no query in flight, the connection stops reading until
  // next_notification() has taken them down to half, so the server and the
  // kernel keep the rest instead of this process (as a redis::Subscriber
  // does). A query meanwhile reads on to its result, taking in the
  // notifications before it.
  Coro<void> listen(std::string channel);
  Coro<Notification> next_notification();
  void max_unread_bytes(std::size_t n) noexcept;

  // As of the last result read: `active` while queries are in flight.
  TxStatus transaction_status() const noexcept;
  int backend_pid() const noexcept;
  // Queries sent whose results have not all arrived.
  std::size_t in_flight() const noexcept;

 private:
  explicit Connection(std::shared_ptr<detail::ConnState> s) noexcept;
  std::shared_ptr<detail::ConnState> s_;
};

}  // namespace corio::pg
