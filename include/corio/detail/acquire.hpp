// The awaiters and the RAII guard shared by Lock and Semaphore (and anything
// else that is "acquire, maybe wait, release"): one implementation of the
// fast path, the wait, and `auto guard = co_await x.scoped_...()`.
//
// P provides: bool try_acquire() noexcept; WaitQueue waiters_;
// static void abandon(void*, WaitQueue::Grant) noexcept; static const AwaitPoint::Ops kWaitOps;
// void release(); void took_grant() noexcept, called when a woken waiter runs
// with its grant (a Semaphore counts the woken waiters still on their way).
#pragma once

#include <utility>

#include <corio/detail/wait_queue.hpp>

namespace corio::detail {

template <class P>
class [[nodiscard]] AcquireAwaiter {
 public:
  explicit AcquireAwaiter(P& p) noexcept : p_(p) {}
  // Free and nobody queued: take it without suspending (asyncio does not yield here either).
  bool await_ready() noexcept { return p_.try_acquire(); }
  void await_suspend(std::coroutine_handle<> h) {
    waiter_.await_suspend(h, {p_.waiters_, &p_, &P::abandon, &P::kWaitOps});
  }
  void await_resume() {
    waiter_.await_resume();
    if (waiter_.grant()) p_.took_grant();
  }

 protected:
  P& p_;
  WaitQueue::Waiter waiter_;
};

// Releases P once, when destroyed (the `async with` block's end) or at unlock().
template <class P>
class [[nodiscard]] ReleaseGuard {
 public:
  explicit ReleaseGuard(P& p) noexcept : p_(&p) {}
  ReleaseGuard(ReleaseGuard&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  ReleaseGuard& operator=(ReleaseGuard&& o) noexcept {
    if (this != &o) {
      unlock();
      p_ = std::exchange(o.p_, nullptr);
    }
    return *this;
  }
  ~ReleaseGuard() { unlock(); }
  void unlock() noexcept {
    if (P* p = std::exchange(p_, nullptr)) p->release_owned();
  }
  bool owns() const noexcept { return p_ != nullptr; }

 private:
  P* p_;
};

template <class P>
class [[nodiscard]] ScopedAcquireAwaiter : public AcquireAwaiter<P> {
 public:
  using AcquireAwaiter<P>::AcquireAwaiter;
  ReleaseGuard<P> await_resume() {
    AcquireAwaiter<P>::await_resume();
    return ReleaseGuard<P>(this->p_);
  }
};

}  // namespace corio::detail
