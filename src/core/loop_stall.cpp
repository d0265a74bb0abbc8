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

// The run phase while the stall detector is on (and debug mode off): the
// plain one plus the step counter, and each task step leaves its task (with
// a reference) in stepped_task so that a caught step is reported by name
// even when it was the task's last. stall_ is checked after each step: the
// step may have turned the detector off.
void EventLoop::run_ready_batch_watched() noexcept {
  std::uint64_t steps = 0;
  std::uint64_t seq = stall_->steps();
  for (detail::ReadyNode* n = ready.take_all(); n; ++steps) {
    detail::ReadyNode* next = n->next;
    if (stall_) stall_->step_begins(++seq);
    n->fn(n, detail::ReadyOp::run);
    detail::TaskBase* task = std::exchange(stepped_task, nullptr);
    if (stall_ && stall_->caught()) [[unlikely]]
      report_stall(task);
    if (task) release(task);
    n = next;
  }
  steps_ += steps;
}

void EventLoop::report_stall(detail::TaskBase* task) noexcept {
  std::optional<detail::StallDetector::Caught> caught = stall_->finish_caught_step();
  if (!caught) return;
  try {
    ExceptionContext ctx;
    const double threshold = std::chrono::duration<double>(stall_->options().threshold).count();
    std::string what = task ? fmt::format("{} (id {})", task->repr(), task->id()) : "<Handle>";
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
