// The backend seam: what the loop needs from the OS, as operations (Redis's
// aeApi*, libuv's uv__io_*). One implementation per folder under
// src/core/backend/<name>/; no #ifdef outside them; nothing above core knows
// which one runs.
//
// Every socket operation is "try now, else wait". try_*() returns its result
// (>= 0) or -errno; -EAGAIN means "not now": the caller parks an IoWait in the
// fd's slot, calls arm(), and tries again once poll() reports the fd. What
// "trying" costs is the backend's business. epoll makes the syscall, and skips
// it when no edge came since the socket was seen drained. A completion backend
// hands over bytes its receives already put in buffers of its own, and queues
// sends for the next submit.
//
// Bytes move only inside the calling task's own step, never in poll(). So a
// task cancelled while it waits loses nothing: what arrived stays for the
// next read, which is asyncio's semantics with no window left.
//
// Files have no readiness, so they are one operation of their own,
// submit_file(), with this contract:
//   1. false: the backend has no native file I/O (epoll); the caller runs the
//      syscall on a thread pool. The answer is the same for every call on one
//      backend, so a caller may remember it.
//   2. true: the backend owns the request (and, through the caller, its
//      buffer) until it calls op.complete() exactly once, from poll() on the
//      loop's thread and never inside submit_file(), with the result: bytes
//      (a short count is the caller's to continue) or -errno.
//   3. Before the first poll() the request is only queued; it goes to the
//      kernel with the next poll()'s submit.
//   4. A backend destroyed with requests in flight waits for the kernel to
//      finish each (regular files always do) and then calls op.discard()
//      instead, which must not touch the loop.
#pragma once

#include <sys/socket.h>

#include <cerrno>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <corio/detail/file_op.hpp>
#include <corio/handle.hpp>
#include <corio/socket.hpp>

namespace corio::detail {

class FdWaiter;

// add_reader/add_writer's callbacks. Few fds have them (pipes, foreign
// fds), so every socket's entry holds one pointer for them, not two.
struct FdCallbacks {
  Ref<CallbackHandle> reader, writer;
};

// The loop's half of an fd's entry: who waits on it. Each backend's entry
// type derives from it, so that one table per loop holds both halves.
struct FdSlot {
  std::unique_ptr<FdCallbacks> callbacks;  // while add_reader/add_writer watch it
  FdWaiter* read_wait = nullptr;           // socket operations, one per direction
  FdWaiter* write_wait = nullptr;
};

// The fd-indexed table both backends keep their entries in.
template <class Entry>
class FdTable {
 public:
  Entry* find(int fd) noexcept {
    return fd >= 0 && static_cast<std::size_t>(fd) < entries_.size()
               ? &entries_[static_cast<std::size_t>(fd)]
               : nullptr;
  }
  Entry& at(int fd) {
    const auto index = static_cast<std::size_t>(fd);
    if (index >= entries_.size()) entries_.resize(index + 1);
    return entries_[index];
  }
  void clear() noexcept { entries_.clear(); }

 private:
  std::vector<Entry> entries_;
};

struct IoEvent {
  int fd;
  bool readable;  // also set on error/hang-up, so the reader sees it
  bool writable;
};

class IoBackend {
 public:
  virtual ~IoBackend() = default;
  virtual const char* name() const noexcept = 0;

  // ---- the per-fd table -----------------------------------------------------
  virtual FdSlot* find(int fd) noexcept = 0;  // null: never seen
  virtual FdSlot& slot(int fd) = 0;
  // The loop is closing: every slot lets go of its callbacks and waiters.
  virtual void drop_slots() noexcept = 0;

  // ---- readiness, for add_reader/add_writer (level-triggered, as asyncio's
  // selector loop) -------------------------------------------------------------
  // Declares fd's interest set. Registration and removal act at once (a
  // regular file fails here, as in asyncio); changes of a set may be batched
  // until the next poll(). Not for attached fds.
  virtual void set_interest(int fd, bool read, bool write) = 0;

  // ---- socket operations ------------------------------------------------------
  // Takes fd (a non-blocking socket or pipe) for the operations below.
  // `stream`: the caller made fd as a SOCK_STREAM socket, or accepted it
  // from one, so a backend that treats streams apart (io_uring) need not
  // ask the kernel (false: not known, the backend asks if it must).
  virtual void attach(int fd, bool stream) = 0;
  void attach(int fd) { attach(fd, false); }
  // Before fd is closed: operations already accepted (queued sends) still
  // happen, unless the socket is set to reset on close (SO_LINGER 0), which
  // drops them as the kernel drops its own; nothing of the fd's is touched
  // afterwards.
  virtual void detach(int fd) noexcept = 0;
  // detach() for a caller about to close fd. True: the backend took fd, to
  // close it itself once the sends it owes are done (the caller must not
  // close it; a completion backend then needs no dup to send them from).
  virtual bool detach_to_close(int fd) noexcept {
    detach(fd);
    return false;
  }
  // A task parked a wait on fd: poll() must report it when the direction
  // may be ready (epoll's edges already do; a completion backend may have to
  // ask the kernel).
  virtual void arm(int fd, bool write) = 0;

