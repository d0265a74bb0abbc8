#include <corio/pg/transaction.hpp>

#include <corio/errors.hpp>

namespace corio::pg {

Coro<Transaction> Transaction::begin(Connection& conn, std::string begin_sql) {
  try {
    co_await conn.query(std::move(begin_sql));
  } catch (...) {
    // Cancelled, the BEGIN may have run all the same: close the block it
    // may have opened (a ROLLBACK outside one is only a warning).
    conn.send_detached("ROLLBACK");
    throw;
  }
  co_return Transaction(conn);
}

Transaction::~Transaction() {
  if (open_) conn_->send_detached("ROLLBACK");
}

Coro<void> Transaction::finish(const char* sql) {
  if (!open_) throw InvalidStateError("the transaction is already finished");
  open_ = false;
  try {
    co_await conn_->query(sql);
  } catch (const CancelledError&) {
    // Whether COMMIT took effect is the server's to say; a ROLLBACK after
    // it is harmless (a warning) and closes the block if it did not.
    conn_->send_detached("ROLLBACK");
    throw;
  }
}

Coro<void> Transaction::commit() { return finish("COMMIT"); }
Coro<void> Transaction::rollback() { return finish("ROLLBACK"); }

}  // namespace corio::pg
