// corio::pg::Transaction: `async with conn.transaction():` as a guard.
//
//   pg::Transaction tx = co_await pg::Transaction::begin(conn);
//   co_await conn.query("UPDATE ...");
//   co_await tx.commit();       // without it, the guard rolls back
//
// A guard destroyed before commit() or rollback() (an exception, the task
// cancelled) sends ROLLBACK at once: the pipeline keeps order, so whatever
// the connection runs next runs after it. Nothing is awaited in the
// destructor. The connection must outlive the guard.
#pragma once

#include <string>

#include <corio/coro.hpp>
#include <corio/pg/connection.hpp>

namespace corio::pg {

class Transaction {
 public:
  // `begin_sql` e.g. "BEGIN ISOLATION LEVEL SERIALIZABLE".
  static Coro<Transaction> begin(Connection& conn, std::string begin_sql = "BEGIN");

  Transaction(Transaction&& o) noexcept : conn_(o.conn_), open_(o.open_) { o.open_ = false; }
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction();

  Coro<void> commit();
  Coro<void> rollback();
  bool is_open() const noexcept { return open_; }

 private:
  explicit Transaction(Connection& conn) noexcept : conn_(&conn), open_(true) {}
  Coro<void> finish(const char* sql);

  Connection* conn_;
  bool open_;
};

}  // namespace corio::pg
