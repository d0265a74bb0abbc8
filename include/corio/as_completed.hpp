/// \file
/// for (auto next : as_completed(tasks)) { T v = co_await next; }
/// asyncio.as_completed (3.13): the results in completion order.
///
/// Each item, when awaited, gets the earliest result not yet taken (value,
/// exception or cancellation, copied from the task; move-only results are
/// moved): whichever item is awaited first gets the first result, whatever
/// its position. An item converted to a Future<T> takes its turn at the
/// conversion (`std::vector<Future<T>> v(items.begin(), items.end())` fills
/// v[0] first). With a timeout, items still waiting then, and items awaited
/// later when no result that came in time is left, fail with TimeoutError;
/// the tasks run on. An item whose awaiter gives up (cancelled, wait_for
/// timed out) passes its result to the next, also when the cancel came after
/// the result was handed to it but before its task ran (asyncio's queue keeps
/// the result for the next get()). Must be created inside a running
/// loop; the object must outlive the iteration (a range-for over the
/// temporary does that).
///
/// Suspends: awaiting an item while no result is waiting for it. Resumed by:
/// the completion that fills it, or the timeout.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include <corio/detail/awaitable.hpp>
#include <corio/task.hpp>

namespace corio {

/// What as_completed() returns: items that hand out the tasks' results in completion order.
template <class T>
class AsCompleted {
  struct Shared;

 public:
  /// An item: awaitable (T v = co_await item) and convertible to Future<T>.
  class Item {
   public:
    /// Item i of the shared state (made by AsCompleted).
    Item(Shared* s, std::size_t i) noexcept : s_(s), i_(i) {}
    Item(const Item& o) noexcept : s_(o.s_), i_(o.i_) {}  ///< a fresh awaiter
    Item& operator=(const Item&) = delete;

    /// const, so that `for (const auto& next : as_completed(...))` compiles as
    /// it did when the items were Futures; the awaiter is per await.
    bool await_ready() const {
      aw_.emplace(s_->claim(i_).state());
      return aw_->await_ready();
    }
    /// Part of co_await: waits for the result this item claimed.
    void await_suspend(std::coroutine_handle<> h) const { aw_->await_suspend(h); }
    /// The claimed result: its value, or it throws its exception.
    T await_resume() const {
      try {
        return aw_->await_resume();
      } catch (const CancelledError&) {
        s_->abandon(i_);
        throw;
      }
    }
    /// The item as a Future<T>: it takes its turn now (details at the top of as_completed.hpp).
    operator Future<T>() const { return s_->claim(i_); }  // NOLINT: an item is a Future<T>

   private:
    Shared* s_;
    std::size_t i_;
    mutable std::optional<detail::FutureAwaiter<T>> aw_;
  };

  /// Watches tasks (in a running loop); with a timeout, items still waiting then fail with
  /// TimeoutError.
  explicit AsCompleted(std::vector<Task<T>> tasks,
                       std::optional<std::chrono::duration<double>> timeout = {})
      : s_(std::make_unique<Shared>()) {
    EventLoop& loop = get_running_loop();
    Shared& s = *s_;
    s.tasks = std::move(tasks);
    s.nodes = std::make_unique<Node[]>(s.tasks.size());
    s.items.reserve(s.tasks.size());
    s.results.v.reserve(s.tasks.size());
    s.claims.v.reserve(s.tasks.size());
    s.returned.v.reserve(s.tasks.size());
    s.claimed.resize(s.tasks.size());
    for (std::size_t i = 0; i < s.tasks.size(); ++i) {
      s.slots.push_back(loop.create_future<T>());
      s.items.emplace_back(&s, i);
    }
    for (std::size_t i = 0; i < s.tasks.size(); ++i) {
      if (s.tasks[i].done()) {
        s.results.push(i);  // the done ones first, in the given order
      } else {
        s.nodes[i].shared = &s;
        s.nodes[i].index = i;
        s.nodes[i].fire = &Node::on_done;
        s.tasks[i].state()->add_callback(&s.nodes[i]);
      }
    }
    if (timeout && s.results.v.size() < s.tasks.size()) {
      Shared* raw = &s;
      s.timer = loop.call_later(*timeout, [raw] { raw->expire(); });
    }
  }
  /// Movable: the items refer to state that moves with it.
  AsCompleted(AsCompleted&&) noexcept = default;
  ~AsCompleted() {
    if (s_) s_->timer.cancel();
  }

  /// Iterates over the items, in the order they are meant to be awaited.
  using iterator = typename std::vector<Item>::const_iterator;
  /// The first item.
  iterator begin() const noexcept { return s_->items.begin(); }
  /// Past the last item.
  iterator end() const noexcept { return s_->items.end(); }
  /// How many items: one per task.
  std::size_t size() const noexcept { return s_->items.size(); }

