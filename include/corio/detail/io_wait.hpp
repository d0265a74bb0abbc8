// The await point of a socket operation: "wait until fd may be readable (or
// writable) again". Used only after the operation's syscall returned EAGAIN:
// the backend reports edges, and the next edge after an EAGAIN always comes.
//
// Like every awaiter it lives in the suspended frame; the loop keeps a
// pointer to it in the fd's slot (one reader and one writer per fd) and
// wakes the task when the edge arrives. Cancellation takes it out of the
// slot; destruction too (a frame destroyed at loop close).
#pragma once

#include <coroutine>

#include <corio/detail/task_state.hpp>

namespace corio {
class EventLoop;
}

namespace corio::detail {

class IoWait : private AwaitPoint {
 public:
  IoWait(EventLoop& loop, int fd, bool write) noexcept : loop_(loop), fd_(fd), write_(write) {
    this->ops = &kOps;
  }
  // Movable until awaited (nothing is parked yet), so that it can be carried
  // into a combinator: wait_for(loop.wait_readable(sock), 1s).
  IoWait(IoWait&& o) noexcept : loop_(o.loop_), fd_(o.fd_), write_(o.write_) { this->ops = &kOps; }
  IoWait& operator=(const IoWait&) = delete;
  ~IoWait();

  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h);
  // Throws CancelledError, or std::system_error(EBADF) if the socket was
  // closed while waiting.
  void await_resume();

  // Called by the loop: the edge came (closed = false) or the fd was
  // forgotten under the waiter (closed = true).
  void fire(bool closed) noexcept;
  int fd() const noexcept { return fd_; }
  bool for_write() const noexcept { return write_; }

 private:
  static bool on_cancel(AwaitPoint* p, const std::string& msg) noexcept;
  static void describe(const AwaitPoint* p, AwaitInfo& info) noexcept;
  static const Ops kOps;

  EventLoop& loop_;
  int fd_;
  bool write_;
  bool parked_ = false;
  bool cancelled_ = false;
  bool closed_ = false;
  TaskBase* task_ = nullptr;
};

}  // namespace corio::detail