  // Bytes received; 0 at EOF. `stream`: a short read means the socket was
  // drained (not so for datagrams, which arrive one per read).
  virtual long try_recv(int fd, std::span<char> buf, bool stream) noexcept = 0;
  // Lending, where a backend's receives fill buffers of its own (io_uring):
  // the bytes try_recv would copy next, in place, so that the caller copies
  // them once, straight to where they go. Returns their count (> 0) with
  // *data set, 0 at EOF, -errno (-EAGAIN: wait, as for try_recv), or
  // -EOPNOTSUPP: nothing to lend on this fd (always so on epoll).
  virtual long try_recv_lent(int /*fd*/, const char** /*data*/) noexcept { return -EOPNOTSUPP; }
  // The caller took the first n of the bytes lent (n <= their count), in the
  // same step as the lend: until then they stay queued, so a read that ends
  // early (an exception, a cancel) loses none of them.
  virtual void consume_lent(int /*fd*/, std::size_t /*n*/) noexcept {}
  // What a read of fd would find, taking none of it (the HTTP client pool's
  // check of an idle connection): > 0 bytes wait, 0 EOF, -errno, or -EAGAIN
  // nothing. A completion backend answers from what its receives already
  // took before it asks the socket.
  virtual long peek(int fd) noexcept = 0;
  // Bytes taken (they will go out in order, before a shutdown or detach).
  virtual long try_send(int fd, std::string_view data) noexcept = 0;
  // try_send of the pieces in order, as one send where the backend can
  // (sendmsg(2)): their total taken, which stops inside the first piece not
  // taken whole. The default sends them one by one.
  virtual long try_sendv(int fd, std::span<const std::string_view> pieces) noexcept {
    long total = 0;
    for (const std::string_view piece : pieces) {
      if (piece.empty()) continue;
      const long n = try_send(fd, piece);
      if (n < 0) return total > 0 ? total : n;
      total += n;
      if (static_cast<std::size_t>(n) < piece.size()) break;
    }
    return total;
  }
  // The new fd (non-blocking, close-on-exec); *peer filled.
  virtual long try_accept(int fd, SocketAddress* peer) noexcept = 0;
  // 0: connected; -EINPROGRESS: wait writable, then finish_connect().
  virtual long start_connect(int fd, const SocketAddress& addr) noexcept = 0;
  virtual long finish_connect(int fd) noexcept = 0;
  virtual long try_recvfrom(int fd, std::span<char> buf, SocketAddress* from) noexcept = 0;
  virtual long try_sendto(int fd, std::string_view data, const SocketAddress& to) noexcept = 0;
  // After the sends already taken.
  virtual long shutdown(int fd, int how) noexcept = 0;
  // Bytes try_send took that are not in the socket yet (a completion
  // backend's queue; always 0 on epoll). Code that writes to the fd itself
  // (sendfile after a response head) waits for them first, or overtakes them.
  virtual std::size_t unsent(int fd) noexcept = 0;

  // ---- fds that are not sockets (a pipe, a terminal, a regular file) ---------
  // read(2) and write(2), or what the backend does instead, with try_recv's
  // and try_send's results (a pipe is a stream: a short read drained it).
  // The fd need not be attached: its owner attaches it before its first
  // wait, so a regular file, which never waits and which epoll refuses,
  // never is.
  virtual long try_read(int fd, std::span<char> buf) noexcept = 0;
  virtual long try_write(int fd, std::string_view data) noexcept = 0;

  // ---- files (the contract at the top) -----------------------------------------
  // A read, write or fsync on a regular file; false: not native here.
  virtual bool submit_file(FileOp& op) {
    (void)op;
    return false;
  }

  // ---- waiting ----------------------------------------------------------------
  // Waits up to timeout_ms (-1: no limit) and appends the fds that became
  // ready to `out`. Returns the number appended.
  virtual int poll(int timeout_ms, IoEvent* out, int capacity) = 0;
  // Thread-safe: makes a blocked or upcoming poll() return promptly.
  virtual void wakeup() noexcept = 0;
};

std::unique_ptr<IoBackend> make_epoll_backend();

}  // namespace corio::detail
