// co_await timeout(d, aw) / timeout_at(when, aw): asyncio.timeout, as a wrapper.
//
// Awaits aw inline in the current task with a deadline. When the deadline
// passes, the task is cancelled; the CancelledError unwinds aw (destructors
// run) and turns into TimeoutError here. A cancellation that came from
// elsewhere stays a CancelledError: the decision uses the task's
// cancelling() count, exactly as asyncio.timeout does, so nested timeouts and
// outer cancellations compose.
#pragma once

#include <chrono>

#include <corio/detail/awaitable.hpp>

namespace corio {

namespace detail {

// The deadline of one timeout block: a timer that cancels the task.
class TimeoutScope : private TimerNode {
 public:
  TimeoutScope(double deadline, bool relative);
  TimeoutScope(const TimeoutScope&) = delete;
  ~TimeoutScope();
  // In the CancelledError handler: throws TimeoutError if the deadline caused
  // the cancellation, else returns (the caller rethrows).
  void on_cancelled();

 private:
  static void on_expire(TimerNode* n) noexcept;
  TaskBase& task_;
  EventLoop& loop_;
  int cancelling_at_entry_;
  bool expired_ = false;
  bool settled_ = false;
};

template <class T, class A>
Coro<T> with_deadline(double deadline, bool relative, A aw) {
  TimeoutScope scope(deadline, relative);
  try {
    co_return co_await std::move(aw);
  } catch (const CancelledError&) {
    scope.on_cancelled();
    throw;
  }
}

}  // namespace detail

template <detail::Awaitable A, class Rep, class Period>
Coro<detail::result_t<A>> timeout(std::chrono::duration<Rep, Period> delay, A aw) {
  return detail::with_deadline<detail::result_t<A>>(std::chrono::duration<double>(delay).count(),
                                                    true, std::move(aw));
}

// `when` is on the loop's time() scale.
template <detail::Awaitable A>
Coro<detail::result_t<A>> timeout_at(double when, A aw) {
  return detail::with_deadline<detail::result_t<A>>(when, false, std::move(aw));
}

// asyncio.wait_for: the awaitable with a timeout; TimeoutError on expiry, and
// the inner work is cancelled.
template <detail::Awaitable A, class Rep, class Period>
Coro<detail::result_t<A>> wait_for(A aw, std::chrono::duration<Rep, Period> delay) {
  return timeout(delay, std::move(aw));
}

}  // namespace corio
