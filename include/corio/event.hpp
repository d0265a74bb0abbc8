// corio::Event: asyncio.Event.
//
// Suspends: wait() while the event is clear.
// Resumed by: set(), which wakes every waiter; they return even if clear()
// runs before they do (asyncio semantics).
#pragma once

#include <corio/detail/wait_queue.hpp>

namespace corio {

class Event {
 public:
  Event() = default;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  void set() noexcept;
  void clear() noexcept { set_ = false; }
  bool is_set() const noexcept { return set_; }

  class [[nodiscard]] WaitAwaiter {
   public:
    explicit WaitAwaiter(Event& ev) noexcept
        : ev_(ev), waiter_(ev.waiters_, &ev, nullptr, &kWaitOps) {}
    bool await_ready() const noexcept { return ev_.set_; }
    void await_suspend(std::coroutine_handle<> h) { waiter_.await_suspend(h); }
    void await_resume() { waiter_.await_resume(); }

   private:
    Event& ev_;
    detail::WaitQueue::Waiter waiter_;
  };
  WaitAwaiter wait() noexcept { return WaitAwaiter(*this); }

 private:
  static const detail::AwaitPoint::Ops kWaitOps;
  bool set_ = false;
  detail::WaitQueue waiters_;
};

}  // namespace corio
