// corio::Semaphore and corio::BoundedSemaphore: asyncio's, FIFO-fair.
//
//   Semaphore sem(10);
//   auto permit = co_await sem.scoped_acquire();   // `async with sem:`
//
// Suspends: acquire() while no permit is free or others are already waiting.
// Resumed by: release(), which hands its permit straight to the longest
// waiter. A waiter cancelled after being handed a permit passes it on.
#pragma once

#include <corio/detail/acquire.hpp>

namespace corio {

class Semaphore {
 public:
  // Throws ValueError if value < 0.
  explicit Semaphore(int value = 1);
  Semaphore(const Semaphore&) = delete;
  Semaphore& operator=(const Semaphore&) = delete;

  detail::AcquireAwaiter<Semaphore> acquire() noexcept {
    return detail::AcquireAwaiter<Semaphore>(*this);
  }
  detail::ScopedAcquireAwaiter<Semaphore> scoped_acquire() noexcept {
    return detail::ScopedAcquireAwaiter<Semaphore>(*this);
  }
  void release() { release_owned(); }
  // True when acquire() would wait.
  bool locked() const noexcept { return value_ == 0 || !waiters_.empty(); }
  int value() const noexcept { return value_; }

  using Guard = detail::ReleaseGuard<Semaphore>;

 private:
  friend class detail::AcquireAwaiter<Semaphore>;
  friend class detail::ReleaseGuard<Semaphore>;
  bool try_acquire() noexcept {
    if (value_ == 0 || !waiters_.empty()) return false;
    --value_;
    return true;
  }
  void release_owned() noexcept;
  static void abandon(void* self, detail::WaitQueue::Grant) noexcept {
    static_cast<Semaphore*>(self)->release_owned();
  }
  static const detail::AwaitPoint::Ops kWaitOps;

  int value_;
  detail::WaitQueue waiters_;
};

// A Semaphore that refuses to be released more often than acquired.
class BoundedSemaphore : public Semaphore {
 public:
  explicit BoundedSemaphore(int value = 1) : Semaphore(value), bound_(value) {}
  // Throws ValueError when it would raise the value past its initial one.
  void release();

 private:
  int bound_;
};

}  // namespace corio
