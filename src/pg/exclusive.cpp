// Exclusive mode of a pg connection (conn_state.hpp, invariant 4): what
// cannot be pipelined (simple-protocol scripts, single-row streams, COPY)
// runs alone, with the owner reading the socket itself.
#include <utility>

#include <corio/errors.hpp>
#include <corio/pg/error.hpp>

#include "pg/conn_state.hpp"

namespace corio::pg::detail {

Coro<void> ConnState::acquire_exclusive() {
  co_await exclusive_lock_.acquire();
  if (closed) {
    exclusive_lock_.release();
    throw ConnectionError("connection is closed");
  }
  exclusive_wanted_ = true;
  try {
    if (!inflight.empty()) {
      drained_ = loop.create_future<void>();
      Future<void> drained = drained_;
      co_await drained;
    }
  } catch (...) {
    exclusive_wanted_ = false;
    exclusive_lock_.release();
    settle();
    throw;
  }
  if (closed) {
    exclusive_lock_.release();
    throw ConnectionError("connection is closed");
  }
  loop.remove_reader(fd);
  reading_paused_ = false;  // off for exclusive mode instead; release_exclusive() puts it back
  if (PQexitPipelineMode(conn) != 1) {
    exclusive_lock_.release();
    fail("cannot leave pipeline mode: " + conn_message(conn));
    throw ConnectionError("connection is closed");
  }
  exclusive_ = true;
}

void ConnState::release_exclusive() {
  exclusive_ = false;
  exclusive_wanted_ = false;
  exclusive_lock_.release();
  if (closed) return;
  if (PQenterPipelineMode(conn) != 1) return fail("cannot enter pipeline mode");
  loop.add_reader(fd, [this] { on_readable(); });
  deliver_notifications();  // read while we were out of pipeline mode
  if (std::exchange(single_row_, false)) {
    // libpq 15 keeps single-row mode on for the first query queued in the
    // pipeline after it; a Sync of its own takes that place and resets it.
    held.push_front(make_op(Send{Send::Kind::sync, {}, {}, {}}, true));
  }
  settle();
}

bool ConnState::set_single_row_mode() {
  single_row_ = true;
  return PQsetSingleRowMode(conn) == 1;
}

void ConnState::abort_exclusive(bool cancel_server) {
  if (closed) {
    release_exclusive();
    return;
  }
  if (cancel_server && PQtransactionStatus(conn) == PQTRANS_ACTIVE) request_cancel();
  recovering_ = true;
  loop.add_reader(fd, [this] { on_readable(); });
  recover();
}

void ConnState::recover() {
  for (;;) {
    if (PQisBusy(conn)) return;  // the reader callback brings more
    PGresult* res = PQgetResult(conn);
    if (!res) break;
    const ExecStatusType st = PQresultStatus(res);
    PQclear(res);
    if (st == PGRES_COPY_IN) {
      // Ends the copy with an error on the server's side: nothing is stored.
      if (PQputCopyEnd(conn, "COPY abandoned by the client") < 0) return fail(conn_message(conn));
      schedule_flush();
    } else if (st == PGRES_COPY_OUT) {
      char* buf = nullptr;
      int n;
      while ((n = PQgetCopyData(conn, &buf, 1)) > 0) PQfreemem(buf);
      if (n == 0) return;  // more to read
      if (n == -2) return fail(conn_message(conn));
    }
  }
  if (PQstatus(conn) != CONNECTION_OK) return fail(conn_message(conn));
  recovering_ = false;
  loop.remove_reader(fd);
  release_exclusive();
}

Coro<void> ConnState::wait_socket(bool write) {
  if (closed) throw ConnectionError("connection is closed");
  co_await wait_fd(fd, write, &socket_wait_);
}

Coro<void> ConnState::read_more() {
  co_await wait_socket(false);
  if (closed) throw ConnectionError("connection is closed");
  if (!PQconsumeInput(conn)) lost();
  deliver_notifications();
}

void ConnState::lost() {
  const std::string why = conn_message(conn);
  fail(why);
  throw ConnectionError(why);
}

Coro<Result> ConnState::command_results() {
  Result last;
  std::exception_ptr error;
  for (;;) {
    // Not in the loop's condition: g++ 12 miscompiles some co_awaits there.
    PGresult* res = co_await next_result();
    if (!res) break;
    const ExecStatusType st = PQresultStatus(res);
    if (st == PGRES_FATAL_ERROR || st == PGRES_NONFATAL_ERROR || st == PGRES_BAD_RESPONSE) {
      if (!error) error = server_error(res);
      PQclear(res);
    } else {
      last = Result(res);
    }
  }
  if (PQstatus(conn) != CONNECTION_OK) lost();
  if (error) std::rethrow_exception(error);
  co_return last;
}

Coro<PGresult*> ConnState::next_result() {
  while (PQisBusy(conn)) co_await read_more();
  co_return PQgetResult(conn);
}

Coro<void> ConnState::flush_all() {
  for (;;) {
    const int rc = PQflush(conn);
    if (rc == 0) co_return;
    if (rc < 0) lost();
    co_await wait_socket(true);
    // libpq may wait for us to read what the server sent meanwhile.
    if (!PQconsumeInput(conn)) lost();
  }
}

}  // namespace corio::pg::detail
