/// \file
/// corio::TaskGroup: asyncio.TaskGroup. Two shapes, because C++ has no
/// `async with`:
///
/// <!-- doc: body (std::function<corio::Coro<>(int)> fetch) -->
///     co_await corio::task_group([&](corio::TaskGroup& tg) -> corio::Coro<> {
///       tg.create_task(fetch(1));
///       tg.create_task(fetch(2));
///       co_await corio::sleep(10s);   // cancelled as soon as a child fails
///     });
///
/// task_group() runs the body inside the group, so it has asyncio's whole
/// semantics: the first child to fail with an exception cancels the other
/// children and the body's task; the group then waits for every child and
/// throws. An exception from the body cancels the children, waits for them,
/// and is thrown together with theirs. One error is thrown as itself, several
/// as one ExceptionGroup (body's last); nothing is lost or reported as never
/// retrieved. The group withdraws the cancellations it made (uncancel), so the
/// owner's cancelling() count is what it was, and a cancellation from outside
/// still arrives as CancelledError with its message.
///
/// <!-- doc: body (std::function<corio::Coro<>(int)> fetch) -->
///     corio::TaskGroup tg;         // the classic shape, without a body
///     tg.create_task(fetch(1));
///     co_await tg.wait();          // the end of the `async with` block
///
/// Here nothing can catch an exception that skips wait(), so a child failure
/// does not cancel the owner: it cancels the siblings and surfaces in wait().
/// A TaskGroup destroyed with children still running cancels them (they
/// unwind on the loop; a destructor cannot wait). Prefer task_group().
///
/// Suspends: in wait() (or at the end of task_group()) until every child is
/// done. Resumed by: the last child's completion.
#pragma once

#include <list>
#include <optional>
#include <vector>

#include <corio/detail/awaitable.hpp>

namespace corio {

class TaskGroup;
namespace detail {
template <class T, class Body>
Coro<T> run_task_group(Body body);
}  // namespace detail

/// asyncio.TaskGroup: children that end together (details at the top of task_group.hpp).
class TaskGroup {
 public:
  TaskGroup();  ///< in a running loop
  TaskGroup(const TaskGroup&) = delete;
  TaskGroup& operator=(const TaskGroup&) = delete;
  ~TaskGroup();

  /// Starts coro as a child of the group.
  template <class T>
  Task<T> create_task(Coro<T> coro, std::string name = {},
                      SourceLocation where = SourceLocation::current()) {
    check_accepting();
    Task<T> task = loop_.create_task(std::move(coro), std::move(name), where);
    adopt(task.state());
    return task;
  }
  /// The task owns fn and args for its whole life (see corio::create_task).
  template <class F, class... Args>
  requires detail::CoroCallable<F, Args...>
  Task<detail::callable_result_t<F, Args...>> create_task(F&& fn, Args&&... args) {
    return create_task(detail::invoke_owned<detail::callable_result_t<F, Args...>>(
        std::forward<F>(fn), std::forward<Args>(args)...));
  }

  /// Waits for every child; rethrows as described above.
  Coro<void> wait();

  /// How many children have not finished.
  std::size_t running() const noexcept { return children_.size(); }

 private:
  template <class T, class Body>
  friend Coro<T> detail::run_task_group(Body body);

  struct Child : detail::Callback {
    TaskGroup* group = nullptr;
    detail::Ref<detail::FutureStateBase> task;
    std::list<Child>::iterator self;
  };
  struct OwnsBody {};
  explicit TaskGroup(OwnsBody);
  void check_accepting() const;
  void adopt(detail::FutureStateBase* task);
  void on_child_done(Child& child, detail::FutureStateBase& task) noexcept;
  void on_child_failed() noexcept;
  void abort() noexcept;
  // The end of the block (asyncio's __aexit__), with the body's exception.
  Coro<void> exit(std::exception_ptr body_error);
  [[noreturn]] void throw_errors();

  EventLoop& loop_;
  // The owner, whose body a child failure cancels: only with a body.
  detail::TaskBase* parent_ = nullptr;
  std::list<Child> children_;
  std::vector<std::exception_ptr> errors_;
  Handle abort_soon_;
  bool aborting_ = false;
  bool exiting_ = false;
  bool parent_cancel_requested_ = false;
};

template <class T, class Body>
Coro<T> detail::run_task_group(Body body) {
  TaskGroup tg{TaskGroup::OwnsBody{}};
  std::exception_ptr body_error;
  std::optional<detail::value_or_monostate<T>> result;
  try {
    if constexpr (std::is_void_v<T>) {
      co_await body(tg);
      result.emplace();
    } else {
      result.emplace(co_await body(tg));
    }
  } catch (...) {
    body_error = std::current_exception();
  }
  co_await tg.exit(body_error);
  // exit() throws whatever must propagate; what is left was a cancellation
  // the group itself caused and withdrew.
  if (!result) std::rethrow_exception(body_error);
  if constexpr (!std::is_void_v<T>) co_return std::move(*result);
}

namespace detail {
template <class Body>
using task_group_result_t = typename std::invoke_result_t<Body&, TaskGroup&>::value_type;
}  // namespace detail

/// asyncio.TaskGroup with the body inside: body is a callable taking
/// TaskGroup& and returning Coro<T>; the result is the body's. Must be
/// awaited from a task (the group cancels that task's body on a failure).
template <class Body>
requires requires(Body& b, TaskGroup& tg) {
  { b(tg) } -> detail::CoroType;
}
Coro<detail::task_group_result_t<Body>> task_group(Body body) {
  return detail::run_task_group<detail::task_group_result_t<Body>, Body>(std::move(body));
}

}  // namespace corio
