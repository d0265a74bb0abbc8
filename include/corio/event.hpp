/// \file
/// corio::Event: asyncio.Event.
///
/// Suspends: wait() while the event is clear.
/// Resumed by: set(), which wakes every waiter; they return even if clear()
/// runs before they do (asyncio semantics).
#pragma once

#include <corio/detail/wait_queue.hpp>

namespace corio {

/// asyncio.Event: tasks wait until it is set.
class Event {
 public:
  Event() = default;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  /// Sets it and wakes every waiter.
  void set() noexcept;
  /// Clears it: later wait()s wait again.
  void clear() noexcept { set_ = false; }
  /// Whether it is set.
  bool is_set() const noexcept { return set_; }

  /// What wait() returns, to co_await.
  class [[nodiscard]] WaitAwaiter {
   public:
    /// A wait on ev.
    explicit WaitAwaiter(Event& ev) noexcept : ev_(ev) {}
    /// Ready at once when the event is set.
    bool await_ready() const noexcept { return ev_.set_; }
    /// Queues the task until set().
    void await_suspend(std::coroutine_handle<> h) {
      waiter_.await_suspend(h, {ev_.waiters_, &ev_, nullptr, &kWaitOps});
    }
    /// Returns, or throws CancelledError if the task was cancelled meanwhile.
    void await_resume() { waiter_.await_resume(); }

   private:
    Event& ev_;
    detail::WaitQueue::Waiter waiter_;
  };
  /// Waits until the event is set (returns at once if it is).
  WaitAwaiter wait() noexcept { return WaitAwaiter(*this); }

 private:
  static const detail::AwaitPoint::Ops kWaitOps;
  bool set_ = false;
  detail::WaitQueue waiters_;
};

}  // namespace corio
