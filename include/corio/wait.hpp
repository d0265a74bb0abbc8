/// \file
/// co_await wait(tasks, return_when, timeout): asyncio.wait.
///
/// Waits until all tasks are done (ReturnWhen::all_completed), the first one is
/// (first_completed), or one fails with an exception (first_exception; a
/// cancelled task does not count), or until the optional timeout. Never
/// throws for the tasks' failures and never cancels them; returns the tasks
/// split into done and pending, each in the order given. As asyncio, the
/// split is made when the waiter runs again, a loop iteration after the
/// condition held: tasks that finished in between are in `done` too.
#pragma once

#include <chrono>
#include <optional>
#include <vector>

#include <corio/detail/multi_wait.hpp>

namespace corio {

/// When wait() returns: all done, the first done, or the first failed.
enum class ReturnWhen { all_completed, first_completed, first_exception };

/// What wait() returns: the tasks, split.
template <class T>
struct WaitResult {
  /// The tasks that are done, in the order given.
  std::vector<Task<T>> done;
  /// The others, in the order given.
  std::vector<Task<T>> pending;
};

/// Waits for tasks (details at the top of wait.hpp); never cancels them, never throws their errors.
template <class T>
Coro<WaitResult<T>> wait(std::vector<Task<T>> tasks,
                         ReturnWhen return_when = ReturnWhen::all_completed,
                         std::optional<std::chrono::duration<double>> timeout = {}) {
  if (tasks.empty()) throw ValueError("wait() needs at least one task");
  std::vector<detail::FutureStateBase*> states;
  states.reserve(tasks.size());
  for (const Task<T>& t : tasks) states.push_back(t.state());
  detail::MultiWaitOptions opts;
  opts.resume_via_loop = true;
  opts.until = return_when == ReturnWhen::all_completed     ? detail::Until::all
               : return_when == ReturnWhen::first_completed ? detail::Until::first_completed
                                                            : detail::Until::first_failure;
  if (timeout) opts.deadline = get_running_loop().time() + std::max(0.0, timeout->count());
  {
    detail::MultiWait waiter(states, opts);
    co_await waiter;
  }
  WaitResult<T> result;
  for (Task<T>& t : tasks) (t.done() ? result.done : result.pending).push_back(std::move(t));
  co_return result;
}

}  // namespace corio
