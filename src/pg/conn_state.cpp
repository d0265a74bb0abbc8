// The pipeline under pg::Connection (conn_state.hpp has the invariants).
//
// Sends are batched: submit() only queues into libpq's output buffer and
// schedules one flush for the loop's next pass, so queries issued by many
// tasks in one pass leave in one write (this is what pipelining buys).
#include "pg/conn_state.hpp"

#include <utility>

#include <corio/c_string.hpp>
#include <corio/pg/error.hpp>

namespace corio::pg::detail {

ConnState::~ConnState() { close("connection closed"); }

void ConnState::start() {
  fd = PQsocket(conn);
  // libpq prints server notices (a WARNING, a NOTICE) to stderr by default;
  // a library must not write to its user's stderr.
  PQsetNoticeProcessor(conn, [](void*, const char*) {}, nullptr);
  if (PQsetnonblocking(conn, 1) != 0 || PQenterPipelineMode(conn) != 1) {
    throw ConnectionError("cannot enter pipeline mode: " + conn_message(conn));
  }
  loop.add_reader(fd, [this] { on_readable(); });
}

Op& ConnState::submit(Send send, bool detached) {
  check_send(send);
  if (closed) throw ConnectionError("connection is closed");
  std::unique_ptr<Op> op = make_op(std::move(send), detached);
  Op& ref = *op;
  // Its task's cancel() has cancelled the lone query's future, but the task
  // has not run yet to say so: sending now would put a query where the
  // server cancel it is owed could hit it.
  if (inflight.size() == 1 && !inflight.front()->abandoned && inflight.front()->done.cancelled()) {
    abandon(inflight.front()->id);
  }
  if (holding()) {
    held.push_back(std::move(op));
    return ref;
  }
  inflight.push_back(std::move(op));
  if (!transmit(ref)) {
    // Nothing of it reached libpq's buffer: it fails alone.
    ref.done.set_exception(std::make_exception_ptr(ConnectionError(conn_message(conn))));
    inflight.pop_back();
  }
  return ref;
}

std::unique_ptr<Op> ConnState::make_op(Send send, bool detached) {
  auto op = std::make_unique<Op>();
  op->id = next_id_++;
  op->done = loop.create_future<Result>();
  op->send = std::move(send);
  op->detached = detached;
  return op;
}

void check_send(const Send& s) {
  check_c_string(s.text, s.kind == Send::Kind::prepared ? "a statement name" : "the SQL");
  check_c_string(s.name, "a statement name");
  for (const Param& p : s.params) {
    // Binary values carry their length: bytes go as pg::Bytea.
    if (p.value && !p.binary) check_c_string(*p.value, "a text parameter (bytes go as pg::Bytea)");
  }
}

bool send_query(PGconn* conn, const Send& s) {
  const int n = static_cast<int>(s.params.size());
  std::vector<const char*> values(s.params.size());
  std::vector<int> lengths(s.params.size()), formats(s.params.size());
  for (std::size_t i = 0; i < s.params.size(); ++i) {
    const Param& p = s.params[i];
    values[i] = p.value ? p.value->data() : nullptr;
    lengths[i] = p.value ? static_cast<int>(p.value->size()) : 0;
    formats[i] = p.binary ? 1 : 0;
  }
  switch (s.kind) {
    case Send::Kind::params:
      return PQsendQueryParams(conn, s.text.c_str(), n, nullptr, values.data(), lengths.data(),
                               formats.data(), 0);
    case Send::Kind::prepared:
      return PQsendQueryPrepared(conn, s.text.c_str(), n, values.data(), lengths.data(),
                                 formats.data(), 0);
    case Send::Kind::prepare:
      // Described in the same segment, so the result says how many $n it has.
      return PQsendPrepare(conn, s.name.c_str(), s.text.c_str(), 0, nullptr) &&
             PQsendDescribePrepared(conn, s.name.c_str());
    case Send::Kind::sync:
      return true;  // the Sync alone
  }
  return false;
}

bool ConnState::transmit(Op& op) {
  if (!send_query(conn, op.send) || !PQpipelineSync(conn)) return false;
  op.send = {};
  if (reading_paused_) update_reading();  // its results must be read
  schedule_flush();
  return true;
}

void ConnState::schedule_flush() {
  if (flush_scheduled_) return;
  flush_scheduled_ = true;
  loop.call_soon([w = weak_from_this()] {
    if (auto s = w.lock()) {
      s->flush_scheduled_ = false;
      if (!s->closed) s->flush();
    }
  });
}

void ConnState::flush() {
  const int rc = PQflush(conn);
  if (rc < 0) return fail(conn_message(conn));
  if (rc == 1 && !writer_on_) {
    writer_on_ = true;
    loop.add_writer(fd, [this] { flush(); });
  } else if (rc == 0 && writer_on_) {
    writer_on_ = false;
    loop.remove_writer(fd);
  }
}

void ConnState::on_readable() {
  if (!PQconsumeInput(conn)) return fail(conn_message(conn));
  if (recovering_) return recover();
  deliver_results();
  if (closed) return;
  deliver_notifications();
  // libpq may have held back output until the server's data was read.
  if (writer_on_) flush();
}

void ConnState::deliver_results() {
  while (!inflight.empty() && !closed && !PQisBusy(conn)) {
    PGresult* res = PQgetResult(conn);
    if (!res) {
      // One query's results are complete; its Sync comes next.
      if (PQstatus(conn) != CONNECTION_OK) return fail(conn_message(conn));
      continue;
    }
    Op& op = *inflight.front();
    switch (PQresultStatus(res)) {
      case PGRES_PIPELINE_SYNC:
        PQclear(res);
        finish_front();
        break;
      case PGRES_FATAL_ERROR:
      case PGRES_NONFATAL_ERROR:
      case PGRES_BAD_RESPONSE:
        if (!op.error) op.error = server_error(res);
        PQclear(res);
        break;
      case PGRES_PIPELINE_ABORTED:
        PQclear(res);
        break;
      default:
        op.result = Result(res);
        break;
    }
  }
}

void ConnState::finish_front() {
  std::unique_ptr<Op> op = std::move(inflight.front());
  inflight.pop_front();
  if (!op->detached && !op->done.done()) {
    if (op->error) {
      op->done.set_exception(op->error);
    } else {
      op->done.set_result(std::move(op->result));
    }
  }
  if (op->id == cancelled_id_) {
    cancelled_id_ = 0;
    settle();
  }
  if (inflight.empty() && exclusive_wanted_ && !drained_.done()) drained_.set_result();
  if (inflight.empty()) update_reading();
}

void ConnState::deliver_notifications() {
  while (PGnotify* n = PQnotifies(conn)) {
    Notification note{n->relname, n->extra, n->be_pid};
    PQfreemem(n);
    unread_bytes += note.channel.size() + note.payload.size();
    notifications.put_nowait(std::move(note));
  }
  update_reading();
}

void ConnState::taken(const Notification& n) noexcept {
  unread_bytes -= n.channel.size() + n.payload.size();
  update_reading();
}

// Exclusive mode manages the reader itself; release_exclusive() comes back
// here through deliver_notifications(). Reading resumes at half the bound,
// as a redis::Subscriber's does: a consumer that keeps up at the bound does
// not flip the reader on and off a notification at a time.
void ConnState::update_reading() noexcept {
  if (closed || exclusive_) return;
  const std::size_t bound = reading_paused_ ? max_unread_bytes / 2 : max_unread_bytes;
  const bool pause = unread_bytes > bound && inflight.empty() && !recovering_;
  if (pause == reading_paused_) return;
  reading_paused_ = pause;
  if (pause) {
    loop.remove_reader(fd);
  } else {
    loop.add_reader(fd, [this] { on_readable(); });
  }
}

void ConnState::abandon(std::uint64_t id) {
  for (auto it = held.begin(); it != held.end(); ++it) {
    if ((*it)->id == id) {
      held.erase(it);
      return;
    }
  }
  for (auto& op : inflight) {
    if (op->id == id) {
      if (op->abandoned) return;
      op->abandoned = true;
      // Only a query alone on the wire can be cancelled on the server: with
      // others sent behind it the cancel could land on one of them instead.
      if (inflight.size() == 1 && !cancel_out_) {
        cancelled_id_ = id;
        request_cancel();
      }
      return;
    }
  }
}

void ConnState::request_cancel() {
  PGcancel* cancel = PQgetCancel(conn);
  if (!cancel) return;
  cancel_out_ = true;
  auto done = loop.run_in_executor(nullptr, [cancel] {
    char err[256];
    PQcancel(cancel, err, sizeof err);  // a failed cancel only means the query runs on
    PQfreeCancel(cancel);
  });
  done.add_done_callback([w = weak_from_this()](Future<void>) {
    if (auto s = w.lock()) {
      s->cancel_out_ = false;
      s->settle();
    }
  });
}

void ConnState::settle() {
  if (holding() || closed) return;
  while (!held.empty() && !closed) {
    std::unique_ptr<Op> op = std::move(held.front());
    held.pop_front();
    inflight.push_back(std::move(op));
    if (!transmit(*inflight.back())) return fail(conn_message(conn));
  }
}

void ConnState::fail(const std::string& why) noexcept { close(why); }

void ConnState::close(const std::string& why) noexcept {
  if (closed) return;
  closed = true;
  if (fd >= 0) {
    loop.remove_reader(fd);
    if (writer_on_) loop.remove_writer(fd);
  }
  const auto error = std::make_exception_ptr(ConnectionError(why));
  for (auto* queue : {&inflight, &held}) {
    for (auto& op : *queue) {
      if (!op->detached && !op->done.done()) op->done.set_exception(error);
    }
    queue->clear();
  }
  notifications.shutdown();
  if (socket_wait_.valid() && !socket_wait_.done()) {
    socket_wait_.set_exception(std::make_exception_ptr(ConnectionError(why)));
  }
  if (drained_.valid() && !drained_.done()) {
    drained_.set_exception(std::make_exception_ptr(ConnectionError(why)));
  }
  // The socket goes now, not when the last handle does: the server ends the
  // session (and whatever query it was running) at once.
  PQfinish(std::exchange(conn, nullptr));
}

std::string conn_message(PGconn* conn) {
  std::string msg = conn ? PQerrorMessage(conn) : "connection closed";
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
  if (msg.empty()) msg = "connection lost";
  return msg;
}

std::exception_ptr server_error(const PGresult* res) {
  auto field = [res](int code) {
    const char* v = PQresultErrorField(res, code);
    return std::string(v ? v : "");
  };
  ServerError::Fields f;
  f.severity = field(PG_DIAG_SEVERITY);
  f.sqlstate = field(PG_DIAG_SQLSTATE);
  f.message = field(PG_DIAG_MESSAGE_PRIMARY);
  f.detail = field(PG_DIAG_MESSAGE_DETAIL);
  f.hint = field(PG_DIAG_MESSAGE_HINT);
  const std::string pos = field(PG_DIAG_STATEMENT_POSITION);
  f.position = pos.empty() ? 0 : std::stoi(pos);
  if (f.message.empty()) f.message = PQresultErrorMessage(res);
  return std::make_exception_ptr(ServerError(std::move(f)));
}

Coro<void> wait_fd(int fd, bool write, Future<void>* wait) {
  EventLoop& loop = get_running_loop();
  Future<void> ready = loop.create_future<void>();
  if (wait) *wait = ready;
  auto wake = [ready]() mutable {
    if (!ready.done()) ready.set_result();
  };
  if (write) {
    loop.add_writer(fd, wake);
  } else {
    loop.add_reader(fd, wake);
  }
  struct Unwatch {
    EventLoop& loop;
    int fd;
    bool write;
    ~Unwatch() { write ? loop.remove_writer(fd) : loop.remove_reader(fd); }
  } unwatch{loop, fd, write};
  co_await ready;
}

}  // namespace corio::pg::detail
