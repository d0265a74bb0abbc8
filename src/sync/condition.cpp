// Condition on the shared wait queue: the lock hand-off is the Lock's; this
// file adds the park between "release" and "re-acquire", and the rules that
// keep a cancelled wait() from losing either the lock or a notification.
#include <cstddef>
#include <exception>
#include <limits>

#include <corio/condition.hpp>
#include <corio/errors.hpp>

namespace corio {

using detail::WaitQueue;

const detail::AwaitPoint::Ops Condition::kWaitOps{&WaitQueue::Waiter::on_cancel, "condition",
                                                  &WaitQueue::Waiter::describe};

// The park step of wait(): there is no "already notified" to check.
detail::Park Condition::park() noexcept {
  return detail::Park(waiters_, this, &Condition::abandon, &kWaitOps);
}

// Cancellation, by where it lands:
//  - parked, not notified: the waiter leaves the queue; nothing to pass on;
//  - notified but not yet run: the park's abandon wakes the next waiter;
//  - notified, then cancelled while re-acquiring the lock: the notification
//    was consumed but the caller will not act on it, so it is passed on here
//    (asyncio 3.13 does `self._notify(1)` for the same reason).
// In every case the lock is re-acquired before CancelledError leaves, however
// many times the re-acquisition itself is cancelled.
Coro<void> Condition::wait() {
  if (!locked()) throw RuntimeError("cannot wait on un-acquired lock");
  release();
  std::exception_ptr error;
  bool notified = false;
  try {
    co_await park();
    notified = true;
  } catch (...) {
    error = std::current_exception();
  }
  for (;;) {
    try {
      co_await acquire();
      break;
    } catch (const CancelledError&) {
      error = std::current_exception();  // the most recent, as asyncio re-raises
    }
  }
  if (error) {
    if (notified) wake(1);
    std::rethrow_exception(error);
  }
}

void Condition::notify(std::size_t n) {
  if (!locked()) throw RuntimeError("cannot notify on un-acquired lock");
  wake(n);
}

void Condition::notify_all() { notify(std::numeric_limits<std::size_t>::max()); }

void Condition::wake(std::size_t n) noexcept {
  for (; n > 0 && waiters_.wake_one(); --n) {
  }
}

}  // namespace corio
