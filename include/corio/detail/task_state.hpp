// The state of a Task: a future that drives one Coro on the loop.
//
// A task is a ReadyNode: waking it pushes the task itself on the ready queue
// (no allocation), and its step resumes the innermost suspended coroutine
// through the trampoline. When the root Coro finishes, the typed TaskState
// moves its result into the future part and fires the waiters.
//
// Where a task waits is an AwaitPoint, embedded in the awaiter object in the
// coroutine frame. It is what Task::cancel() acts on while the task is
// suspended, and what debug tooling reads to say what a task waits for.
#pragma once

#include <coroutine>
#include <memory>
#include <span>
#include <corio/source_location.hpp>
#include <string>

#include <corio/coro.hpp>
#include <corio/detail/future_state.hpp>

namespace corio::detail {

class TaskBase;

// What an await point says about itself in a call graph (call_graph.hpp);
// filled by its describe function, without allocating.
struct AwaitInfo {
  const void* object = nullptr;  // the Lock, Queue, Future state, ... awaited
  std::size_t waiters = 0;       // tasks queued on `object` (sync primitives)
  bool has_waiters = false;
  double deadline = -1;  // loop time the wait ends at (sleep, timeouts); negative: none
  int fd = -1;           // socket operations
  bool write = false;
  std::span<FutureStateBase* const> awaited;  // futures and tasks awaited
  // The task holding the awaited Lock. It may have ended without releasing
  // it: readers compare it with live tasks before following it.
  const TaskBase* holder = nullptr;
};

struct AwaitPoint {
  struct Ops {
    // Called by Task::cancel() while the task is suspended here. Must make
    // sure the task gets woken (now, or it already is), and return true if
    // that resumption will itself throw CancelledError; false makes the
    // task's next step interrupt this point instead.
    bool (*cancel)(AwaitPoint*, const std::string& msg) noexcept;
    const char* what;  // "sleep", "future", "task", ... for task dumps
    // Tells a call graph what is awaited; nullptr: nothing beyond `what`.
    void (*describe)(const AwaitPoint*, AwaitInfo&) noexcept;
  };
  const Ops* ops = nullptr;  // one static table per awaiter type: 8 bytes per frame
};

struct TaskExtra;  // name, cancel message: allocated only when used

class TaskBase : public FutureStateBase, public ReadyNode {
 public:
  TaskBase(LoopCore* loop, std::coroutine_handle<> root, void (*on_ready)(ReadyNode*, ReadyOp));

  // Task.cancel(): ask the task to throw CancelledError at its current (or
  // next) suspension point. False if it is already done.
  bool request_cancel(std::string msg);
  int cancelling() const noexcept { return cancel_requests_; }
  int uncancel() noexcept;
  std::uint32_t id() const noexcept { return id_; }
  std::string name() const;
  void set_name(std::string name);
  // Debug mode: where create_task was called, shown in reports.
  void set_created_at(SourceLocation where);
  // "<Task name='Task-3'>", plus " created at file:line" when known.
  std::string repr() const;
  // The CancelledError to throw at an interrupted await point.
  [[noreturn]] void throw_cancelled() const;
  // First thing in an await point's await_resume: throws CancelledError if
  // the step that resumed it was told to interrupt it. (A task flag, not a
  // field of every awaiter: it keeps suspended frames small.)
  bool interrupt_pending() const noexcept { return (task_flags_ & kInterrupt) != 0; }
  void check_interrupt() const {
    if (task_flags_ & kInterrupt) [[unlikely]]
      take_interrupt();
  }
  void clear_interrupt() const noexcept { task_flags_ &= ~kInterrupt; }
  AwaitPoint* waiting_on() const noexcept { return waiting_on_; }
  // The innermost coroutine, valid for a call graph while the task is
  // suspended at an await point (waiting_on() set) or not yet started.
  std::coroutine_handle<> innermost() const noexcept { return resume_; }
  std::coroutine_handle<> root_frame() const noexcept { return root_; }
  bool started() const noexcept { return (task_flags_ & kStarted) != 0; }
  // How many steps the task's coroutine has run: a task not done is
  // suspended at its steps()-th suspension point (a cancellation sweep
  // counts them: corio::testing::cancellation_sweep).
  std::uint32_t steps() const noexcept { return steps_; }
  // Whether its next step is queued: it was woken and has not run yet (the
  // sweep's second cancel at each point lands in this window).
  bool queued() const noexcept { return (task_flags_ & kQueued) != 0; }
  // The await chain an exception took out of the task's coroutines, innermost
  // first (recorded on the exception path only; empty if none).
  std::span<const AwaitSite> unwind_trace() const noexcept;
  void note_unwind(const AwaitSite& site) noexcept;

