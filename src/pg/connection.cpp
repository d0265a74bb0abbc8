// pg::Connection: the handshake on the loop, and each awaited query as an
// Op of the pipeline (conn_state.cpp).
#include <corio/pg/connection.hpp>

#include <utility>

#include <corio/c_string.hpp>
#include <corio/errors.hpp>
#include <corio/pg/error.hpp>

#include "pg/conn_state.hpp"

namespace corio::pg {

Connection::Connection(std::shared_ptr<detail::ConnState> s) noexcept : s_(std::move(s)) {}
Connection::Connection(Connection&&) noexcept = default;
Connection& Connection::operator=(Connection&&) noexcept = default;
Connection::~Connection() = default;

Coro<Connection> Connection::connect(std::string conninfo) {
  // A NUL would drop the keywords after it (an sslmode=require, say).
  check_c_string(conninfo, "conninfo");
  PGconn* raw = PQconnectStart(conninfo.c_str());
  if (!raw) throw ConnectionError("out of memory");
  // Owns raw from here; its close() finishes it, on every way out.
  auto s = std::make_shared<detail::ConnState>(get_running_loop(), raw);
  if (PQstatus(raw) == CONNECTION_BAD) throw ConnectionError(detail::conn_message(raw));
  // libpq's documented loop: wait for what PQconnectPoll asks, then poll
  // again. The socket can change while it tries the hosts of a list.
  PostgresPollingStatusType poll = PGRES_POLLING_WRITING;
  while (poll != PGRES_POLLING_OK) {
    if (poll == PGRES_POLLING_FAILED) throw ConnectionError(detail::conn_message(raw));
    co_await detail::wait_fd(PQsocket(raw), poll == PGRES_POLLING_WRITING);
    poll = PQconnectPoll(raw);
  }
  s->start();
  co_return Connection(std::move(s));
}

bool Connection::is_closed() const noexcept { return !s_ || s_->closed; }

void Connection::close() noexcept {
  if (s_) s_->close("connection closed");
}

namespace {

// Awaits one Op; a cancelled awaiter hands the Op back to the pipeline,
// which drops its result (and cancels it on the server when it can).
Coro<Result> await_op(std::shared_ptr<detail::ConnState> s, detail::Send send) {
  if (!s) throw ConnectionError("connection is closed (moved from)");
  detail::Op& op = s->submit(std::move(send), false);
  const std::uint64_t id = op.id;
  Future<Result> done = op.done;
  try {
    co_return co_await done;
  } catch (const CancelledError&) {
    s->abandon(id);
    throw;
  }
}

}  // namespace

Coro<Result> Connection::query_params(std::string sql, std::vector<Param> params) {
  detail::Send send{detail::Send::Kind::params, std::move(sql), {}, std::move(params)};
  return await_op(s_, std::move(send));
}

Coro<Result> Connection::query_prepared(std::string name, std::vector<Param> params) {
  detail::Send send{detail::Send::Kind::prepared, std::move(name), {}, std::move(params)};
  return await_op(s_, std::move(send));
}

Coro<PreparedStatement> Connection::prepare(std::string sql, std::string name) {
  if (is_closed()) throw ConnectionError("connection is closed");
  if (name.empty()) name = "corio_" + std::to_string(++s_->statements);
  detail::Send send{detail::Send::Kind::prepare, std::move(sql), name, {}};
  Result described = co_await await_op(s_, std::move(send));
  co_return PreparedStatement{std::move(name), PQnparams(described.native())};
}

void Connection::send_detached(std::string sql) {
  if (is_closed()) return;
  s_->submit(detail::Send{detail::Send::Kind::params, std::move(sql), {}, {}}, true);
}

Coro<void> Connection::listen(std::string channel) {
  // PQescapeIdentifier stops at a NUL: it would LISTEN on a shorter name.
  check_c_string(channel, "a channel name");
  if (is_closed()) throw ConnectionError("connection is closed");
  // LISTEN takes an identifier, not a parameter: quote it as one.
  char* quoted = PQescapeIdentifier(s_->conn, channel.data(), channel.size());
  if (!quoted) throw Error(detail::conn_message(s_->conn));
  std::string sql = std::string("LISTEN ") + quoted;
  PQfreemem(quoted);
  co_await query(std::move(sql));
}

void Connection::max_unread_bytes(std::size_t n) noexcept {
  s_->max_unread_bytes = n;
  s_->update_reading();
}

Coro<Notification> Connection::next_notification() {
  auto s = s_;
  try {
    Notification n = co_await s->notifications.get();
    s->taken(n);
    co_return n;
  } catch (const QueueShutDown&) {
    throw ConnectionError("connection closed");
  }
}

TxStatus Connection::transaction_status() const noexcept {
  if (is_closed()) return TxStatus::unknown;
  switch (PQtransactionStatus(s_->conn)) {
    case PQTRANS_IDLE: return TxStatus::idle;
    case PQTRANS_ACTIVE: return TxStatus::active;
    case PQTRANS_INTRANS: return TxStatus::in_transaction;
    case PQTRANS_INERROR: return TxStatus::in_error;
    default: return TxStatus::unknown;
  }
}

int Connection::backend_pid() const noexcept { return is_closed() ? 0 : PQbackendPID(s_->conn); }

std::size_t Connection::in_flight() const noexcept {
  return s_ ? s_->inflight.size() + s_->held.size() : 0;
}

}  // namespace corio::pg
