// Task stepping and cancellation (see detail/task_state.hpp and task.hpp).
//
// Cancellation protocol, as asyncio's Task.__step:
//  - suspended at an await point: the point's ops->cancel makes sure the task
//    is woken (cancelling the awaited future, removing the timer, ...) and
//    the must-cancel flag is set;
//  - running, or queued to run: the must-cancel flag is set;
//  - at the next step with the flag set, the await point the task stopped
//    at is marked interrupted and its await_resume throws CancelledError; a
//    task that has not started yet finishes cancelled without running.
#include <algorithm>
#include <typeinfo>
#include <vector>

#include <cxxabi.h>
#include <fmt/format.h>

#include <corio/call_graph.hpp>
#include <corio/event_loop.hpp>

namespace corio::detail {

// The memory budget (DESIGN.md: 256 bytes per suspended task, frame
// included; bench/ measures it) rests on these sizes, on LP64: a task state
// fills one 112-byte malloc chunk, and the awaiters a task is suspended in
// most often stay small in its frame (sleep.hpp checks its own).
static_assert(sizeof(void*) != 8 || sizeof(TaskState<void>) <= 104, "task state past 104 bytes");
static_assert(sizeof(void*) != 8 || sizeof(FutureAwaiter<int>) <= 48, "future awaiter grew");
static_assert(sizeof(void*) != 8 || sizeof(CallbackHandle) <= 104, "handle past its chunk");

struct TaskExtra {
  std::string name;
  std::string cancel_message;
  std::optional<SourceLocation> created_at;
  // The exception leaving the task's coroutines and the co_awaits it left
  // them through, innermost first (the async traceback of its report).
  std::exception_ptr unwinding;
  std::vector<AwaitSite> unwind;
};

// A CancelledError is how most tasks that end early end, and its trace is
// never shown (a cancelled task is no "never retrieved" report): it costs no
// TaskExtra and no vector. Its type is read off the exception in flight,
// without rethrowing it. (An exception derived from CancelledError is traced.)
void CoroPromiseBase::note_unwind(const AwaitSite& site) noexcept {
  const std::type_info* type = abi::__cxa_current_exception_type();
  if (type && *type == typeid(CancelledError)) return;
  if (TaskBase* t = tls_current_task) t->note_unwind(site);
}

// Each Coro the exception leaves adds its site; another exception (a frame
// caught it and threw its own) starts the trace again where it left.
void TaskBase::note_unwind(const AwaitSite& site) noexcept {
  try {
    TaskExtra& x = extra();
    std::exception_ptr e = std::current_exception();
    if (x.unwinding != e) {
      x.unwind.clear();
      x.unwinding = std::move(e);
    }
    x.unwind.push_back(site);
  } catch (...) {  // out of memory: the report goes out without the trace
  }
}

std::span<const AwaitSite> TaskBase::unwind_trace() const noexcept {
  if (!extra_ || extra_->unwinding != exception_) return {};
  return extra_->unwind;
}

TaskBase::TaskBase(LoopCore* loop, std::coroutine_handle<> root,
                   void (*on_ready)(ReadyNode*, ReadyOp))
    : FutureStateBase(loop, true),
      root_(root),
      resume_(root),
      id_(static_cast<std::uint32_t>(loop->next_task_id++)) {
  ReadyNode::fn = on_ready;
  loop->tasks.insert(this);
  add_ref(this);  // the loop owns a pending task
}

void TaskRegistry::insert(TaskBase* t) {
  tasks_.push_back(t);
  t->registry_index_ = static_cast<std::uint32_t>(tasks_.size() - 1);
  t->task_flags_ |= TaskBase::kRegistered;
}

TaskBase* TaskRegistry::find(const TaskBase* t) const noexcept {
  auto it = std::find(tasks_.begin(), tasks_.end(), t);
  return it == tasks_.end() ? nullptr : *it;
}

void TaskRegistry::erase(TaskBase* t) noexcept {
  TaskBase* last = tasks_.back();
  tasks_[t->registry_index_] = last;
  last->registry_index_ = t->registry_index_;
  tasks_.pop_back();
  t->task_flags_ &= ~TaskBase::kRegistered;
}

// A pending task is in loop.tasks, a done one (unretrieved exception) in
// loop.failed_tasks.
void TaskBase::leave_registry() noexcept {
  if (task_flags_ & kRegistered) (done() ? loop_->failed_tasks : loop_->tasks).erase(this);
}

TaskBase::~TaskBase() = default;

void throw_no_current_task(const char* what) {
  throw RuntimeError(std::string(what) + " must happen inside a task running on an event loop");
}

std::string TaskBase::name() const {
  if (extra_ && !extra_->name.empty()) return extra_->name;
  return "Task-" + std::to_string(id_);
}

TaskExtra& TaskBase::extra() {
  if (!extra_) extra_ = std::make_unique<TaskExtra>();
  return *extra_;
}

void TaskBase::set_name(std::string name) { extra().name = std::move(name); }

void TaskBase::set_created_at(SourceLocation where) { extra().created_at = where; }

std::string TaskBase::repr() const {
  if (extra_ && extra_->created_at) {
    const SourceLocation& w = *extra_->created_at;
    return fmt::format("<Task name='{}' created at {}:{}>", name(), w.file_name(), w.line());
  }
  return fmt::format("<Task name='{}'>", name());
}

const std::string& TaskBase::cancel_message() const noexcept {
  static const std::string empty;
  return extra_ ? extra_->cancel_message : empty;
}

void TaskBase::throw_cancelled() const { throw CancelledError(cancel_message()); }

void TaskBase::take_interrupt() const {
  task_flags_ &= ~kInterrupt;
  throw_cancelled();
}

bool TaskBase::request_cancel(std::string msg) {
  if (done()) {
    // asyncio's Future.cancel clears __log_traceback first: whoever cancels a
    // task that already failed has dealt with it, so no "never retrieved".
    retrieved_ = true;
    return false;
  }
  if (task_flags_ & kCancelling) {
    // Tasks awaiting each other (a deadlock) pass the request round the cycle
    // back here. It is the same request: instead of recursing, the task is
    // woken to interrupt its await point, since nothing else in the cycle
    // will ever finish to wake it. (asyncio recurses until RecursionError.)
    wake();
    return true;
  }
  ++cancel_requests_;
  if (!msg.empty() || extra_) extra().cancel_message = std::move(msg);
  task_flags_ |= kMustCancel;
  if (!waiting_on_) return true;
  task_flags_ |= kCancelling;
  const bool delivered = waiting_on_->ops->cancel(waiting_on_, cancel_message());
  task_flags_ &= ~kCancelling;
  if (delivered) task_flags_ &= ~kMustCancel;
  return true;
}

void TaskBase::cancel_at_suspend() noexcept {
  if (waiting_on_->ops->cancel(waiting_on_, cancel_message())) task_flags_ &= ~kMustCancel;
}

int TaskBase::uncancel() noexcept {
  if (cancel_requests_ > 0) {
    --cancel_requests_;
    // Python 3.13: withdrawing the last request also withdraws the pending one.
    if (cancel_requests_ == 0) task_flags_ &= ~kMustCancel;
  }
  return cancel_requests_;
}

bool TaskBase::step() noexcept {
  if (done() || (task_flags_ & kMustCancel)) [[unlikely]] {
    task_flags_ &= ~kQueued;
    if (done()) return false;
    if (!(task_flags_ & kStarted)) {
      destroy_root();
      finish_from_root(std::make_exception_ptr(CancelledError(cancel_message())));
      return false;
    }
    // Delivered by the await point the task resumes at. Suspended at
    // something that is not a corio await point, the request waits for the
    // next one (suspend_at).
    if (waiting_on_) task_flags_ = (task_flags_ & ~kMustCancel) | kInterrupt;
  }
  waiting_on_ = nullptr;
  ++steps_;
  task_flags_ = (task_flags_ & ~kQueued) | kStarted;  // one store on the common path
  if (loop_->timing_steps) [[unlikely]] {  // the loop times the step, then releases this
    add_ref(this);
    loop_->stepped_task = this;
  }
  TaskBase* const outer = tls_current_task;
  tls_current_task = this;
  loop_->running_task.store(this, std::memory_order_relaxed);
  drive(resume_);
  tls_current_task = outer;
  loop_->running_task.store(outer, std::memory_order_relaxed);
  return root_.done();
}

void TaskBase::destroy_root() noexcept {
  if (root_) std::exchange(root_, nullptr).destroy();
  resume_ = nullptr;
}

void TaskBase::finish_from_root(std::exception_ptr e) noexcept {
  destroy_root();
  leave_registry();
  if (!e && (task_flags_ & kMustCancel)) {
    // Cancelled during its last step, with no await left to deliver it: the
    // task ends cancelled (asyncio's Task.__step does the same).
    e = std::make_exception_ptr(CancelledError(cancel_message()));
  }
  if (!e) {
    finish_ok();
  } else {
    bool cancelled = false;
    try {
      std::rethrow_exception(e);
    } catch (const CancelledError&) {
      cancelled = true;
    } catch (...) {
    }
    if (cancelled) {
      finish_cancelled(std::move(e));
    } else {
      if (!retrieved_) {
        try {
          loop_->failed_tasks.insert(this);
        } catch (...) {  // out of memory: the report may then find the loop closed
        }
      }
      finish_exception(std::move(e));
    }
  }
  release(this);  // the loop's ownership ends with the task
}

void TaskBase::before_destroy() noexcept {
  const bool pending = !done();
  const bool unretrieved = status_ == Status::finished && exception_ && !retrieved_;
  leave_registry();
  if (!pending && !unretrieved) return;
  ExceptionContext ctx;
  const char* what =
      pending ? "Task was destroyed but it is pending!" : "Task exception was never retrieved";
  if (unretrieved) ctx.exception = exception_;
  try {
    ctx.message = fmt::format("{} {}{}", what, repr(),
                              pending ? format_await_chain(*this) : format_unwind(unwind_trace()));
  } catch (...) {  // out of memory: the report goes out without the task
    ctx.message = what;
  }
  if (loop_) {
    loop_->loop().call_exception_handler(ctx);
  } else {
    EventLoop::report_to_stderr(ctx);
  }
  destroy_root();
}

void TaskBase::detach_from_loop() noexcept {
  leave_registry();
  loop_ = nullptr;
}

}  // namespace corio::detail
