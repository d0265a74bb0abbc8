// The one wait queue under every sync primitive (Trio's ParkingLot, Tokio's
// batch_semaphore): FIFO, intrusive, cancellable in O(1).
//
// A Waiter is the awaiter object itself, in the suspended coroutine's frame:
// parking allocates nothing. The primitive wakes waiters in arrival order and
// hands each woken one a *grant* (the lock, a permit, "the event is set").
// Cancellation has two cases, the second being where asyncio's own
// primitives had bugs:
//   1. still queued: the waiter leaves the queue and throws CancelledError;
//   2. granted, but cancelled before it ran: it throws CancelledError and
//      gives the grant back through the primitive's abandon function, which
//      passes it on: no stolen permit, no lost wake-up.
// A grant is a small number the primitive chooses (0 means "not granted"), so
// that one queue can wake for different reasons: a Queue's getter is woken
// either with an item reserved for it or because the queue shut down.
#pragma once

#include <cstddef>

#include <corio/detail/task_state.hpp>

namespace corio::detail {

class WaitQueue {
 public:
  class Waiter;
  using Grant = unsigned;
  static constexpr Grant kGranted = 1;
  // Called with the primitive and the grant when a granted waiter is
  // cancelled before it could use the grant.
  using AbandonFn = void (*)(void* primitive, Grant grant) noexcept;

  WaitQueue() = default;
  WaitQueue(const WaitQueue&) = delete;
  WaitQueue& operator=(const WaitQueue&) = delete;

  bool empty() const noexcept { return waiters_.empty(); }
  // O(n): for call graphs and deadlock reports, not for the hot path.
  std::size_t size() const noexcept;
  // Grants the longest-waiting task and wakes it. False if nobody waits.
  bool wake_one(Grant grant = kGranted) noexcept;
  // Grants every waiter, in order.
  void wake_all(Grant grant = kGranted) noexcept {
    while (wake_one(grant)) {
    }
  }

 private:
  ListHead waiters_;
};

class WaitQueue::Waiter : private ListHook, private AwaitPoint {
 public:
  // What a waiter queues on and for, given only when it suspends: a waiter
  // that finds its primitive free (acquire(), get(), wait() on a set Event)
  // stores none of it. Measured on bench/sync_bench, same run: with these
  // five stores in the constructor an uncontended acquire+release cost
  // 3.57 ns, without them 2.62 ns (the loop is bound by its stores).
  // `ops` names the primitive for task dumps; its cancel must be on_cancel.
  struct Target {
    WaitQueue& queue;
    void* primitive;
    AbandonFn abandon;
    const AwaitPoint::Ops* ops;
  };
  Waiter() noexcept = default;
  // Movable until awaited, so that `wait_for(lock.acquire(), 1s)` can carry
  // the awaiter into the combinator's frame: nothing is set before then.
  Waiter(Waiter&&) noexcept {}
  Waiter& operator=(Waiter&&) = delete;
  ~Waiter() { unlink(); }

  void await_suspend(std::coroutine_handle<> h, const Target& target) {
    queue_ = &target.queue;
    primitive_ = target.primitive;
    abandon_ = target.abandon;
    this->ops = target.ops;
    grant_ = 0;
    cancelled_ = false;
    task_ = &current_task_for("waiting on a Lock, Event, Semaphore or Queue");
    queue_->waiters_.push_back(this);
    task_->suspend_at(h, this);
  }
  // Inline for the fast path: a waiter that never suspended (the primitive
  // was free) has nothing to check, and the call folds away.
  void await_resume() {
    if (task_) resume_after_wait();
  }
  // After await_resume: what the waiter was woken with (0 if it never waited).
  Grant grant() const noexcept { return task_ ? grant_ : 0; }

  static bool on_cancel(AwaitPoint* p, const std::string& msg) noexcept;
  // For call graphs: the primitive and how many tasks queue on it.
  static void describe(const AwaitPoint* p, AwaitInfo& info) noexcept;

 private:
  friend class WaitQueue;
  void resume_after_wait();
  // Set by await_suspend (read only once task_ is).
  WaitQueue* queue_;
  void* primitive_;
  AbandonFn abandon_;
  TaskBase* task_ = nullptr;
  Grant grant_;
  bool cancelled_;
};

// A wait that always suspends (nothing to check first), until the primitive
// grants it or a cancellation unlinks it: Condition's park, Barrier's wait for
// the next state change.
class [[nodiscard]] Park {
 public:
  Park(WaitQueue& queue, void* primitive, WaitQueue::AbandonFn abandon,
       const AwaitPoint::Ops* ops) noexcept
      : target_{queue, primitive, abandon, ops} {}
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h) { waiter_.await_suspend(h, target_); }
  void await_resume() { waiter_.await_resume(); }

 private:
  WaitQueue::Waiter::Target target_;
  WaitQueue::Waiter waiter_;
};

}  // namespace corio::detail
