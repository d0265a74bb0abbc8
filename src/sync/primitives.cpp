// Lock, Semaphore, BoundedSemaphore and Event on the shared wait queue.
#include <corio/errors.hpp>
#include <corio/event.hpp>
#include <corio/lock.hpp>
#include <corio/semaphore.hpp>

namespace corio {

using detail::WaitQueue;

const detail::AwaitPoint::Ops Lock::kWaitOps{&WaitQueue::Waiter::on_cancel, "lock"};
const detail::AwaitPoint::Ops Semaphore::kWaitOps{&WaitQueue::Waiter::on_cancel, "semaphore"};
const detail::AwaitPoint::Ops Event::kWaitOps{&WaitQueue::Waiter::on_cancel, "event"};

void Lock::release() {
  if (!locked_) throw RuntimeError("Lock is not acquired.");
  release_owned();
}

// Hand-off: with a waiter the lock stays locked, now on its behalf.
void Lock::release_owned() noexcept {
  if (!waiters_.wake_one()) locked_ = false;
}

Semaphore::Semaphore(int value) : value_(value) {
  if (value < 0) throw ValueError("Semaphore initial value must be >= 0");
}

// Hand-off: with a waiter the permit goes to it and the value stays.
void Semaphore::release_owned() noexcept {
  if (!waiters_.wake_one()) ++value_;
}

void BoundedSemaphore::release() {
  // As asyncio: waiters hold the value at 0, so this only fires with waiters
  // when the bound itself is 0.
  if (value() >= bound_) throw ValueError("BoundedSemaphore released too many times");
  Semaphore::release();
}

void Event::set() noexcept {
  if (set_) return;
  set_ = true;
  waiters_.wake_all();
}

}  // namespace corio
