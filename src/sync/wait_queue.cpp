#include <utility>

#include <corio/detail/wait_queue.hpp>

namespace corio::detail {

bool WaitQueue::wake_one(Grant grant) noexcept {
  ListHook* n = waiters_.pop_front();
  if (!n) return false;
  auto* w = static_cast<Waiter*>(n);
  w->grant_ = grant;
  w->task_->wake();
  return true;
}

std::size_t WaitQueue::size() const noexcept {
  std::size_t n = 0;
  waiters_.for_each([&n](ListHook*) { ++n; });
  return n;
}

void WaitQueue::Waiter::describe(const AwaitPoint* p, AwaitInfo& info) noexcept {
  auto* self = static_cast<const Waiter*>(p);
  info.object = self->primitive_;
  info.waiters = self->queue_->size();
  info.has_waiters = true;
}

bool WaitQueue::Waiter::on_cancel(AwaitPoint* p, const std::string&) noexcept {
  auto* self = static_cast<Waiter*>(p);
  if (self->grant_) return false;  // case 2: the step interrupts; await_resume gives it back
  self->unlink();                    // case 1
  self->cancelled_ = true;
  self->task_->wake();
  return true;
}

void WaitQueue::Waiter::resume_after_wait() {
  if (task_->interrupt_pending() && grant_) {
    if (abandon_) abandon_(primitive_, std::exchange(grant_, 0));
  }
  task_->check_interrupt();
  if (cancelled_) task_->throw_cancelled();
}

}  // namespace corio::detail
