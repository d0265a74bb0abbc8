// What runs in exclusive mode besides COPY: scripts and single-row streams.
#include <corio/c_string.hpp>
#include <corio/pg/connection.hpp>
#include <corio/pg/error.hpp>
#include <corio/pg/stream.hpp>

#include "pg/conn_state.hpp"

namespace corio::pg {

namespace {

// Sends a command in exclusive mode; on any failure the connection is
// recovered (or already closed) before the error propagates.
Coro<void> send_exclusive(detail::ConnState* s, detail::Send send, bool single_row) {
  try {
    if (!detail::send_query(s->conn, send)) s->lost();
    if (single_row && !s->set_single_row_mode()) s->lost();
    co_await s->flush_all();
  } catch (...) {
    s->abort_exclusive(true);
    throw;
  }
}

}  // namespace

Coro<void> Connection::execute(std::string script) {
  check_c_string(script, "the SQL");
  auto s = s_;
  if (!s || s->closed) throw ConnectionError("connection is closed");
  co_await s->acquire_exclusive();
  try {
    // PQsendQuery: the simple protocol, the only one that runs a script.
    if (!PQsendQuery(s->conn, script.c_str())) s->lost();
    co_await s->flush_all();
    co_await s->command_results();
  } catch (...) {
    s->abort_exclusive(true);
    throw;
  }
  s->release_exclusive();
}

Coro<RowStream> Connection::stream_params(std::string sql, std::vector<Param> params) {
  detail::Send send{detail::Send::Kind::params, std::move(sql), {}, std::move(params)};
  detail::check_send(send);
  auto s = s_;
  if (!s || s->closed) throw ConnectionError("connection is closed");
  co_await s->acquire_exclusive();
  co_await send_exclusive(s.get(), std::move(send), true);
  co_return RowStream(std::move(s));
}

RowStream::RowStream(RowStream&& o) noexcept
    : s_(std::move(o.s_)), current_(std::move(o.current_)) {}

RowStream::~RowStream() {
  if (s_) s_->abort_exclusive(true);
}

Coro<bool> RowStream::next() {
  if (!s_) co_return false;
  std::exception_ptr error;
  try {
    PGresult* res = co_await s_->next_result();
    const ExecStatusType st = res ? PQresultStatus(res) : PGRES_TUPLES_OK;
    if (st == PGRES_SINGLE_TUPLE) {
      current_ = Result(res);
      co_return true;
    }
    // The zero-row end marker, or an error: the command is over on the
    // server either way, so only its end is left to read (no cancel).
    Result end(res);
    if (st == PGRES_FATAL_ERROR) error = detail::server_error(res);
    co_await s_->command_results();
  } catch (...) {
    current_ = Result();
    std::exchange(s_, nullptr)->abort_exclusive(true);
    throw;
  }
  current_ = Result();
  std::exchange(s_, nullptr)->release_exclusive();
  if (error) std::rethrow_exception(error);
  co_return false;
}

}  // namespace corio::pg
