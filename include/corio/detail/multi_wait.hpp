// One await point over many futures: the engine of gather(), wait() and
// TaskGroup. A Callback node per pending future counts completions; the
// waiting task is woken once the condition holds (all done, the first done,
// the first failure) or an optional deadline passes. Nodes unlink themselves
// when the awaiter is destroyed, so an abandoned wait leaves nothing behind.
#pragma once

#include <memory>
#include <span>

#include <corio/event_loop.hpp>

namespace corio::detail {

enum class Until : std::uint8_t { all, first_completed, first_failure };

struct MultiWaitOptions {
  Until until = Until::all;
  bool cancelled_is_failure = false;  // gather: yes; wait(FIRST_EXCEPTION): no
  bool cancel_children = false;       // on cancellation of the waiter (gather)
  // wait(): once satisfied, resume one loop iteration later, through a timer
  // due now, as asyncio's _wait does (the child's done callback, then the
  // waiter future's wake-up: two hops), so `done` holds every child done by
  // then. Also when a child is done already: the waiter always suspends.
  bool resume_via_loop = false;
  double deadline = -1;  // loop time; negative: none
};

class MultiWait : private AwaitPoint, private TimerNode {
 public:
  MultiWait(std::span<FutureStateBase* const> states, MultiWaitOptions opts);
  MultiWait(const MultiWait&) = delete;
  ~MultiWait();

  bool await_ready() const noexcept { return !opts_.resume_via_loop && satisfied(); }
  void await_suspend(std::coroutine_handle<> h);
  void await_resume();

  // The first child that failed (completion order), or nullptr.
  FutureStateBase* first_failure() const noexcept { return first_failure_; }

 private:
  struct Node : Callback {
    MultiWait* owner = nullptr;
  };
  bool satisfied() const noexcept;
  bool failed(const FutureStateBase& s) const noexcept;
  void on_child_done(FutureStateBase& s) noexcept;
  void wake() noexcept;
  static void fire_node(Callback* cb, FutureStateBase& s) noexcept;
  static bool on_cancel(AwaitPoint* p, const std::string& msg) noexcept;
  static void describe(const AwaitPoint* p, AwaitInfo& info) noexcept;
  static void on_deadline(TimerNode* n) noexcept;
  static void on_settled(TimerNode* n) noexcept;

  std::span<FutureStateBase* const> states_;
  MultiWaitOptions opts_;
  std::unique_ptr<Node[]> nodes_;
  std::size_t pending_ = 0;
  FutureStateBase* first_failure_ = nullptr;
  bool any_done_ = false;
  bool timed_out_ = false;
  bool cancelled_ = false;  // accepted a cancellation: await_resume throws
  TaskBase* task_ = nullptr;
  EventLoop* loop_ = nullptr;
};

}  // namespace corio::detail
