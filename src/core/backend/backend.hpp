// The poller seam: what the loop needs from the OS, and nothing more
// (Redis's aeApi*, libuv's uv__io_poll). One implementation per folder under
// src/core/backend/<name>/; no #ifdef outside them.
//
// Readiness today (add_reader/add_writer). Socket operations (sock_recv,
// sock_send, ...) join this interface with the networking layer, so that a
// completion backend (io_uring) can implement each operation natively while
// the epoll backend emulates it as readiness plus a non-blocking syscall.
#pragma once

#include <memory>

namespace corio::detail {

struct IoEvent {
  int fd;
  bool readable;  // also set on error/hang-up, so the reader sees it
  bool writable;
  bool closed;    // hang-up, error or the peer's FIN: later reads see EOF/error
};

class Poller {
 public:
  virtual ~Poller() = default;
  virtual const char* name() const noexcept = 0;
  // Declares the interest set for fd. Applied lazily, just before the next
  // wait, so that several changes in one iteration cost one syscall.
  virtual void set_interest(int fd, bool read, bool write) = 0;
  // Waits up to timeout_ms (-1: no limit) and appends ready fds to `out`.
  // Returns the number appended.
  virtual int poll(int timeout_ms, IoEvent* out, int capacity) = 0;
  // Socket operations: registers fd once for both directions, edge-triggered
  // (an event means "became ready": the operation tries first and waits only
  // after EAGAIN, so no edge is missed). Not for fds used with set_interest.
  virtual void watch_edges(int fd) = 0;
  // Ends watch_edges(fd) before the fd is closed.
  virtual void forget(int fd) noexcept = 0;
  // Thread-safe: makes a blocked or upcoming poll() return promptly.
  virtual void wakeup() noexcept = 0;
};

std::unique_ptr<Poller> make_epoll_poller();

}  // namespace corio::detail
