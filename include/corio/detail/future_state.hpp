// Shared state behind Future<T> and Task<T>.
//
// A state is pending, then finished (value or exception) or cancelled, once.
// Completion fires the callbacks linked into its intrusive list in order. A
// Callback's fire function runs at completion time and must only schedule:
// waiting tasks are pushed on the ready queue, user done-callbacks become
// ready-queue handles, so no user code runs inside set_result() (asyncio runs
// done callbacks with call_soon for the same reason).
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>

#include <corio/detail/frame_alloc.hpp>
#include <corio/detail/intrusive.hpp>
#include <corio/detail/loop_core.hpp>
#include <corio/errors.hpp>

namespace corio::detail {

class FutureStateBase;

struct Callback : ListHook {
  void (*fire)(Callback*, FutureStateBase&) noexcept = nullptr;
  Callback() = default;
  ~Callback() { unlink(); }
};

class FutureStateBase {
 public:
  enum class Status : std::uint8_t { pending, finished, cancelled };

  FutureStateBase(LoopCore* loop, bool is_task) noexcept : is_task_(is_task), loop_(loop) {}
  FutureStateBase(const FutureStateBase&) = delete;
  FutureStateBase& operator=(const FutureStateBase&) = delete;

  bool done() const noexcept { return status_ != Status::pending; }
  bool cancelled() const noexcept { return status_ == Status::cancelled; }
  bool is_task() const noexcept { return is_task_; }
  LoopCore* loop() const noexcept { return loop_; }
  std::uint32_t ref_count() const noexcept { return refs_; }

  // Futures: cancel and fire. Tasks: request cancellation (task.hpp).
  bool cancel(std::string msg = {});
  void set_exception(std::exception_ptr e);
  // Throws InvalidStateError unless pending; used before storing a value.
  void check_pending(const char* what) const;
  // Marks finished and fires callbacks; the value was stored by the caller.
  void finish_ok() noexcept {
    status_ = Status::finished;
    fire_callbacks();
  }
  // result() without the value: throws the exception, CancelledError, or
  // InvalidStateError if pending. Marks the exception as retrieved.
  void rethrow_if_failed();
  std::exception_ptr exception();
  // The exception of a finished or cancelled state, without marking it retrieved.
  const std::exception_ptr& peek_exception() const noexcept { return exception_; }
  // Stops the "exception never retrieved" report (a combinator took care of it).
  void mark_retrieved() noexcept { retrieved_ = true; }

  void add_callback(Callback* cb) noexcept { callbacks_.push_back(cb); }
  // User done-callbacks: scheduled on the loop when the state completes (or at
  // once if it already has). Returns an id for remove_done_callback.
  std::uint64_t add_done_callback(std::function<void(FutureStateBase&)> fn);
  std::size_t remove_done_callback(std::uint64_t id) noexcept;

  friend void add_ref(FutureStateBase* s) noexcept { ++s->refs_; }
  friend void release(FutureStateBase* s) noexcept {
    if (--s->refs_ == 0) s->destroy();
  }

 protected:
  ~FutureStateBase();
  // Deletes the concrete state: a task through its ready function
  // (ReadyOp::destroy), a plain future through PlainFutureState::destroy_.
  void destroy() noexcept;
  void finish_exception(std::exception_ptr e) noexcept;
  void finish_cancelled(std::exception_ptr e) noexcept;
  void fire_callbacks() noexcept;

  std::uint32_t refs_ = 1;
  Status status_ = Status::pending;
  bool is_task_;
  bool retrieved_ = false;
  // TaskBase's flags, kept in what would be padding here.
  enum : std::uint8_t {
    kMustCancel = 1,
    kQueued = 2,
    kStarted = 4,
    kInterrupt = 8,
    kRegistered = 16,  // in loop.tasks (pending) or loop.failed_tasks (done)
    kCancelling = 32,  // its await point is passing a cancellation on (TaskBase::request_cancel)
  };
  mutable std::uint8_t task_flags_ = 0;
  LoopCore* loop_;
  std::exception_ptr exception_;
  ListHead callbacks_;
};

// A plain future's state: the type-erased way to delete it. (A task reaches
// its concrete type through its ready function instead, saving these 8 bytes
// in every task.)
class PlainFutureState : public FutureStateBase {
 public:
  using DestroyFn = void (*)(FutureStateBase*) noexcept;
  PlainFutureState(LoopCore* loop, DestroyFn destroy) noexcept
      : FutureStateBase(loop, false), destroy_(destroy) {}
  DestroyFn destroy_;

 protected:
  ~PlainFutureState() = default;
};

template <class T>
struct ValueBox {
  std::optional<T> v;
};
template <>
struct ValueBox<void> {};

template <class T>
class FutureState final : public PlainFutureState, public Pooled {
 public:
  explicit FutureState(LoopCore* loop) noexcept : PlainFutureState(loop, &destroy) {}
  ValueBox<T> value;

 private:
  static void destroy(FutureStateBase* s) noexcept { delete static_cast<FutureState*>(s); }
};

}  // namespace corio::detail
