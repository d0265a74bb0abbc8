// for (auto next : as_completed(tasks)) { T v = co_await next; }
// asyncio.as_completed: the results in completion order.
//
// Item i is a Future<T> that completes with the i-th result to arrive (value,
// exception or cancellation, copied from the task; move-only results are
// moved). With a timeout, the items not filled in time fail with
// TimeoutError. Must be created inside a running loop; the object must
// outlive the iteration (a range-for over the temporary does that).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include <corio/detail/awaitable.hpp>

namespace corio {

template <class T>
class AsCompleted {
 public:
  explicit AsCompleted(std::vector<Task<T>> tasks,
                       std::optional<std::chrono::duration<double>> timeout = {})
      : s_(std::make_unique<Shared>()) {
    EventLoop& loop = get_running_loop();
    Shared& s = *s_;
    s.tasks = std::move(tasks);
    s.nodes = std::make_unique<Node[]>(s.tasks.size());
    for (std::size_t i = 0; i < s.tasks.size(); ++i) s.slots.push_back(loop.create_future<T>());
    for (std::size_t i = 0; i < s.tasks.size(); ++i) {
      detail::FutureStateBase* st = s.tasks[i].state();
      if (st->done()) {
        s.fill(*st);
      } else {
        s.nodes[i].shared = &s;
        s.nodes[i].fire = &Node::on_done;
        st->add_callback(&s.nodes[i]);
      }
    }
    if (timeout && s.filled < s.slots.size()) {
      Shared* raw = &s;
      s.timer = loop.call_later(*timeout, [raw] { raw->expire(); });
    }
  }
  AsCompleted(AsCompleted&&) noexcept = default;
  ~AsCompleted() {
    if (s_) s_->timer.cancel();
  }

  using iterator = typename std::vector<Future<T>>::const_iterator;
  iterator begin() const noexcept { return s_->slots.begin(); }
  iterator end() const noexcept { return s_->slots.end(); }
  std::size_t size() const noexcept { return s_->slots.size(); }

 private:
  struct Shared;
  struct Node : detail::Callback {
    Shared* shared = nullptr;
    static void on_done(detail::Callback* cb, detail::FutureStateBase& st) noexcept {
      static_cast<Node*>(cb)->shared->fill(st);
    }
  };
  struct Shared {
    std::vector<Task<T>> tasks;
    std::vector<Future<T>> slots;
    std::unique_ptr<Node[]> nodes;
    std::size_t filled = 0;
    TimerHandle timer;

    void fill(detail::FutureStateBase& st) noexcept {
      while (filled < slots.size() && slots[filled].done()) ++filled;  // its awaiter gave up
      if (filled == slots.size()) return;                              // timed out already
      Future<T>& slot = slots[filled++];
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
      for (; filled < slots.size(); ++filled) {
        if (!slots[filled].done())
          slots[filled].set_exception(std::make_exception_ptr(TimeoutError()));
      }
    }
  };
  std::unique_ptr<Shared> s_;
};

template <class T>
AsCompleted<T> as_completed(std::vector<Task<T>> tasks,
                            std::optional<std::chrono::duration<double>> timeout = {}) {
  return AsCompleted<T>(std::move(tasks), timeout);
}

}  // namespace corio