 private:
  struct Node : detail::Callback {
    Shared* shared = nullptr;
    std::size_t index = 0;
    static void on_done(detail::Callback* cb, detail::FutureStateBase&) noexcept {
      auto* n = static_cast<Node*>(cb);
      n->shared->arrived(n->index);
    }
  };

  // A FIFO of indices that never holds more than n in its life (each task
  // arrives once, each item claims once): its storage is reserved up front,
  // so a completion callback never allocates.
  struct Line {
    std::vector<std::size_t> v;
    std::size_t head = 0;
    bool empty() const noexcept { return head == v.size(); }
    std::size_t front() const noexcept { return v[head]; }
    void pop() noexcept { ++head; }
    void push(std::size_t i) noexcept { v.push_back(i); }  // within the reserve
  };

  // Results (task indices) wait in `results` for claims; claims (item
  // indices, in await order) wait in `claims` for results; results handed to
  // an item whose awaiter was cancelled before it ran (item indices) wait in
  // `returned`, ahead of `results`, since they came first.
  struct Shared {
    std::vector<Task<T>> tasks;
    std::vector<Future<T>> slots;  // item i's result
    std::vector<Item> items;
    std::unique_ptr<Node[]> nodes;
    std::vector<bool> claimed;
    Line results, claims, returned;
    bool timed_out = false;
    TimerHandle timer;

    // Item i takes its turn: the earliest result waiting, else a place in line.
    Future<T>& claim(std::size_t i) {
      if (!claimed[i]) {
        claimed[i] = true;
        if (!returned.empty()) {
          pass(slots[returned.front()], slots[i]);
          returned.pop();
        } else if (!results.empty()) {
          fill(slots[i], results.front());
          results.pop();
        } else if (timed_out) {
          slots[i].set_exception(std::make_exception_ptr(TimeoutError()));
        } else {
          claims.push(i);
        }
      }
      return slots[i];
    }
    void arrived(std::size_t task) noexcept {
      if (timed_out) return;  // as asyncio: what finishes after the timeout is not handed out
      while (!claims.empty() && slots[claims.front()].done()) claims.pop();  // gave up
      if (claims.empty()) {
        results.push(task);
        return;
      }
      fill(slots[claims.front()], task);
      claims.pop();
    }
    // Item i's awaiter was cancelled: if its result had come (the cancel
    // landed before its task ran), the result goes to the next claim. Not
    // so for a task's own CancelledError, handed to a task not cancelled.
    void abandon(std::size_t i) {
      Future<T>& slot = slots[i];
      if (!slot.done() || slot.cancelled()) return;  // it gave up before a result came
      const std::optional<TaskRef> me = current_task();
      if (!me || me->cancelling() == 0) return;
      while (!claims.empty() && slots[claims.front()].done()) claims.pop();
      if (claims.empty()) {
        returned.push(i);
        return;
      }
      pass(slot, slots[claims.front()]);
      claims.pop();
    }
    // Moves a result from one item's slot to another's.
    static void pass(Future<T>& from, Future<T>& to) noexcept {
      try {
        if constexpr (std::is_void_v<T>) {
          from.state()->rethrow_if_failed();
          to.set_result();
        } else {
          to.set_result(detail::take_result<T>(from.state(), true));
        }
      } catch (...) {
        to.set_exception(std::current_exception());
      }
    }
    void fill(Future<T>& slot, std::size_t task) noexcept {
      detail::FutureStateBase& st = *tasks[task].state();
      try {
        if (st.cancelled() || st.peek_exception()) {
          st.mark_retrieved();
          slot.set_exception(st.peek_exception());
        } else if constexpr (std::is_void_v<T>) {
          slot.set_result();
        } else {
          slot.set_result(detail::take_result<T>(&st, false));
        }
      } catch (...) {
        slot.set_exception(std::current_exception());
      }
    }
    void expire() {
      timed_out = true;
      for (; !claims.empty(); claims.pop()) {
        Future<T>& slot = slots[claims.front()];
        if (!slot.done()) slot.set_exception(std::make_exception_ptr(TimeoutError()));
      }
    }
  };
  std::unique_ptr<Shared> s_;
};

/// The tasks' results in completion order (details at the top of as_completed.hpp).
template <class T>
AsCompleted<T> as_completed(std::vector<Task<T>> tasks,
                            std::optional<std::chrono::duration<double>> timeout = {}) {
  return AsCompleted<T>(std::move(tasks), timeout);
}

}  // namespace corio
