/// \file
/// corio::Queue, corio::LifoQueue, corio::PriorityQueue: asyncio.Queue and its
/// siblings as of Python 3.13 (shutdown included), FIFO-fair.
///
/// <!-- doc: body (Job job) -->
///     corio::Queue<Job> q(4);            // maxsize 4; 0 means unbounded
///     co_await q.put(std::move(job));    // producer
///     Job j = co_await q.get();          // consumer ...
///     q.task_done();                     // ... says it is finished with j
///     co_await q.join();                 // every item put has been task_done()
///
/// Suspends: get() while no item is there for it; put() while the queue is
/// full. An available item or a free slot is taken without yielding (asyncio
/// does not yield there either).
/// Resumed by: put()/put_nowait(), which reserves the new item for the
/// longest-waiting getter; get()/get_nowait(), which reserves the freed slot
/// for the longest-waiting putter; shutdown(), which wakes every waiter to
/// raise QueueShutDown. A task arriving later cannot take a reserved item or
/// slot, and a waiter cancelled after being woken passes its reservation on:
/// no barging, nothing lost (see detail/queue_base.hpp).
///
/// Which item get() returns: the oldest (Queue), the newest (LifoQueue), or
/// the *smallest* under Compare (PriorityQueue, like Python's heapq-based
/// one). That is the opposite of std::priority_queue: with the default
/// std::less the minimum comes first, with std::greater the maximum.
///
/// T may be move-only (std::unique_ptr<Job>). put() holds the item in its
/// awaiter until it is in the queue; a put() that raises (cancelled, timed
/// out, shut down) drops it. put_nowait(T&&) moves from its argument only on
/// success.
///
/// shutdown(immediate = false), as asyncio 3.13: afterwards put() and
/// put_nowait() raise QueueShutDown, and get()/get_nowait() do once no item is
/// left; waiting putters and getters raise it at once. immediate = true also
/// drops the items (each counting as task_done() for join()), including
/// ones promised to woken getters, which then raise QueueShutDown too.
#pragma once

#include <algorithm>
#include <cstddef>
#include <deque>
#include <functional>
#include <utility>
#include <vector>

#include <corio/detail/queue_base.hpp>
#include <corio/errors.hpp>

namespace corio {
namespace detail {

// Storage policies: push(item), pop() -> T (never called when empty), clear().

template <class T>
class FifoStore {
 public:
  template <class U>
  void push(U&& item) {
    items_.push_back(std::forward<U>(item));
  }
  T pop() {
    T item = std::move(items_.front());
    items_.pop_front();
    return item;
  }
  void clear() noexcept { items_.clear(); }

 private:
  std::deque<T> items_;
};

template <class T>
class LifoStore {
 public:
  template <class U>
  void push(U&& item) {
    items_.push_back(std::forward<U>(item));
  }
  T pop() {
    T item = std::move(items_.back());
    items_.pop_back();
    return item;
  }
  void clear() noexcept { items_.clear(); }

 private:
  std::vector<T> items_;
};

// A binary heap in a vector rather than std::priority_queue, whose top() is
// const: the item must be moved out. The std heap algorithms keep the
// *largest* element under their comparator in front, so they get Compare
// with its arguments swapped.
template <class T, class Compare>
class HeapStore {
 public:
  explicit HeapStore(Compare compare) : compare_(std::move(compare)) {}
  template <class U>
  void push(U&& item) {
    items_.push_back(std::forward<U>(item));
    std::push_heap(items_.begin(), items_.end(), Inverted{&compare_});
  }
  T pop() {
    std::pop_heap(items_.begin(), items_.end(), Inverted{&compare_});
    T item = std::move(items_.back());
    items_.pop_back();
    return item;
  }
  void clear() noexcept { items_.clear(); }

