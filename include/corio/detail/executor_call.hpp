// detail::ExecutorCall: one run_in_executor call on its way to a worker
// thread and back to its loop (event_loop.hpp's run_in_executor).
#pragma once

#include <exception>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

#include <corio/detail/loop_core.hpp>
#include <corio/detail/loop_io.hpp>
#include <corio/executor.hpp>
#include <corio/future.hpp>

namespace corio::detail {

// One run_in_executor call. It runs on a worker thread, then travels back to
// its loop as a ready node (post_threadsafe: no allocation, cannot fail),
// where it completes the Future. Future references are not atomic, so the
// Future is only touched on the loop thread.
template <class F, class R>
class ExecutorCall final : public ExecutorJob, public ReadyNode {
 public:
  ExecutorCall(LoopIo& io, Future<R> fut, F fn)
      : io_(&io), fut_(std::move(fut)), fn_(std::move(fn)) {
    ReadyNode::fn = &on_ready;
  }

  void run(std::unique_ptr<ExecutorJob> self) noexcept override {
    try {
      if constexpr (std::is_void_v<R>) {
        fn_();
      } else {
        result_.emplace(fn_());
      }
    } catch (...) {
      error_ = std::current_exception();
    }
    // From here the call owns itself. Posting cannot fail: close() waits for
    // every call before it closes the queue.
    self.release();
    io_->post_threadsafe(this);
  }

 private:
  // Runs on the loop thread, or is dropped by close(): either way the call
  // ends here, and the Future keeps whatever state it has (a cancelled
  // Future ignores the late result).
  static void on_ready(ReadyNode* n, ReadyOp op) noexcept {
    std::unique_ptr<ExecutorCall> self(static_cast<ExecutorCall*>(n));
    --self->io_->core().executor_calls;
    if (op != ReadyOp::run || self->fut_.done()) return;
    if (self->error_) {
      self->fut_.set_exception(self->error_);
    } else if constexpr (std::is_void_v<R>) {
      self->fut_.set_result();
    } else {
      self->fut_.set_result(std::move(*self->result_));
    }
  }

  LoopIo* io_;
  Future<R> fut_;
  F fn_;
  std::optional<std::conditional_t<std::is_void_v<R>, char, R>> result_;
  std::exception_ptr error_;
};

}  // namespace corio::detail
