// The shared state behind a pg::Connection: libpq's PGconn, the queries on
// the wire, and the loop callbacks that move them along.
//
// Invariants:
// 1. `inflight` holds, in order, every query whose Sync was sent and whose
//    PGRES_PIPELINE_SYNC has not been read: results always belong to its front.
// 2. `held` holds queries not yet sent; it is non-empty only while a server
//    cancel is settling (sending behind a cancel could let it hit them).
// 3. The reader callback is registered from start() until fail() or
//    close(), except in exclusive mode (4) and while paused (6); no callback
//    runs after close(), so it can hold `this` raw. close() also finishes
//    libpq's connection: `conn` is null once closed.
// 4. Exclusive mode (simple-protocol scripts, streamed rows, COPY) leaves
//    pipeline mode: it waits until `inflight` is empty, holds new sends, and
//    takes the socket from the reader callback, reading only as fast as its
//    owner asks (that bounds a stream's memory). An owner that stops midway
//    hands over to recovery, which drains what the server still sends
//    (cancelling it first) on the reader callback, then re-enters pipeline
//    mode and sends what was held.
// 5. A PQcancel runs on a worker thread and reports back through a weak_ptr:
//    the state may be gone by then.
// 6. Notifications nobody took hold at most max_unread_bytes (plus one
//    read's worth): past it, with no query in flight and no recovery under
//    way, the reader callback is taken off, so the rest waits in the
//    kernel and the server (whose backend then waits to send) instead of
//    here. A query sent, or next_notification() taking them down to half
//    the bound, puts it back; results come after the notifications before
//    them, so a query reads those in past the bound.
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
#include <corio/lock.hpp>
#include <corio/pg/connection.hpp>
#include <corio/queue.hpp>

namespace corio::pg::detail {

struct Send {
  enum class Kind { params, prepared, prepare, sync };
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

  // Exclusive mode (invariant 4). acquire may throw CancelledError or
  // ConnectionError; the other calls need it acquired.
  Coro<void> acquire_exclusive();
  void release_exclusive();
  // The owner stopped midway: cancel on the server (if a query runs), drain,
  // release.
  void abort_exclusive(bool cancel_server);
  // The next result, reading as needed; nullptr at the end of a command.
  Coro<PGresult*> next_result();
  // Puts the exclusive command in single-row mode.
  bool set_single_row_mode();
  // Until libpq's output buffer is on the wire.
  Coro<void> flush_all();
  // Until the socket is readable, then consumes; throws ConnectionError.
  Coro<void> read_more();
  // Until the socket is readable (or writable); close() ends it with
  // ConnectionError, so an exclusive owner never waits on a dead socket.
  Coro<void> wait_socket(bool write);
  // The rest of the current command's results: the last one, or its first
  // error thrown once the command is over.
  Coro<Result> command_results();
  // Fails the connection with libpq's message and throws it.
  [[noreturn]] void lost();

  EventLoop& loop;
  PGconn* conn;
  int fd = -1;
  bool closed = false;
  std::deque<std::unique_ptr<Op>> inflight;
  std::deque<std::unique_ptr<Op>> held;
  Queue<Notification> notifications;
  std::size_t unread_bytes = 0;  // of the notifications queued (invariant 6)
  std::size_t max_unread_bytes = std::size_t{1} << 20;
  unsigned statements = 0;  // names the unnamed prepared statements

  // next_notification() took n: reading may go on.
  void taken(const Notification& n) noexcept;
  // Takes the reader callback off, or puts it back, as invariant 6 says.
  void update_reading() noexcept;

 private:
  std::unique_ptr<Op> make_op(Send send, bool detached);
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
  bool holding() const noexcept { return cancel_out_ || cancelled_id_ != 0 || exclusive_wanted_; }
  void recover();

  std::uint64_t next_id_ = 1;
  bool flush_scheduled_ = false;
  bool writer_on_ = false;
  // A server cancel is out (its thread has not returned) / its query's
  // results have not all arrived. Sends are held until both are false.
  bool cancel_out_ = false;
  std::uint64_t cancelled_id_ = 0;
  Lock exclusive_lock_;
  bool exclusive_wanted_ = false;  // sends are held from here on
  bool exclusive_ = false;         // out of pipeline mode, the owner reads
  bool recovering_ = false;
  bool reading_paused_ = false;    // the reader callback is off (invariant 6)
  bool single_row_ = false;        // libpq's single-row mode was used
  Future<void> drained_;           // set when `inflight` empties for it
  Future<void> socket_wait_;       // the exclusive owner's wait_socket()
};

// ValueError for a NUL in what libpq reads as C strings (its SQL, statement
// name, text-format values): it would end them early, a value
// "admin\0' OR true" compared as "admin". Checked before anything is
// queued, so the connection is untouched.
void check_send(const Send& s);
// Queues one statement in libpq's output buffer (true), or fails.
bool send_query(PGconn* conn, const Send& s);
// Waits until fd is readable (write = false) or writable. `wait`, when
// given, is the Future it waits on (so its owner can end the wait).
Coro<void> wait_fd(int fd, bool write, Future<void>* wait = nullptr);
// libpq's error message without its trailing newline.
std::string conn_message(PGconn* conn);
std::exception_ptr server_error(const PGresult* res);

}  // namespace corio::pg::detail
