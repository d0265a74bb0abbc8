// The debug layer's observer of a loop (detail/loop_observer.hpp): it holds
// the loop's inspection server and stall detector, and reports a caught
// stall on the loop thread once the step is over, when the task's await
// chain can be read again. Linking the layer registers it (corio_debug_layer
// below is the symbol the link pulls it in by).
#include <fmt/format.h>

#include "inspect_server.hpp"
#include "stall_detector.hpp"
#include <corio/call_graph.hpp>
#include <corio/event_loop.hpp>

namespace corio::detail {
namespace {

class LoopWatch final : public LoopObserver {
 public:
  LoopWatch(EventLoop& loop, const RunOptions& opts)
      : loop_(loop),
        inspect_(start_inspect_server(loop, opts.inspect)),
        stall_(StallDetector::create(opts.stall, loop.io().core().running_task, true)) {}

  bool watching() const noexcept override { return stall_ != nullptr; }
  void running(bool on) noexcept override {
    if (stall_) stall_->running(on);
  }
  void step_begin() noexcept override {
    if (stall_) stall_->mark_progress();
  }
  void step_end(TaskBase* task) noexcept override {
    if (stall_ && stall_->caught()) [[unlikely]]
      report_stall(task);
  }
  void blocking(bool on) noexcept override {
    if (stall_) stall_->idle(on);
  }
  void closing() noexcept override { inspect_.reset(); }

  void set_stall_detector(StallOptions opts) override {
    stall_.reset();  // the old watchdog stops before the new one starts
    stall_ = StallDetector::create(opts, loop_.io().core().running_task, false);
    if (stall_ && loop_.is_running()) stall_->running(true);
  }
  StallOptions stall_detector() const override {
    if (stall_) return stall_->options();
    StallOptions off;
    off.enabled = false;
    return off;
  }
  std::uint64_t stalls() const noexcept override { return stall_ ? stall_->stalls() : 0; }

 private:
  TaskBase* pending_task(const TaskBase* t, std::uint32_t id) noexcept;
  void report_stall(TaskBase* task) noexcept;

  EventLoop& loop_;
  std::unique_ptr<InspectServer> inspect_;
  std::unique_ptr<StallDetector> stall_;  // none while off
};

// The caught task, if it is still pending: the handler's pointer is compared
// with the registry's before anything is read through it (a task that ended
// in the step may be freed, its address reused).
TaskBase* LoopWatch::pending_task(const TaskBase* t, std::uint32_t id) noexcept {
  if (!t) return nullptr;
  TaskBase* found = loop_.io().core().tasks.find(t);
  return found && found->id() == id ? found : nullptr;
}

// task: the step's task when the loop knows it (debug mode holds it), else
// null and the handler's note says.
void LoopWatch::report_stall(TaskBase* task) noexcept {
  std::optional<StallDetector::Caught> caught = stall_->finish_caught_step();
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
                              task ? format_await_chain(*task) : "", caught->native_stack);
    if (task) ctx.task = TaskRef(task);
    loop_.call_exception_handler(ctx);
  } catch (...) {  // out of memory while formatting: the report is lost, not the loop
  }
}

std::unique_ptr<LoopObserver> watch_loop(EventLoop& loop, const RunOptions& opts) {
  return std::make_unique<LoopWatch>(loop, opts);
}

}  // namespace
}  // namespace corio::detail

// The anchor: its initializer registers the factory; the link asks for it.
extern "C" {
extern const char corio_debug_layer;
const char corio_debug_layer = (corio::detail::set_loop_observer_factory(&corio::detail::watch_loop), 1);
}
