/// \file
/// corio::Task<T>: a Future that drives one coroutine on the loop (asyncio.Task).
///
/// create_task() schedules the first step; from then on the task runs whether
/// or not anyone awaits it (the loop owns a pending task; dropping every Task
/// handle does not stop it). Each step resumes the coroutine until it suspends
/// at an await point; whoever completes that await point wakes the task, which
/// steps again on the next loop iteration.
///
/// cancel() makes the task's current (or next) co_await throw CancelledError;
/// destructors run as the exception unwinds, like `finally` blocks. A task that
/// catches CancelledError and carries on has "swallowed" the cancellation, as
/// in asyncio; cancelling() counts the requests and uncancel() withdraws one.
///
/// Suspends: `co_await task` suspends until the task is done.
/// Cancelling the awaiting task cancels the awaited task (asyncio semantics;
/// see shield() to prevent it).
#pragma once

#include <optional>
#include <corio/source_location.hpp>
#include <string>
#include <vector>

#include <corio/detail/loop_core.hpp>
#include <corio/future.hpp>

namespace corio {

/// asyncio.Task: a Future driving one coroutine on the loop (details at the top of task.hpp).
template <class T = void>
class Task : public Future<T> {
 public:
  Task() noexcept = default;
  /// A handle to an existing task (create_task makes them).
  explicit Task(detail::Ref<detail::FutureStateBase> s) noexcept : Future<T>(std::move(s)) {}

  /// Asks the task to stop: its current (or next) co_await throws CancelledError(msg). False if it
  /// is done.
  bool cancel(std::string msg = {}) { return task()->request_cancel(std::move(msg)); }
  /// How many cancellation requests are pending (asyncio's Task.cancelling()).
  int cancelling() const noexcept { return task()->cancelling(); }
  /// Withdraws one cancellation request; returns how many are left.
  int uncancel() noexcept { return task()->uncancel(); }
  /// The task's name ("Task-N" unless given).
  std::string get_name() const { return task()->name(); }
  /// Renames the task.
  void set_name(std::string name) { task()->set_name(std::move(name)); }

 private:
  detail::TaskBase* task() const noexcept { return static_cast<detail::TaskBase*>(this->s_.get()); }
};

/// A type-erased handle to a task of any result type (all_tasks, reports).
class TaskRef {
 public:
  TaskRef() noexcept = default;
  /// A handle to the task t (for the library's reports).
  explicit TaskRef(detail::TaskBase* t) noexcept
      : s_(detail::Ref<detail::FutureStateBase>::share(t)) {}
  /// A handle to the task t.
  template <class T>
  TaskRef(const Task<T>& t) noexcept  // NOLINT: implicit, as a base-class reference would be
      : s_(detail::Ref<detail::FutureStateBase>::share(t.state())) {}

  /// Whether the task has finished.
  bool done() const noexcept { return s_->done(); }
  /// Whether it finished cancelled.
  bool cancelled() const noexcept { return s_->cancelled(); }
  /// As Task::cancel().
  bool cancel(std::string msg = {}) { return task()->request_cancel(std::move(msg)); }
  /// As Task::cancelling().
  int cancelling() const noexcept { return task()->cancelling(); }
  /// Withdraws one cancellation request; returns the count left (asyncio's Task.uncancel).
  int uncancel() noexcept { return task()->uncancel(); }
  /// The task's name.
  std::string get_name() const { return task()->name(); }
  /// Renames the task (`asyncio.current_task().set_name(...)`).
  void set_name(std::string name) { task()->set_name(std::move(name)); }
  /// The task's number on its loop (the N of its default name, Task-N).
  std::uint64_t id() const noexcept { return task()->id(); }
  /// What the task is suspended on ("sleep", "future", "task", ...), or "".
  const char* waiting_on() const noexcept {
    auto* p = task()->waiting_on();
    return p ? p->ops->what : "";
  }
  /// As Future::exception().
  std::exception_ptr exception() const { return s_->exception(); }
  /// Whether both refer to one task.
  friend bool operator==(const TaskRef& a, const TaskRef& b) noexcept { return a.s_ == b.s_; }

  /// The task's state, for the library's own use.
  detail::TaskBase* task() const noexcept { return static_cast<detail::TaskBase*>(s_.get()); }

 private:
  detail::Ref<detail::FutureStateBase> s_;
};

/// create_task on the running loop (throws RuntimeError outside one).
template <class T>
Task<T> create_task(Coro<T> coro, std::string name = {},
                    SourceLocation where = SourceLocation::current());
/// create_task(fn, args...): the task calls fn(args...) and owns fn and the
/// args for its whole life, so a lambda's captures stay valid:
///   create_task([name]() -> Coro<> { co_await greet(name); });
template <class F, class... Args>
requires detail::CoroCallable<F, Args...>
Task<detail::callable_result_t<F, Args...>> create_task(F&& fn, Args&&... args);

/// The task running now, if any.
std::optional<TaskRef> current_task();
/// Every pending task of the running loop.
std::vector<TaskRef> all_tasks();

}  // namespace corio
