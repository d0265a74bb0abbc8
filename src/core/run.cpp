// corio::run() support and the running-loop / current-task queries.
#include <corio/run.hpp>

namespace corio {

EventLoop& get_running_loop() {
  if (EventLoop* loop = detail::tls_running_loop) return *loop;
  throw RuntimeError("no running event loop");
}

std::optional<TaskRef> current_task() {
  if (detail::TaskBase* t = detail::tls_current_task) return TaskRef(t);
  return std::nullopt;
}

std::vector<TaskRef> all_tasks() {
  EventLoop& loop = get_running_loop();
  std::vector<TaskRef> out;
  for (detail::TaskBase* t : loop.tasks.snapshot()) out.emplace_back(t);
  return out;
}

namespace detail {

void check_no_running_loop() {
  if (tls_running_loop)
    throw RuntimeError("corio::run() cannot be called from a running event loop");
}

namespace {
std::vector<TaskRef> pending_tasks(EventLoop& loop) {
  std::vector<TaskRef> out;
  for (TaskBase* t : loop.tasks.snapshot()) out.emplace_back(t);
  return out;
}

// Waits for each task to be done, whatever its outcome.
Coro<void> wait_done(std::vector<TaskRef> tasks) {
  for (TaskRef& t : tasks) {
    try {
      co_await Future<void>(Ref<FutureStateBase>::share(t.task()));
    } catch (...) {
    }
  }
}
}  // namespace

void finish_run(EventLoop& loop) noexcept {
  try {
    // Cancel what main left running and let it unwind (destructors are the
    // `finally` blocks), as asyncio.run gathers the cancelled tasks before
    // closing. Unwinding may start new tasks: a few rounds.
    for (int round = 0; round < 8 && !loop.tasks.empty(); ++round) {
      std::vector<TaskRef> leftovers = pending_tasks(loop);
      for (TaskRef& t : leftovers) t.cancel();
      loop.run_until_complete(wait_done(leftovers));
      for (TaskRef& t : leftovers) {
        if (!t.cancelled() && t.task()->peek_exception()) {
          loop.call_exception_handler(
              {"unhandled exception during corio::run() shutdown", t.task()->peek_exception(), t});
          t.task()->mark_retrieved();
        }
      }
    }
    loop.close();
  } catch (...) {
    EventLoop::report_to_stderr(
        {"error while closing the event loop", std::current_exception(), std::nullopt});
  }
}

}  // namespace detail
}  // namespace corio