  // Schedule the next step. Idempotent while already queued.
  void wake() noexcept {
    if (!(task_flags_ & kQueued)) {
      task_flags_ |= kQueued;
      add_ref(this);
      loop_->ready.push(this);
    }
  }
  // Called from an awaiter's await_suspend once it has registered itself.
  void suspend_at(std::coroutine_handle<> h, AwaitPoint* point) noexcept {
    resume_ = h;
    waiting_on_ = point;
    if (task_flags_ & kMustCancel) [[unlikely]]
      cancel_at_suspend();
  }
  const std::string& cancel_message() const noexcept;

 protected:
  ~TaskBase();
  // Runs one step; true when the root coroutine has finished and the typed
  // part must collect its result.
  bool step() noexcept;
  void finish_from_root(std::exception_ptr e) noexcept;
  void before_destroy() noexcept;
  std::coroutine_handle<> root() const noexcept { return root_; }

 private:
  friend class ::corio::EventLoop;
  void cancel_at_suspend() noexcept;
  [[noreturn]] void take_interrupt() const;
  // Loop close: the state may outlive the loop; reports then go to stderr.
  void detach_from_loop() noexcept;
  void destroy_root() noexcept;

  std::coroutine_handle<> root_;
  std::coroutine_handle<> resume_;
  AwaitPoint* waiting_on_ = nullptr;
  TaskExtra& extra();
  std::unique_ptr<TaskExtra> extra_;
  // 32-bit id, count and registry index, flags in FutureStateBase's spare
  // byte: a task state is 104 bytes, one 112-byte malloc chunk (the budget
  // is 256 bytes per suspended task, frame included).
  std::uint32_t id_;
  std::int32_t cancel_requests_ = 0;
  std::uint32_t registry_index_ = 0;
  std::uint32_t steps_ = 0;  // in the padding after the index: free
  friend class TaskRegistry;
  void leave_registry() noexcept;
};

template <class T>
class TaskState final : public TaskBase, public Pooled {
 public:
  using Handle = std::coroutine_handle<CoroPromise<T>>;
  TaskState(LoopCore* loop, Handle root) : TaskBase(loop, root, &on_ready) {}
  [[no_unique_address]] ValueBox<T> value;

 private:
  static void on_ready(ReadyNode* n, ReadyOp op) noexcept {
    auto* self = static_cast<TaskState*>(static_cast<TaskBase*>(n));
    if (op == ReadyOp::destroy) {
      self->before_destroy();
      delete self;
      return;
    }
    if (op == ReadyOp::run && self->step()) self->collect();
    release(self);  // the ready queue's reference
  }
  void collect() noexcept {
    auto& promise = Handle::from_address(root().address()).promise();
    std::exception_ptr e = promise.exception();
    if constexpr (!std::is_void_v<T>) {
      if (!e) {
        try {
          value.v.emplace(std::move(*promise.value_));
        } catch (...) {
          e = std::current_exception();
        }
      }
    }
    finish_from_root(std::move(e));
  }
};

// The value slot of a Future<T> or Task<T> state.
template <class T>
ValueBox<T>& value_of(FutureStateBase* s) noexcept {
  if (s->is_task()) return static_cast<TaskState<T>*>(static_cast<TaskBase*>(s))->value;
  return static_cast<FutureState<T>*>(s)->value;
}

// The task running on this thread, or a RuntimeError naming `what` when a
// corio awaitable is awaited outside any task.
[[noreturn]] void throw_no_current_task(const char* what);
inline TaskBase& current_task_for(const char* what) {
  if (TaskBase* t = tls_current_task) [[likely]]
    return *t;
  throw_no_current_task(what);
}

}  // namespace corio::detail
