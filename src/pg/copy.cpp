// COPY FROM STDIN / TO STDOUT in exclusive mode (copy.hpp).
#include <corio/c_string.hpp>
#include <corio/pg/connection.hpp>
#include <corio/pg/copy.hpp>
#include <corio/pg/error.hpp>

#include "pg/conn_state.hpp"

namespace corio::pg {

namespace {

// Starts a COPY and reads up to its PGRES_COPY_IN/OUT; any other outcome
// (an error, a statement that is not a COPY) is thrown, recovered first.
Coro<std::shared_ptr<detail::ConnState>> start_copy(std::shared_ptr<detail::ConnState> s,
                                                    std::string sql, ExecStatusType want) {
  check_c_string(sql, "the SQL");
  if (!s || s->closed) throw ConnectionError("connection is closed");
  co_await s->acquire_exclusive();
  std::exception_ptr error;
  try {
    if (!PQsendQuery(s->conn, sql.c_str())) s->lost();
    co_await s->flush_all();
    PGresult* res = co_await s->next_result();
    const ExecStatusType st = res ? PQresultStatus(res) : PGRES_EMPTY_QUERY;
    if (st == want) {
      PQclear(res);
      co_return s;
    }
    Result owned(res);
    if (st == PGRES_FATAL_ERROR) {
      error = detail::server_error(res);
    } else {
      error = std::make_exception_ptr(Error(
          std::string("not a COPY ") + (want == PGRES_COPY_IN ? "FROM STDIN" : "TO STDOUT")));
    }
  } catch (...) {
    s->abort_exclusive(true);
    throw;
  }
  // Recovery drains whatever the statement still sends (a COPY in the wrong
  // direction, the end of an error) before the error propagates.
  s->abort_exclusive(false);
  std::rethrow_exception(error);
}

}  // namespace

Coro<CopyIn> Connection::copy_in(std::string sql) {
  co_return CopyIn(co_await start_copy(s_, std::move(sql), PGRES_COPY_IN));
}

Coro<CopyOut> Connection::copy_out(std::string sql) {
  co_return CopyOut(co_await start_copy(s_, std::move(sql), PGRES_COPY_OUT));
}

CopyIn::CopyIn(CopyIn&& o) noexcept : s_(std::move(o.s_)) {}
CopyIn::~CopyIn() {
  if (s_) s_->abort_exclusive(false);
}

Coro<void> CopyIn::write(std::string data) {
  if (!s_) throw InvalidStateError("the COPY is over");
  try {
    int rc;
    // 0: libpq's buffer is full; send some, then it takes the data.
    while ((rc = PQputCopyData(s_->conn, data.data(), static_cast<int>(data.size()))) == 0) {
      co_await s_->flush_all();
    }
    if (rc < 0) s_->lost();
    co_await s_->flush_all();
  } catch (...) {
    std::exchange(s_, nullptr)->abort_exclusive(false);
    throw;
  }
}

Coro<long> CopyIn::finish() {
  if (!s_) throw InvalidStateError("the COPY is over");
  auto s = std::exchange(s_, nullptr);
  long stored = 0;
  try {
    int rc;
    while ((rc = PQputCopyEnd(s->conn, nullptr)) == 0) co_await s->flush_all();
    if (rc < 0) s->lost();
    co_await s->flush_all();
    stored = (co_await s->command_results()).affected();
  } catch (...) {
    s->abort_exclusive(true);
    throw;
  }
  s->release_exclusive();
  co_return stored;
}

CopyOut::CopyOut(CopyOut&& o) noexcept : s_(std::move(o.s_)) {}
CopyOut::~CopyOut() {
  if (s_) s_->abort_exclusive(true);
}

Coro<std::optional<std::string>> CopyOut::read() {
  if (!s_) co_return std::nullopt;
  try {
    for (;;) {
      char* buf = nullptr;
      const int n = PQgetCopyData(s_->conn, &buf, 1);
      if (n > 0) {
        std::string chunk(buf, static_cast<std::size_t>(n));
        PQfreemem(buf);
        co_return chunk;
      }
      if (n == -2) s_->lost();
      if (n == -1) break;
      co_await s_->read_more();
    }
    co_await s_->command_results();
  } catch (...) {
    std::exchange(s_, nullptr)->abort_exclusive(true);
    throw;
  }
  std::exchange(s_, nullptr)->release_exclusive();
  co_return std::nullopt;
}

}  // namespace corio::pg
