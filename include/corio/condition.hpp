/// \file
/// corio::Condition: asyncio.Condition, a condition variable over a Lock.
///
/// <!-- doc: body (std::vector<int>& items) -->
///     corio::Condition cond;                   // or corio::Condition cond(lock);
///     auto guard = co_await cond.scoped_lock();
///     co_await cond.wait_for([&] { return !items.empty(); });
///     cond.notify();                           // with the lock held
///
/// Suspends: wait() until notified, with the lock released meanwhile; then
/// again until the lock is re-acquired. acquire() and scoped_lock() suspend
/// as the Lock's do.
/// Resumed by: notify(n) / notify_all(), which wake the longest-waiting tasks
/// in arrival order; a woken task then queues for the lock like any acquirer.
///
/// wait() always returns or throws with the lock held again, cancelled or not
/// (asyncio: "must re-acquire lock even if wait is cancelled"), so a guard
/// around it releases exactly once. A notification is never lost to a
/// cancellation: a waiter cancelled after being notified passes it to the next
/// waiter (asyncio 3.13's fix, gh-112202).
#pragma once

#include <cstddef>
#include <type_traits>

#include <corio/coro.hpp>
#include <corio/lock.hpp>

namespace corio {

/// asyncio.Condition: a condition variable over a Lock (details at the top of condition.hpp).
class Condition {
 public:
  Condition() noexcept : lock_(&own_) {}
  /// Shares `lock` (which must outlive the condition) instead of owning one.
  explicit Condition(Lock& lock) noexcept : lock_(&lock) {}
  Condition(const Condition&) = delete;
  Condition& operator=(const Condition&) = delete;

  /// The lock's own operations.
  detail::AcquireAwaiter<Lock> acquire() noexcept { return lock_->acquire(); }
  /// Acquires the lock and gives a Guard that releases it (`async with cond:`).
  detail::ScopedAcquireAwaiter<Lock> scoped_lock() noexcept { return lock_->scoped_lock(); }
  /// Releases the lock (RuntimeError if it is not held).
  void release() { lock_->release(); }
  /// Whether the lock is held.
  bool locked() const noexcept { return lock_->locked(); }
  /// What scoped_lock() gives: it releases the lock when destroyed.
  using Guard = Lock::Guard;

  /// Releases the lock, waits to be notified, re-acquires the lock. Throws
  /// RuntimeError if the lock is not held. Spurious wake-ups are allowed, as
  /// for any condition variable: re-check the state, or use wait_for().
  Coro<void> wait();

  /// Waits until pred() is truthy and returns its value (asyncio's
  /// wait_for(predicate), not the timeout combinator corio::wait_for). pred is
  /// called with the lock held; if it holds at once, nothing waits.
  template <class Pred>
  Coro<std::decay_t<std::invoke_result_t<Pred&>>> wait_for(Pred pred) {
    auto result = pred();
    while (!result) {
      co_await wait();
      result = pred();
    }
    co_return result;
  }

  /// Wake up to n waiters, longest-waiting first. Throw RuntimeError if the
  /// lock is not held (the notifier must hold it, as in asyncio).
  void notify(std::size_t n = 1);
  /// Wakes every waiter (the lock must be held).
  void notify_all();

 private:
  detail::Park park() noexcept;
  void wake(std::size_t n) noexcept;
  // A notified waiter was cancelled before it ran: wake another instead.
  static void abandon(void* self, detail::WaitQueue::Grant) noexcept {
    static_cast<Condition*>(self)->wake(1);
  }
  static const detail::AwaitPoint::Ops kWaitOps;

  Lock own_;  // unused when the lock is shared
  Lock* lock_;
  detail::WaitQueue waiters_;
};

}  // namespace corio
