/// \file
/// corio::Lock: asyncio.Lock, FIFO-fair.
///
/// <!-- doc: body (corio::Lock& lock) -->
///     co_await lock.acquire(); /* ... */ lock.release();
///     auto guard = co_await lock.scoped_lock();   // `async with lock:`
///
/// Suspends: acquire() while the lock is held or others are already waiting
/// (an unlocked lock with no waiters is taken without yielding).
/// Resumed by: release(), which hands the lock straight to the longest
/// waiter, so a task arriving later cannot barge in ahead of it. A waiter
/// cancelled after being handed the lock passes it on (see wait_queue.hpp).
#pragma once

#include <corio/detail/acquire.hpp>

namespace corio {

/// asyncio.Lock, FIFO-fair (details at the top of lock.hpp).
class Lock {
 public:
  Lock() = default;
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;

  /// Waits until the lock is this task's (at once if it is free and nobody waits).
  detail::AcquireAwaiter<Lock> acquire() noexcept { return detail::AcquireAwaiter<Lock>(*this); }
  /// Acquires the lock and gives a Guard that releases it (`async with lock:`).
  detail::ScopedAcquireAwaiter<Lock> scoped_lock() noexcept {
    return detail::ScopedAcquireAwaiter<Lock>(*this);
  }
  /// Throws RuntimeError if the lock is not held.
  void release();
  /// Whether a task holds the lock.
  bool locked() const noexcept { return locked_; }

  /// What scoped_lock() gives: it releases the lock when destroyed.
  using Guard = detail::ReleaseGuard<Lock>;

 private:
  friend class detail::AcquireAwaiter<Lock>;
  friend class detail::ReleaseGuard<Lock>;
  bool try_acquire() noexcept {
    if (locked_ || !waiters_.empty()) return false;
    locked_ = true;
    owner_ = detail::tls_current_task;
    return true;
  }
  void release_owned() noexcept;
  // The lock was the woken waiter's from the hand-off on: it runs now.
  void took_grant() noexcept { owner_ = detail::tls_current_task; }
  static void abandon(void* self, detail::WaitQueue::Grant) noexcept {
    static_cast<Lock*>(self)->release_owned();
  }
  static const detail::AwaitPoint::Ops kWaitOps;
  // A waiter's call-graph entry names the holder too (deadlock cycles).
  static void describe_wait(const detail::AwaitPoint* p, detail::AwaitInfo& info) noexcept;

  bool locked_ = false;
  // The task that took the lock last (one store per acquire), for deadlock
  // reports; stale between a hand-off and the new owner's next step, when
  // the loop is not idle and nobody reads it.
  const detail::TaskBase* owner_ = nullptr;
  detail::WaitQueue waiters_;
};

}  // namespace corio
