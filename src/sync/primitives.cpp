// Lock, Semaphore, BoundedSemaphore and Event on the shared wait queue.
#include <corio/errors.hpp>
#include <corio/event.hpp>
#include <corio/lock.hpp>
#include <corio/semaphore.hpp>

namespace corio {

using detail::WaitQueue;

const detail::AwaitPoint::Ops Lock::kWaitOps{&WaitQueue::Waiter::on_cancel, "lock",
                                             &Lock::describe_wait};
const detail::AwaitPoint::Ops Semaphore::kWaitOps{&WaitQueue::Waiter::on_cancel, "semaphore",
                                                  &WaitQueue::Waiter::describe};
const detail::AwaitPoint::Ops Event::kWaitOps{&WaitQueue::Waiter::on_cancel, "event",
                                                  &WaitQueue::Waiter::describe};

void Lock::release() {
  if (!locked_) throw RuntimeError("Lock is not acquired.");
  release_owned();
}

// Hand-off: with a waiter the lock stays locked, now on its behalf.
void Lock::release_owned() noexcept {
  if (waiters_.wake_one()) return;
  locked_ = false;
  owner_ = nullptr;
}

void Lock::describe_wait(const detail::AwaitPoint* p, detail::AwaitInfo& info) noexcept {
  WaitQueue::Waiter::describe(p, info);
  info.holder = static_cast<const Lock*>(info.object)->owner_;
}

Semaphore::Semaphore(int value) : value_(value) {
  if (value < 0) throw ValueError("Semaphore initial value must be >= 0");
}

// As asyncio 3.13: a release wakes (hands its permit to) one waiter; permits
// still free when a woken waiter runs or gives up go to the waiters that
// queued meanwhile (asyncio's `finally` in acquire()), so those are woken
// after it, never ahead of it.
void Semaphore::release_owned() noexcept {
  ++value_;
  (void)wake_one();
}

bool Semaphore::wake_one() noexcept {
  if (!waiters_.wake_one()) return false;
  --value_;
  ++woken_;
  return true;
}

void Semaphore::wake_waiters() noexcept {
  while (value_ > 0 && wake_one()) {
  }
}

void Semaphore::took_grant() noexcept {
  --woken_;
  wake_waiters();
}

void Semaphore::abandon(void* self, WaitQueue::Grant) noexcept {
  auto* sem = static_cast<Semaphore*>(self);
  --sem->woken_;
  ++sem->value_;
  sem->wake_waiters();
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
