// The io_uring backend's class, shared by its files: uring_backend.cpp
// (the ring, poll(): prepare, submit-and-wait, reap, report), uring_table.cpp
// (attach, detach, registrations) and uring_ops.cpp (the socket operations
// the loop calls between polls). Built only with liburing; see
// uring_backend.cpp for the design.
#pragma once

#include <liburing.h>
#include <sys/resource.h>

#include <string>
#include <system_error>
#include <vector>

#include "core/backend/backend.hpp"
#include "core/backend/io_uring/buffer_ring.hpp"
#include "core/backend/io_uring/uring_conn.hpp"

namespace corio::detail::uring {

// Per-fd caps, so that a reader or writer that does not keep up holds a
// bounded share: past kRecvCap unread buffers the multishot recv is cancelled
// (re-armed at half), past kSendCap queued bytes try_send() takes less (and
// a writer waits until the queue is empty: see writable()), past
// kAcceptCap unclaimed connections the multishot accept is cancelled.
constexpr std::size_t kRecvCap = 8;  // buffers: up to 512 KiB, a socket receive buffer's worth
constexpr std::size_t kSendCap = 256 * 1024;
constexpr std::size_t kAcceptCap = 64;
// A drained send queue goes to the backend's spares, buffers and all, for
// the next send of any fd: an idle connection holds none, and a busy one
// reuses a queue rather than allocating one per answer. At most kSendSpares
// are kept, none grown past kKeepSendBuffer, so that a burst does not pin
// its peak.
constexpr std::size_t kSendSpares = 64;
constexpr std::size_t kKeepSendBuffer = 16 * 1024;
// try_send() on an idle stream sends this much or more at once (send(2));
// less goes into the queue, for the next submit (see try_send).
constexpr std::size_t kDirectSend = 16 * 1024;
// A starved stream's own receive buffer (kOwnBufferSize) is the stream's only
// while its bytes wait to be read: then it goes to the spares, at most
// kOwnSpares of them, so that a burst that once starved thousands of streams
// does not leave each holding 16 KiB for the rest of its life.
constexpr std::size_t kOwnSpares = 8;
// Registered files: a stream's fd number is its slot in the ring's file
// table (fds from kFixedSlots on, or past RLIMIT_NOFILE, stay unregistered),
// so that its receives and sends go with IOSQE_FIXED_FILE and the kernel
// skips an fget and an fput (two atomics on the file) per request. The fd
// stays a real one for everything else (TLS's own syscalls, sendfile,
// polls, a taken connection). The slot is filled by a FILES_UPDATE SQE in
// the first submit that carries the stream's requests (no register syscall
// per connection) and cleared at detach, in the enter that cancels its
// requests, before the caller's close().
constexpr unsigned kFixedSlots = 4096;

[[noreturn]] inline void throw_err(int err, const char* what) {
  throw std::system_error(err, std::generic_category(), what);
}

class UringBackend final : public IoBackend {
 public:
  UringBackend();
  ~UringBackend() override;

  const char* name() const noexcept override { return "io_uring"; }
  FdSlot* find(int fd) noexcept override { return table_.find(fd); }
  FdSlot& slot(int fd) override { return table_.at(fd); }
  void drop_slots() noexcept override;

  void set_interest(int fd, bool read, bool write) override;
  void attach(int fd, bool stream) override;
  void detach(int fd) noexcept override;
  bool detach_to_close(int fd) noexcept override;
  void arm(int fd, bool write) override;

  long try_recv(int fd, std::span<char> buf, bool stream) noexcept override;
  long try_recv_lent(int fd, const char** data) noexcept override;
  void consume_lent(int fd, std::size_t n) noexcept override;
  long peek(int fd) noexcept override;
  long try_send(int fd, std::string_view data) noexcept override;
  long try_sendv(int fd, std::span<const std::string_view> pieces) noexcept override;
  long try_accept(int fd, SocketAddress* peer) noexcept override;
  long start_connect(int fd, const SocketAddress& addr) noexcept override;
  long finish_connect(int fd) noexcept override;
  long try_recvfrom(int fd, std::span<char> buf, SocketAddress* from) noexcept override;
  long try_sendto(int fd, std::string_view data, const SocketAddress& to) noexcept override;
  long shutdown(int fd, int how) noexcept override;
  std::size_t unsent(int fd) noexcept override;
  long try_read(int fd, std::span<char> buf) noexcept override;
  long try_write(int fd, std::string_view data) noexcept override;
  bool submit_file(FileOp& op) override;

  int poll(int timeout_ms, IoEvent* out, int capacity) override;
  void wakeup() noexcept override;

