// Debug mode (asyncio's PYTHONASYNCIODEBUG): the slow-callback report and the
// thread check, and the run phase that times steps. Kept out of event_loop.cpp so that the plain run phase stays a
// loop of a few lines.
#include <fmt/format.h>

#include <corio/call_graph.hpp>
#include <corio/event_loop.hpp>

namespace corio {

// The run phase of debug mode: a stopwatch around each node, and the
// observer's step hooks when it watches (the stall detector). A task step
// leaves its task (with a reference) in stepped_task, so a slow step is
// reported by name even when the step was the task's last. observed_ is read
// again after each step: the step may have turned the detector on or off.
void EventLoop::run_ready_batch_debug() noexcept {
  detail::ReadyNode* n = ready.take_all();
  while (n) {
    detail::ReadyNode* next = n->next;
    const double start = debug_ ? time() : 0;
    if (observed_) observer_->step_begin();
    n->fn(n, detail::ReadyOp::run);
    ++steps_;
    detail::TaskBase* task = std::exchange(stepped_task, nullptr);
    if (observed_) observer_->step_end(task);
    if (debug_) {
      const double took = time() - start;
      if (took >= slow_callback_duration) {
        ++slow_steps_;
        report_slow(task, took);
      }
    }
    if (task) release(task);
    n = next;
  }
}

void EventLoop::report_slow(detail::TaskBase* task, double seconds) noexcept {
  try {
    ExceptionContext ctx;
    if (task) {
      // Where the step ended: the co_await it stopped at (nothing if it finished).
      ctx.message = fmt::format("Executing {} took {:.3f} seconds{}", task->repr(), seconds,
                                detail::format_await_chain(*task));
      ctx.task = TaskRef(task);
    } else {
      ctx.message = fmt::format("Executing <Handle> took {:.3f} seconds", seconds);
    }
    call_exception_handler(ctx);
  } catch (...) {  // out of memory while formatting: the report is lost, not the loop
  }
}

// A loop is not thread-safe; debug mode catches the mistake where it is made.
void EventLoop::check_thread() const {
  const std::thread::id owner = owner_thread_.load(std::memory_order_relaxed);
  if (owner != std::thread::id{} && owner != std::this_thread::get_id()) {
    throw RuntimeError(
        "Non-thread-safe operation invoked on an event loop other than the current one "
        "(use call_soon_threadsafe)");
  }
}

}  // namespace corio
