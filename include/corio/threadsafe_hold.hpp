/// \file
/// corio::ThreadsafeHold: another thread's promise to post to a loop later
/// (EventLoop::hold_threadsafe), which the loop's deadlock check counts.
#pragma once

#include <functional>
#include <utility>

#include <corio/handle.hpp>

namespace corio {

class EventLoop;

/// A promise that some other thread will call call_soon_threadsafe() on a
/// loop later (EventLoop::hold_threadsafe): while it lives, the loop's
/// deadlock check counts it as something that can wake a task. Usable and
/// destroyable from any thread; letting go of it wakes the loop so that it
/// checks again. The loop must outlive it: end it with post_and_release().
class ThreadsafeHold {
 public:
  ThreadsafeHold() noexcept = default;
  /// Takes o's hold (o holds nothing after).
  ThreadsafeHold(ThreadsafeHold&& o) noexcept : loop_(std::exchange(o.loop_, nullptr)) {}
  /// Lets go of this hold (as reset()) and takes o's.
  ThreadsafeHold& operator=(ThreadsafeHold&& o) noexcept {
    if (this != &o) {
      reset();
      loop_ = std::exchange(o.loop_, nullptr);
    }
    return *this;
  }
  ~ThreadsafeHold() { reset(); }
  /// Lets go of the hold now.
  void reset() noexcept;
  /// call_soon_threadsafe(fn) and reset() in one step, for the last post: fn
  /// may end the loop's work, and after a separate post the loop could be
  /// gone before reset() touched it. Throws RuntimeError if the hold is empty
  /// or the loop closed (the hold is let go of either way).
  Handle post_and_release(std::function<void()> fn);

 private:
  friend class EventLoop;
  explicit ThreadsafeHold(EventLoop* loop) noexcept : loop_(loop) {}
  EventLoop* loop_ = nullptr;
};

}  // namespace corio
