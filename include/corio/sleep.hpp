/// \file
/// co_await corio::sleep(duration): asyncio.sleep.
///
/// Suspends the task until the deadline. sleep(0s) (or any non-positive
/// duration) yields to the loop exactly once: the task goes to the back of the
/// ready queue and runs again in the next iteration. The timer node lives in
/// this awaiter, in the coroutine frame: sleeping allocates nothing.
/// Resumed by: the loop's expired-timers phase. Cancellation removes the timer
/// and throws CancelledError here.
#pragma once

#include <chrono>
#include <coroutine>

#include <corio/event_loop.hpp>

namespace corio {

/// What sleep() returns, to co_await (details at the top of sleep.hpp).
class [[nodiscard]] SleepAwaiter : private detail::AwaitPoint, private detail::TimerNode {
 public:
  /// A sleep of `seconds` (0 or less: one pass of the loop).
  /// (Its ops are set once, here: no null first and a second store when it suspends.)
  explicit SleepAwaiter(double seconds) noexcept : AwaitPoint{&kOps}, delay_(seconds) {}
  /// Movable until awaited (it holds only the delay then), so that
  /// `wait_for(sleep(10s), 20ms)` can carry it into the combinator's frame.
  SleepAwaiter(SleepAwaiter&& o) noexcept : AwaitPoint{&kOps}, delay_(o.delay_) {}
  SleepAwaiter& operator=(const SleepAwaiter&) = delete;
  ~SleepAwaiter() {
    if (in_heap()) loop_->io().remove_timer(this);
  }

  /// Never ready: even sleep(0s) yields once.
  bool await_ready() const noexcept { return false; }
  /// Sets the timer (or queues the task for the next iteration).
  void await_suspend(std::coroutine_handle<> h) {
    task_ = &detail::current_task_for("sleep()");
    if (delay_ > 0) {
      loop_ = &task_->loop()->loop();
      expire = &on_expire;
      loop_->io().add_timer(this, loop_->time() + delay_);
    } else {
      task_->wake();
    }
    task_->suspend_at(h, this);
  }
  /// Returns, or throws CancelledError if the task was cancelled meanwhile.
  void await_resume() const {
    task_->check_interrupt();  // first: it also clears the task's interrupt flag
    if (cancelled_) task_->throw_cancelled();
  }

 private:
  static void on_expire(detail::TimerNode* n) noexcept {
    static_cast<SleepAwaiter*>(n)->task_->wake();
  }
  // Once the timer is withdrawn the sleep is over: it ends in CancelledError
  // even if the request is withdrawn (uncancel) before the task runs, as a
  // cancelled asyncio future stays cancelled.
  static bool on_cancel(detail::AwaitPoint* p, const std::string&) noexcept {
    auto* self = static_cast<SleepAwaiter*>(p);
    if (!self->in_heap()) return false;  // already expired: the step interrupts
    self->loop_->io().remove_timer(self);
    self->cancelled_ = true;
    self->task_->wake();
    return true;
  }

  static void describe(const detail::AwaitPoint* p, detail::AwaitInfo& info) noexcept {
    auto* self = static_cast<const SleepAwaiter*>(p);
    if (self->in_heap()) info.deadline = self->when;
  }
  static constexpr Ops kOps{&on_cancel, "sleep", &describe};
  double delay_;
  detail::TaskBase* task_ = nullptr;
  EventLoop* loop_ = nullptr;
  bool cancelled_ = false;
};
// A sleeping task's frame holds one (the memory budget of task_state.cpp).
static_assert(sizeof(void*) != 8 || sizeof(SleepAwaiter) <= 72, "sleep awaiter grew");

/// Suspends the task for delay (asyncio.sleep); sleep(0s) yields once.
template <class Rep, class Period>
SleepAwaiter sleep(std::chrono::duration<Rep, Period> delay) noexcept {
  return SleepAwaiter(std::chrono::duration<double>(delay).count());
}

}  // namespace corio
