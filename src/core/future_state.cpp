// Future state transitions and done-callbacks (see detail/future_state.hpp).
#include <corio/event_loop.hpp>

namespace corio::detail {

namespace {

// A user done-callback: linked in the future's list until the future
// completes, then queued on the loop as a ready node that runs fn once.
struct UserCallback final : Callback, ReadyNode, Pooled {
  std::function<void(FutureStateBase&)> fn;
  std::uint64_t id = 0;
  FutureStateBase* state = nullptr;  // set (with a reference) once queued

  static void on_fire(Callback* cb, FutureStateBase& s) noexcept {
    auto* self = static_cast<UserCallback*>(cb);
    if (s.loop()->closed) {  // nothing will ever run it
      delete self;
      return;
    }
    add_ref(&s);
    self->state = &s;
    s.loop()->ready.push(self);
  }
  static void on_ready(ReadyNode* n, ReadyOp op) noexcept {
    auto* self = static_cast<UserCallback*>(n);
    FutureStateBase* s = self->state;
    if (op == ReadyOp::run) {
      try {
        self->fn(*s);
      } catch (...) {
        s->loop()->loop().call_exception_handler(
            {"Exception in a Future done-callback", std::current_exception(), std::nullopt});
      }
    }
    delete self;
    release(s);
  }
};

}  // namespace

FutureStateBase::~FutureStateBase() {
  // Internal nodes belong to awaiters that keep the state alive while linked;
  // only user callbacks can remain here, on a future that never completed.
  while (ListHook* n = callbacks_.pop_front()) {
    auto* cb = static_cast<Callback*>(n);
    if (cb->fire == &UserCallback::on_fire) delete static_cast<UserCallback*>(cb);
  }
}

void FutureStateBase::destroy() noexcept {
  if (is_task_) {
    auto* task = static_cast<TaskBase*>(this);
    task->ReadyNode::fn(task, ReadyOp::destroy);
  } else {
    auto* plain = static_cast<PlainFutureState*>(this);
    plain->destroy_(plain);
  }
}

void FutureStateBase::check_pending(const char* what) const {
  if (done()) throw InvalidStateError(std::string(what) + "(): the future is already done");
}

bool FutureStateBase::cancel(std::string msg) {
  if (is_task_) return static_cast<TaskBase*>(this)->request_cancel(std::move(msg));
  if (done()) {
    retrieved_ = true;  // as TaskBase::request_cancel
    return false;
  }
  finish_cancelled(std::make_exception_ptr(CancelledError(std::move(msg))));
  return true;
}

void FutureStateBase::set_exception(std::exception_ptr e) {
  check_pending("set_exception");
  if (!e) throw ValueError("set_exception() needs an exception");
  finish_exception(std::move(e));
}

void FutureStateBase::finish_exception(std::exception_ptr e) noexcept {
  exception_ = std::move(e);
  status_ = Status::finished;
  fire_callbacks();
}

void FutureStateBase::finish_cancelled(std::exception_ptr e) noexcept {
  exception_ = std::move(e);
  status_ = Status::cancelled;
  fire_callbacks();
}

void FutureStateBase::fire_callbacks() noexcept {
  add_ref(this);  // a callback may drop the last outside reference
  while (ListHook* n = callbacks_.pop_front()) {
    auto* cb = static_cast<Callback*>(n);
    cb->fire(cb, *this);
  }
  release(this);
}

void FutureStateBase::rethrow_if_failed() {
  switch (status_) {
    case Status::pending:
      throw InvalidStateError("Result is not ready.");
    case Status::cancelled:
      std::rethrow_exception(exception_);
    case Status::finished:
      if (exception_) {
        retrieved_ = true;
        std::rethrow_exception(exception_);
      }
  }
}

std::exception_ptr FutureStateBase::exception() {
  if (status_ == Status::pending) throw InvalidStateError("Exception is not set.");
  if (status_ == Status::cancelled) std::rethrow_exception(exception_);
  retrieved_ = true;
  return exception_;
}

std::uint64_t FutureStateBase::add_done_callback(std::function<void(FutureStateBase&)> fn) {
  auto* cb = new UserCallback;
  cb->fn = std::move(fn);
  cb->id = ++loop_->next_callback_id;
  cb->Callback::fire = &UserCallback::on_fire;
  cb->ReadyNode::fn = &UserCallback::on_ready;
  const std::uint64_t id = cb->id;
  if (done()) {
    UserCallback::on_fire(cb, *this);
  } else {
    add_callback(cb);
  }
  return id;
}

std::size_t FutureStateBase::remove_done_callback(std::uint64_t id) noexcept {
  UserCallback* found = nullptr;
  callbacks_.for_each([&](ListHook* n) {
    auto* cb = static_cast<Callback*>(n);
    if (!found && cb->fire == &UserCallback::on_fire && static_cast<UserCallback*>(cb)->id == id) {
      found = static_cast<UserCallback*>(cb);
    }
  });
  delete found;  // unlinks itself
  return found ? 1 : 0;
}

}  // namespace corio::detail