 private:
  struct Inverted {
    Compare* compare;
    bool operator()(const T& a, const T& b) const { return (*compare)(b, a); }
  };
  std::vector<T> items_;
  Compare compare_;
};

template <class T, class Store>
class BasicQueue : public QueueBase {
 public:
  class [[nodiscard]] GetAwaiter {
   public:
    explicit GetAwaiter(BasicQueue& q) noexcept : q_(q) {}
    // After shutdown, await_resume raises (or drains) without waiting.
    bool await_ready() const noexcept { return q_.can_get() || q_.is_shutdown(); }
    void await_suspend(std::coroutine_handle<> h) {
      waiter_.await_suspend(h, {q_.getters_, static_cast<QueueBase*>(&q_), &abandon_get, &kGetOps});
    }
    T await_resume() {
      waiter_.await_resume();  // CancelledError, the reservation passed on
      switch (waiter_.grant()) {
        case 0:  // never waited
          return q_.get_nowait();
        case kReserved:
          if (q_.claim_item()) return q_.pop();
          break;  // shutdown(true) dropped it
        default:  // kShutdown
          break;
      }
      throw QueueShutDown();
    }

   private:
    BasicQueue& q_;
    WaitQueue::Waiter waiter_;
  };

  class [[nodiscard]] PutAwaiter {
   public:
    PutAwaiter(BasicQueue& q, T item)
        : q_(q), item_(std::move(item)) {}
    // After shutdown, await_resume raises without waiting.
    bool await_ready() const noexcept { return q_.can_put() || q_.is_shutdown(); }
    void await_suspend(std::coroutine_handle<> h) {
      waiter_.await_suspend(h, {q_.putters_, static_cast<QueueBase*>(&q_), &abandon_put, &kPutOps});
    }
    void await_resume() {
      waiter_.await_resume();  // CancelledError, the slot passed on
      switch (waiter_.grant()) {
        case 0:  // never waited
          q_.put_nowait(std::move(item_));
          return;
        case kReserved:
          q_.claim_slot();
          q_.push(std::move(item_));
          return;
        default:  // kShutdown
          throw QueueShutDown();
      }
    }

   private:
    BasicQueue& q_;
    T item_;
    WaitQueue::Waiter waiter_;
  };

  BasicQueue(std::size_t maxsize, Store store) : QueueBase(maxsize), store_(std::move(store)) {}

  GetAwaiter get() noexcept { return GetAwaiter(*this); }
  PutAwaiter put(T item) { return PutAwaiter(*this, std::move(item)); }

  // Throws QueueEmpty, or QueueShutDown once shut down and drained.
  T get_nowait() {
    check_get();
    return pop();
  }
  // Throw QueueFull or QueueShutDown, leaving the argument as it was.
  void put_nowait(const T& item) {
    check_put();
    push(item);
  }
  void put_nowait(T&& item) {
    check_put();
    push(std::move(item));
  }

  void shutdown(bool immediate = false) noexcept {
    if (immediate) store_.clear();
    shut_down(immediate);
  }

 private:
  template <class U>
  void push(U&& item) {
    store_.push(std::forward<U>(item));
    added();
  }
  T pop() {
    T item = store_.pop();
    removed();
    return item;
  }

  Store store_;
};

}  // namespace detail

/// asyncio.Queue: first in, first out (details at the top of queue.hpp).
template <class T>
class Queue : public detail::BasicQueue<T, detail::FifoStore<T>> {
 public:
  /// maxsize: how many items it holds before put() waits; 0 for no bound.
  explicit Queue(std::size_t maxsize = 0)
      : detail::BasicQueue<T, detail::FifoStore<T>>(maxsize, detail::FifoStore<T>()) {}
};

/// asyncio.LifoQueue: the newest item first.
template <class T>
class LifoQueue : public detail::BasicQueue<T, detail::LifoStore<T>> {
 public:
  /// maxsize as Queue's.
  explicit LifoQueue(std::size_t maxsize = 0)
      : detail::BasicQueue<T, detail::LifoStore<T>>(maxsize, detail::LifoStore<T>()) {}
};

/// get() returns the smallest item under Compare first (see the top).
template <class T, class Compare = std::less<T>>
class PriorityQueue : public detail::BasicQueue<T, detail::HeapStore<T, Compare>> {
 public:
  /// maxsize as Queue's; compare orders the items (the smallest comes first).
  explicit PriorityQueue(std::size_t maxsize = 0, Compare compare = Compare())
      : detail::BasicQueue<T, detail::HeapStore<T, Compare>>(
            maxsize, detail::HeapStore<T, Compare>(std::move(compare))) {}
};

}  // namespace corio