  // Streams' own receive buffers held now (spares not counted): for tests.
  std::size_t own_buffers() const noexcept { return own_buffers_; }
  // Streams registered in the ring's file table now (or by the SQEs queued): for tests.
  std::size_t fixed_files() const noexcept { return fixed_files_; }

 private:
  // ---- uring_backend.cpp ----
  io_uring_sqe* sqe();
  io_uring_sqe* sqe_now() noexcept;
  bool prep_cancel(Conn& c, Op op) noexcept;
  void enter(int timeout_ms);
  void prepare();
  void prepare_stream(Conn& c);
  bool fix(Conn& c) noexcept;
  void prepare_recv(Conn& c);
  void prepare_own_recv(Conn& c);
  void prepare_accept(Conn& c);
  void prepare_send(Conn& c);
  void prepare_poll(Conn& c);
  void reap();
  void complete(const io_uring_cqe& cqe);
  void on_recv(Conn& c, int res, unsigned flags);
  void on_own_recv(Conn& c, int res);
  void received(Conn& c, int res);
  void on_accept(Conn& c, int res, unsigned flags);
  void on_send(Conn& c, int res);
  void on_poll(Conn& c, int res);
  int report(IoEvent* out, int capacity);
  bool readable(const Conn& c) const noexcept;
  bool writable(const Conn& c) const noexcept;

  // ---- uring_table.cpp ----
  // What becomes of a released Conn's fd: closed already (its number may
  // be another file's now), kept by the caller, or closed by it next.
  enum class Fd { closed, kept, closing };
  bool let_go(int fd, Fd fate) noexcept;
  bool release(Entry& e, Fd fate) noexcept;
  bool keep_sending(Conn& c, Fd fate) noexcept;
  void cancel_now(Conn& c, bool any) noexcept;
  bool unfix(Conn& c) noexcept;

  // ---- uring_ops.cpp ----
  Conn* conn(int fd) noexcept;
  static void target(io_uring_sqe* s, const Conn& c) noexcept {
    if (c.fixed) s->flags |= IOSQE_FIXED_FILE;  // s->fd is c.fd, its slot
  }
  void drop_received(Conn& c) noexcept;
  static long queued(const Conn& c) noexcept;
  const char* chunk_data(const Conn& c, const Chunk& k) noexcept;
  void consumed(Conn& c, const Chunk& k) noexcept;
  long copy_out(Conn& c, std::span<char> buf) noexcept;
  void advance(Conn& c, std::size_t n) noexcept;
  void caught_up(Conn& c) noexcept;
  int within_fd_limit(int& fd) noexcept;
  void flushed(Conn& c) noexcept;
  SendQueue& new_send_queue(Conn& c);
  SendQueue& send_queue(Conn& c) { return c.out ? *c.out : new_send_queue(c); }
  void give_back_queue(Conn& c) noexcept;
  long enqueue(Conn& c, std::string_view data, std::size_t sent) noexcept;
  char* take_own_buffer(Conn& c);
  void give_back_own_buffer(Conn& c) noexcept;

  // ---- uring_file.cpp ----
  void prepare_files();
  void on_file(const io_uring_cqe& cqe) noexcept;
  void drop_files() noexcept;

  // ---- the work lists (safe points: a Conn on one is not freed) ----
  void mark_prep(Conn& c);
  void notify(Conn& c);
  void maybe_free(Conn* c) noexcept;

  struct Ring {
    Ring();
    ~Ring() { exit(); }
    void exit() noexcept {
      if (live) io_uring_queue_exit(&r);
      live = false;
    }
    io_uring r{};
    bool live = false;
  };

  BufferRing bufs_;  // declared first: freed after the ring is gone
  Ring ring_;
  bool enabled_ = false;
  int wakefd_ = -1;
  bool wake_armed_ = false;
  std::uint64_t wake_value_ = 0;
  FdTable<Entry> table_;
  std::vector<Conn*> prep_, ready_, starved_;
  std::vector<Conn*> detached_;  // freed when their last request completes
  std::vector<std::unique_ptr<SendQueue>> send_spares_;  // drained queues (kSendSpares)
  std::vector<std::unique_ptr<char[]>> own_spares_;       // own buffers read out (kOwnSpares)
  std::size_t own_buffers_ = 0;
  unsigned fixed_slots_ = 0;  // the file table's size; 0: none registered
  std::size_t fixed_files_ = 0;
  rlim_t fd_limit_ = 0;          // RLIMIT_NOFILE as within_fd_limit() last read it
  bool fd_limit_stale_ = true;   // a poll() came since: read it again
  // File requests: submitted, not yet prepared (FIFO through FileOp::next),
  // and in the ring (their CQE not reaped yet).
  FileOp* files_head_ = nullptr;
  FileOp** files_tail_ = &files_head_;
  std::size_t files_in_ring_ = 0;
};

}  // namespace corio::detail::uring
