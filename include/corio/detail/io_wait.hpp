// The await point of a socket operation: "wait until fd may be readable (or
// writable) again". Used only after the operation's syscall returned EAGAIN:
// the backend reports edges, and the next edge after an EAGAIN always comes.
//
// Like every awaiter it lives in the suspended frame; the loop keeps a
// pointer to it in the fd's slot (one reader and one writer per fd) and
// wakes the task when the edge arrives. Cancellation takes it out of the
// slot; destruction too (a frame destroyed at loop close).
//
// IoWatch is the same wait with no task behind it: the edge calls a function
// (a connection parked between requests, with no frame and no task, starts
// its task again from there). Both are FdWaiters, what an fd's slot holds.
//
// A WaitSlot is such a slot without an fd, owned by whoever produces the
// bytes (an HTTP/2 stream: its bytes come when its connection's task feeds
// nghttp2): an IoWait made on it parks there, and the producer fires it. So
// a transport with no descriptor waits as a socket's does, with the same
// one awaiter in the frame and no allocation.
#pragma once

#include <coroutine>

#include <corio/detail/task_state.hpp>

namespace corio {
class EventLoop;
}

namespace corio::detail {

// An fd slot's entry. Not an aggregate (a constructor): the derived types'
// members share its padding.
class FdWaiter {
 public:
  FdWaiter(int fd, bool write, bool watch) noexcept : fd_(fd), write_(write), watch_(watch) {}
  int fd() const noexcept { return fd_; }
  bool for_write() const noexcept { return write_; }
  bool is_watch() const noexcept { return watch_; }
  // Called by the loop: the edge came (closed = false) or the fd was
  // forgotten under the waiter (closed = true).
  void fire(bool closed) noexcept;

 protected:
  int fd_;
  bool write_;

 private:
  bool watch_;  // an IoWatch, not an IoWait
};

class WaitSlot;

class IoWait : private AwaitPoint, public FdWaiter {
 public:
  IoWait(EventLoop& loop, int fd, bool write) noexcept : FdWaiter(fd, write, false) {
    at_.loop = &loop;
    this->ops = &kOps;
  }
  // A wait in `slot` (fd() is -1): parked there, fired by its owner; a
  // cancellation or the destructor takes it out again. The loop does not
  // count it among its I/O waits: as an Event's waiter, another task wakes it.
  IoWait(EventLoop& /*loop*/, WaitSlot& slot) noexcept : FdWaiter(-1, false, false) {
    at_.slot = &slot;
    this->ops = &kSlotOps;
  }
  // Movable until awaited (nothing is parked yet), so that it can be carried
  // into a combinator: wait_for(loop.wait_readable(sock), 1s).
  IoWait(IoWait&& o) noexcept : FdWaiter(o.fd_, o.write_, false), at_(o.at_) { this->ops = o.ops; }
  IoWait& operator=(const IoWait&) = delete;
  ~IoWait();

  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h);
  // Throws CancelledError, or std::system_error(EBADF) if the socket was
  // closed while waiting.
  void await_resume();

  // FdWaiter::fire's half.
  void wake(bool closed) noexcept;
  // Wakes the task now, as an edge would (a spurious wake: the task tries
  // its read again, finds nothing, and decides). Nothing if not parked.
  void interrupt() noexcept;

 private:
  static bool on_cancel(AwaitPoint* p, const std::string& msg) noexcept;
  static void describe(const AwaitPoint* p, AwaitInfo& info) noexcept;
  static const Ops kOps;
  static const Ops kSlotOps;
  void unpark() noexcept;  // out of the loop's slot of fd_, or out of at_.slot

  // In FdWaiter's padding: every suspended read keeps this in its frame.
  bool parked_ = false;
  enum class Woke : unsigned char { edge, closed, cancelled } woke_ = Woke::edge;
  // Where it parks: the loop's slot of fd_, or (fd_ < 0) a WaitSlot. One
  // word, not two: every suspended read keeps it.
  union Place {
    EventLoop* loop;
    WaitSlot* slot;
  } at_;
  TaskBase* task_ = nullptr;
};

// One waiter's place, as an fd's slot has for its reader: park() (a second
// waiter is a RuntimeError), unpark(), and fire(), which takes the waiter
// out and wakes it (closed = true: as for a closed fd, its await throws
// EBADF). Destroyed with a waiter parked, it fires it closed.
class WaitSlot {
 public:
  WaitSlot() noexcept = default;
  WaitSlot(const WaitSlot&) = delete;
  WaitSlot& operator=(const WaitSlot&) = delete;
  ~WaitSlot() { fire(true); }

  bool parked() const noexcept { return waiter_ != nullptr; }
  void park(FdWaiter* w);
  void unpark(FdWaiter* w) noexcept {
    if (waiter_ == w) waiter_ = nullptr;
  }
  void fire(bool closed = false) noexcept {
    if (FdWaiter* w = waiter_) {
      waiter_ = nullptr;
      w->fire(closed);
    }
  }

 private:
  FdWaiter* waiter_ = nullptr;
};

// A wait for readability that calls `on_edge` instead of waking a task, on
// the loop, from its poll (or from the fd's close: closed = true). Put in
// its fd's slot by loop.io().park() and taken out by unpark(); the edge
// takes it out itself, before the call. It owns nothing: its owner unparks
// it before it goes.
class IoWatch : public FdWaiter {
 public:
  using OnEdge = void (*)(IoWatch* self, bool closed) noexcept;
  explicit IoWatch(OnEdge on_edge) noexcept : FdWaiter(-1, false, true), on_edge_(on_edge) {}
  IoWatch(const IoWatch&) = delete;
  IoWatch& operator=(const IoWatch&) = delete;
  // Before park(): the fd to watch.
  void set_fd(int fd) noexcept { fd_ = fd; }

 private:
  friend class FdWaiter;
  OnEdge on_edge_;
};

inline void FdWaiter::fire(bool closed) noexcept {
  if (watch_) {
    auto* w = static_cast<IoWatch*>(this);
    w->on_edge_(w, closed);
  } else {
    static_cast<IoWait*>(this)->wake(closed);
  }
}

}  // namespace corio::detail
