// The non-template half of corio's queues: counters, reservations, shutdown,
// task_done()/join() and the two wait queues. BasicQueue<T, Store>
// (queue.hpp) adds only the items.
//
// Hand-off by reservation. asyncio wakes a waiting getter when an item
// arrives, but the item stays up for grabs until the getter runs: a task
// arriving in between takes it and the woken getter waits again, at the back.
// Here an arriving item is reserved for the longest-waiting getter at once
// (and a freed slot for the longest-waiting putter), which gives:
//   - no barging: get()/put() take the fast path only when an *unreserved*
//     item or slot exists, and while anyone waits none does (the invariant
//     every wake-up below keeps);
//   - no lost wake-up and nothing stolen: a woken waiter cancelled before it
//     ran passes its reservation to the next waiter, or leaves the item (or
//     slot) free for anyone (abandon_get/abandon_put).
// The reserved item itself is chosen when the getter runs, so LifoQueue and
// PriorityQueue hand out the best item at that moment, as asyncio does.
#pragma once

#include <cstddef>

#include <corio/detail/wait_queue.hpp>
#include <corio/event.hpp>

namespace corio::detail {

class QueueBase {
 public:
  QueueBase(const QueueBase&) = delete;
  QueueBase& operator=(const QueueBase&) = delete;

  // 0: unbounded.
  std::size_t maxsize() const noexcept { return maxsize_; }
  // The items a get() could take now: one already promised to a woken getter
  // counts as gone.
  std::size_t qsize() const noexcept { return size_ - items_reserved_; }
  // True when get_nowait() would fail.
  bool empty() const noexcept { return qsize() == 0; }
  // True when put_nowait() would raise QueueFull: a slot promised to a woken
  // putter counts as taken. (So both empty() and full() can hold, while the
  // last free slot waits for its putter to run.)
  bool full() const noexcept { return maxsize_ > 0 && size_ + slots_reserved_ >= maxsize_; }

  // One item put earlier has been dealt with. Throws ValueError when called
  // more often than items were put.
  void task_done();
  // Waits until every item put so far has been task_done() (or dropped by
  // shutdown(true)). Returns at once, without yielding, if that is already so.
  Event::WaitAwaiter join() noexcept { return finished_.wait(); }

 protected:
  // What a waiter is woken with.
  static constexpr WaitQueue::Grant kReserved = 1;  // an item (a slot) is held for it
  static constexpr WaitQueue::Grant kShutdown = 2;  // shutdown(): raise QueueShutDown

  explicit QueueBase(std::size_t maxsize) noexcept;
  ~QueueBase() = default;

  // The no-wait conditions: an unreserved item, an unreserved free slot.
  bool can_get() const noexcept { return size_ > items_reserved_; }
  bool can_put() const noexcept { return !full(); }
  bool is_shutdown() const noexcept { return is_shutdown_; }
  // Throw what get_nowait()/put_nowait() raise when they cannot go ahead.
  void check_get() const;
  void check_put() const;
  // Bookkeeping after the store gained or lost one item; passes the new
  // item (the freed slot) to the longest waiter.
  void added() noexcept;
  void removed() noexcept;
  // A getter woken with kReserved takes its reservation. False when
  // shutdown(immediate=true) dropped the item meanwhile.
  bool claim_item() noexcept;
  // A putter woken with kReserved takes its slot. Throws QueueShutDown (the
  // slot released) when the queue shut down meanwhile, as asyncio's put_nowait would.
  void claim_slot();
  // After the store dropped every item when `immediate`.
  void shut_down(bool immediate) noexcept;

  // A waiter woken with `grant` was cancelled before it ran.
  static void abandon_get(void* self, WaitQueue::Grant grant) noexcept;
  static void abandon_put(void* self, WaitQueue::Grant grant) noexcept;
  static const AwaitPoint::Ops kGetOps;
  static const AwaitPoint::Ops kPutOps;

  WaitQueue getters_;
  WaitQueue putters_;

 private:
  std::size_t maxsize_;
  std::size_t size_ = 0;            // the store's size, mirrored for this half
  std::size_t items_reserved_ = 0;  // items held for woken getters (<= size_)
  std::size_t slots_reserved_ = 0;  // free slots held for woken putters
  std::size_t unfinished_tasks_ = 0;
  Event finished_;  // set while unfinished_tasks_ == 0
  bool is_shutdown_ = false;
};

}  // namespace corio::detail
