/// \file
/// corio::Semaphore and corio::BoundedSemaphore: asyncio's, FIFO-fair.
///
/// <!-- doc: body -->
///     corio::Semaphore sem(10);
///     auto permit = co_await sem.scoped_acquire();   // `async with sem:`
///
/// Suspends: acquire() while no permit is free, others are already waiting, or
/// a waiter has been handed a permit but has not run yet (asyncio 3.13: a
/// newcomer never overtakes a woken waiter, and locked() stays true meanwhile).
/// Resumed by: release(), which hands its permit straight to the longest
/// waiter; permits freed while woken waiters are still on their way are handed
/// on when one of them runs, as asyncio's acquire() does in its `finally`. A
/// waiter cancelled after being handed a permit passes it on.
#pragma once

#include <corio/detail/acquire.hpp>

namespace corio {

/// asyncio.Semaphore, FIFO-fair (details at the top of semaphore.hpp).
class Semaphore {
 public:
  /// Throws ValueError if value < 0.
  explicit Semaphore(int value = 1);
  Semaphore(const Semaphore&) = delete;
  Semaphore& operator=(const Semaphore&) = delete;

  /// Waits for a permit (at once if one is free and nobody waits).
  detail::AcquireAwaiter<Semaphore> acquire() noexcept {
    return detail::AcquireAwaiter<Semaphore>(*this);
  }
  /// Acquires a permit and gives a Guard that releases it (`async with sem:`).
  detail::ScopedAcquireAwaiter<Semaphore> scoped_acquire() noexcept {
    return detail::ScopedAcquireAwaiter<Semaphore>(*this);
  }
  /// Gives a permit back (to the longest waiter, if any).
  void release() { release_owned(); }
  /// True when acquire() would wait.
  bool locked() const noexcept { return value_ == 0 || !waiters_.empty() || woken_ > 0; }
  /// The free permits, not counting those handed to woken waiters (asyncio's _value).
  int value() const noexcept { return value_; }

  /// What scoped_acquire() gives: it releases the permit when destroyed.
  using Guard = detail::ReleaseGuard<Semaphore>;

 private:
  friend class detail::AcquireAwaiter<Semaphore>;
  friend class detail::ReleaseGuard<Semaphore>;
  bool try_acquire() noexcept {
    if (locked()) return false;
    --value_;
    return true;
  }
  void release_owned() noexcept;
  // A woken waiter ran with its permit.
  void took_grant() noexcept;
  // A woken waiter was cancelled before it ran: its permit goes on.
  static void abandon(void* self, detail::WaitQueue::Grant) noexcept;
  // Hands a permit to the longest waiter, if any.
  bool wake_one() noexcept;
  // Hands every free permit on, in queue order.
  void wake_waiters() noexcept;
  static const detail::AwaitPoint::Ops kWaitOps;

  int value_;
  int woken_ = 0;  // waiters handed a permit that have not run yet
  detail::WaitQueue waiters_;
};

/// A Semaphore that refuses to be released more often than acquired.
class BoundedSemaphore : public Semaphore {
 public:
  /// value permits, and never more (ValueError if value < 0).
  explicit BoundedSemaphore(int value = 1) : Semaphore(value), bound_(value) {}
  /// Throws ValueError when it would raise the value past its initial one.
  void release();

 private:
  int bound_;
};

}  // namespace corio
