// The non-template half of Queue, LifoQueue and PriorityQueue: see
// detail/queue_base.hpp for the reservation scheme.
#include <algorithm>

#include <corio/detail/queue_base.hpp>
#include <corio/errors.hpp>

namespace corio::detail {

const AwaitPoint::Ops QueueBase::kGetOps{&WaitQueue::Waiter::on_cancel, "queue get",
                                                  &WaitQueue::Waiter::describe};
const AwaitPoint::Ops QueueBase::kPutOps{&WaitQueue::Waiter::on_cancel, "queue put",
                                                  &WaitQueue::Waiter::describe};

QueueBase::QueueBase(std::size_t maxsize) noexcept : maxsize_(maxsize) { finished_.set(); }

void QueueBase::check_get() const {
  if (can_get()) return;
  // After shutdown an empty queue stays empty: nothing to wait for.
  if (is_shutdown_) throw QueueShutDown();
  throw QueueEmpty();
}

void QueueBase::check_put() const {
  if (is_shutdown_) throw QueueShutDown();
  if (!can_put()) throw QueueFull();
}

void QueueBase::added() noexcept {
  ++size_;
  ++unfinished_tasks_;
  finished_.clear();
  // Waiting getters mean no unreserved item was there: this one is theirs.
  if (getters_.wake_one(kReserved)) ++items_reserved_;
}

void QueueBase::removed() noexcept {
  --size_;
  // Waiting putters mean the queue was full counting reservations
  // (size_ + slots_reserved_ == maxsize_): the slot just freed is theirs.
  if (putters_.wake_one(kReserved)) ++slots_reserved_;
}

bool QueueBase::claim_item() noexcept {
  // A reserved item is in the store until its getter runs, so the count
  // drops to 0 under the getter only when shut_down(true) dropped them all.
  if (items_reserved_ == 0) return false;
  --items_reserved_;
  return true;
}

void QueueBase::claim_slot() {
  --slots_reserved_;
  if (is_shutdown_) throw QueueShutDown();
}

void QueueBase::shut_down(bool immediate) noexcept {
  is_shutdown_ = true;
  if (immediate) {
    // As asyncio: each dropped item counts as done, so join() is released
    // unless items already taken are still being worked on.
    unfinished_tasks_ -= std::min(size_, unfinished_tasks_);
    size_ = 0;
    items_reserved_ = 0;
    if (unfinished_tasks_ == 0) finished_.set();
  }
  // Waiting getters found no unreserved item, and no item comes any more;
  // waiting putters will never be let in.
  getters_.wake_all(kShutdown);
  putters_.wake_all(kShutdown);
}

void QueueBase::task_done() {
  if (unfinished_tasks_ == 0) throw ValueError("task_done() called too many times");
  if (--unfinished_tasks_ == 0) finished_.set();
}

void QueueBase::abandon_get(void* self, WaitQueue::Grant grant) noexcept {
  auto* q = static_cast<QueueBase*>(self);
  if (grant != kReserved || !q->claim_item()) return;
  // The item goes to the next getter, or stays in the queue for anyone.
  if (q->getters_.wake_one(kReserved)) ++q->items_reserved_;
}

void QueueBase::abandon_put(void* self, WaitQueue::Grant grant) noexcept {
  auto* q = static_cast<QueueBase*>(self);
  if (grant != kReserved) return;
  // The slot goes to the next putter, or stays free for anyone.
  if (!q->putters_.wake_one(kReserved)) --q->slots_reserved_;
}

}  // namespace corio::detail
