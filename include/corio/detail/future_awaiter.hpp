// Awaiting a Future or Task from a task: link a Callback into the state's list
// and suspend; completion wakes the task. Nothing is allocated: the callback
// node and the await point live in this awaiter, in the coroutine frame.
#pragma once

#include <type_traits>
#include <utility>

#include <corio/detail/task_state.hpp>

namespace corio::detail {

// The result of a done state: copied, or moved when `may_move` (the awaited
// handle was an rvalue) and no other handle shares the state, so no one else
// can read the value. Move-only values are always moved: they can be taken once.
template <class T>
T take_result(FutureStateBase* s, bool may_move) {
  s->rethrow_if_failed();
  if constexpr (!std::is_void_v<T>) {
    auto& box = value_of<T>(s);
    if constexpr (std::is_copy_constructible_v<T>) {
      if (!(may_move && s->ref_count() == 1)) return *box.v;
    }
    return std::move(*box.v);
  }
}

enum class OnCancel : bool {
  propagate,  // asyncio's `await fut`: cancelling the waiter cancels the awaited
  detach,     // shield(): the waiter stops waiting, the awaited runs on
};

// MayMove: the awaited handle was an rvalue, so if no other handle shares
// the state, the value is moved out instead of copied. A template parameter,
// not a member: this awaiter sits in every suspended frame (DESIGN.md's
// 256-bytes-per-task budget).
template <class T, OnCancel Policy = OnCancel::propagate, bool MayMove = false>
class FutureAwaiter : private Callback, private AwaitPoint {
 public:
  explicit FutureAwaiter(FutureStateBase* s) noexcept : s_(s) {}
  FutureAwaiter(const FutureAwaiter&) = delete;

  bool await_ready() const noexcept { return s_->done(); }
  void await_suspend(std::coroutine_handle<> h) {
    task_ = &current_task_for("awaiting a Future");
    if (static_cast<FutureStateBase*>(task_) == s_) {
      throw RuntimeError("a task cannot await itself");
    }
    fire = &on_done;
    ops = s_->is_task() ? &kTaskOps : &kFutureOps;
    s_->add_callback(this);
    task_->suspend_at(h, this);
  }
  T await_resume() {
    if (task_ && task_->interrupt_pending()) [[unlikely]]
      interrupted();
    return take_result<T>(s_, MayMove);
  }

 private:
  // Cancelled while waiting: CancelledError, unless the awaited work ended
  // in an exception of its own while it was being cancelled; that one
  // propagates (and counts as retrieved), as asyncio's `await task` does.
  void interrupted() {
    if constexpr (Policy == OnCancel::propagate) {
      if (s_->done() && !s_->cancelled() && s_->peek_exception()) {
        task_->clear_interrupt();
        return;
      }
    }
    task_->check_interrupt();
  }
  static void on_done(Callback* cb, FutureStateBase&) noexcept {
    static_cast<FutureAwaiter*>(cb)->task_->wake();
  }
  // The waiting task always throws its own CancelledError (the step
  // interrupts this point), even if an awaited task swallows the request:
  // a cancelled task learns it was cancelled.
  static bool on_cancel(AwaitPoint* p, const std::string& msg) noexcept {
    auto* self = static_cast<FutureAwaiter*>(p);
    if constexpr (Policy == OnCancel::propagate) {
      try {
        // Fires our callback, which wakes the task; an already done state
        // has woken it already.
        self->s_->cancel(msg);
      } catch (...) {
        self->task_->wake();  // copying the message failed: still deliver
      }
    } else {
      self->unlink();
      self->task_->wake();
    }
    return false;
  }
  static void describe(const AwaitPoint* p, AwaitInfo& info) noexcept {
    auto* self = static_cast<const FutureAwaiter*>(p);
    info.object = self->s_;
    info.awaited = {&self->s_, 1};
  }
  static constexpr Ops kFutureOps{&on_cancel, "future", &describe};
  static constexpr Ops kTaskOps{&on_cancel, "task", &describe};

  FutureStateBase* s_;
  TaskBase* task_ = nullptr;
};

}  // namespace corio::detail
