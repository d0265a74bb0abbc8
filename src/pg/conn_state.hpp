// The shared state behind a pg::Connection: libpq's PGconn, the queries on
// the wire, and the loop callbacks that move them along.
//
// Invariants:
// 1. `inflight` holds, in order, every query whose Sync was sent and whose
//    PGRES_PIPELINE_SYNC has not been read: results always belong to its front.
// 2. `held` holds queries not yet sent; it is non-empty only while a server
//    cancel is settling (sending behind a cancel could let it hit them).
// 3. The reader callback is registered from start() until fail() or
//    close(); no callback runs after close(), so it can hold `this` raw.
// 4. A PQcancel runs on a worker thread and reports back through a weak_ptr:
//    the state may be gone by then.
#pragma once

#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <libpq-fe.h>

#include <corio/event_loop.hpp>
#include <corio/future.hpp>
#include <corio/pg/connection.hpp>
#include <corio/queue.hpp>

namespace corio::pg::detail {

struct Send {
  enum class Kind { params, prepared, prepare };
  Kind kind = Kind::params;
  std::string text;  // SQL (params, prepare) or the statement's name (prepared)
  std::string name;  // prepare: the statement's name
  std::vector<Param> params;
};

struct Op {
  std::uint64_t id = 0;
  Future<Result> done;
  Send send;                 // dropped once sent
  Result result;             // the last non-error result
  std::exception_ptr error;  // the first error
  bool detached = false;     // nobody awaits it
  bool abandoned = false;    // its awaiter was cancelled
};

struct ConnState : std::enable_shared_from_this<ConnState> {
  ConnState(EventLoop& loop, PGconn* conn) noexcept : loop(loop), conn(conn) {}
  ConnState(const ConnState&) = delete;
  ~ConnState();

  // After the handshake: non-blocking, pipeline mode, reader registered.
  void start();
  // Queues a statement; throws ConnectionError when closed.
  Op& submit(Send send, bool detached);
  // The awaiter of op `id` was cancelled.
  void abandon(std::uint64_t id);
  void close(const std::string& why) noexcept;

  EventLoop& loop;
  PGconn* conn;
  int fd = -1;
  bool closed = false;
  std::deque<std::unique_ptr<Op>> inflight;
  std::deque<std::unique_ptr<Op>> held;
  Queue<Notification> notifications;
  unsigned statements = 0;  // names the unnamed prepared statements

 private:
  bool transmit(Op& op);
  void schedule_flush();
  void flush();
  void on_readable();
  void deliver_results();
  void deliver_notifications();
  void finish_front();
  void request_cancel();
  void settle();
  void fail(const std::string& why) noexcept;

  std::uint64_t next_id_ = 1;
  bool flush_scheduled_ = false;
  bool writer_on_ = false;
  // A server cancel is out (its thread has not returned) / its query's
  // results have not all arrived. Sends are held until both are false.
  bool cancel_out_ = false;
  std::uint64_t cancelled_id_ = 0;
};

// Waits until fd is readable (write = false) or writable.
Coro<void> wait_fd(int fd, bool write);
// libpq's error message without its trailing newline.
std::string conn_message(PGconn* conn);
std::exception_ptr server_error(const PGresult* res);

}  // namespace corio::pg::detail
