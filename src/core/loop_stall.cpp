// The loop's side of the stall detector (corio/stall_detector.hpp): turning
// it on and off, and the report of a caught step, made on the loop thread
// once the step is over, when the task's await chain can be read again.
#include <fmt/format.h>

#include "stall_detector.hpp"
#include <corio/call_graph.hpp>
#include <corio/event_loop.hpp>

namespace corio {

void EventLoop::set_stall_detector(StallOptions opts) {
  check_open();
  stall_.reset();  // the old watchdog stops before the new one starts
  stall_ = detail::StallDetector::create(opts, running_task, false);
  if (stall_ && running_) stall_->running(true);
}

StallOptions EventLoop::stall_detector() const {
  if (stall_) return stall_->options();
  StallOptions off;
  off.enabled = false;
  return off;
}

// A loop blocked in the poller is idle, not stalled: the watchdog sleeps.
int EventLoop::wait_for_io_watched(double timeout) {
  stall_->idle(true);
  struct Busy {
    detail::StallDetector* stall;
    ~Busy() { stall->idle(false); }
  } busy{stall_.get()};
  return wait_for_io(timeout);
}

// The caught task, if it is still pending: the handler's pointer is compared
// with the registry's before anything is read through it (a task that ended
// in the step may be freed, its address reused).
detail::TaskBase* EventLoop::pending_task(const detail::TaskBase* t, std::uint32_t id) const noexcept {
  if (!t) return nullptr;
  detail::TaskBase* found = tasks.find(t);
  return found && found->id() == id ? found : nullptr;
}

// task: the step's task when the loop knows it (debug mode holds it), else
// null and the handler's note says.
void EventLoop::report_stall(detail::TaskBase* task) noexcept {
  std::optional<detail::StallDetector::Caught> caught = stall_->finish_caught_step();
  if (!caught) return;
  try {
    ExceptionContext ctx;
    const double threshold = std::chrono::duration<double>(stall_->options().threshold).count();
    if (!task) task = pending_task(caught->task, caught->task_id);
    std::string what = task              ? fmt::format("{} (id {})", task->repr(), task->id())
                       : caught->task_id ? fmt::format("Task id={} (done by the end of the step)",
                                                       caught->task_id)
                                         : std::string("<Handle> (one callback or several in a row)");
    std::string suppressed =
        caught->suppressed ? fmt::format("; {} more stalls not reported", caught->suppressed) : "";
    // Where the step ended: the co_await it stopped at (nothing if it finished).
    ctx.message = fmt::format("Stall: executing {} took at least {:.3f} seconds (threshold {:.3f}{}){}{}",
                              what, caught->seconds, threshold, suppressed,
                              task ? detail::format_await_chain(*task) : "", caught->native_stack);
    if (task) ctx.task = TaskRef(task);
    call_exception_handler(ctx);
  } catch (...) {  // out of memory while formatting: the report is lost, not the loop
  }
}

}  // namespace corio
