#include <corio/detail/multi_wait.hpp>

namespace corio::detail {

MultiWait::MultiWait(std::span<FutureStateBase* const> states, MultiWaitOptions opts)
    : states_(states), opts_(opts) {
  for (FutureStateBase* s : states_) {
    if (!s->done()) {
      ++pending_;
      continue;
    }
    any_done_ = true;
    if (!first_failure_ && failed(*s)) first_failure_ = s;
  }
}

MultiWait::~MultiWait() {
  if (loop_ && in_heap()) loop_->io().remove_timer(this);
}

bool MultiWait::failed(const FutureStateBase& s) const noexcept {
  return s.cancelled() ? opts_.cancelled_is_failure : static_cast<bool>(s.peek_exception());
}

bool MultiWait::satisfied() const noexcept {
  if (pending_ == 0 || timed_out_) return true;
  switch (opts_.until) {
    case Until::all:
      return false;
    case Until::first_completed:
      return any_done_;
    case Until::first_failure:
      return first_failure_ != nullptr;
  }
  return false;
}

void MultiWait::await_suspend(std::coroutine_handle<> h) {
  task_ = &current_task_for("gather()/wait()");
  static constexpr Ops kOps{&on_cancel, "gather/wait", &describe};
  ops = &kOps;
  nodes_ = std::make_unique<Node[]>(states_.size());
  for (std::size_t i = 0; i < states_.size(); ++i) {
    if (states_[i]->done()) continue;
    nodes_[i].owner = this;
    nodes_[i].fire = &fire_node;
    states_[i]->add_callback(&nodes_[i]);
  }
  loop_ = &task_->loop()->loop();
  if (opts_.deadline >= 0) {
    expire = &on_deadline;
    loop_->io().add_timer(this, opts_.deadline);
  }
  task_->suspend_at(h, this);
  if (satisfied()) wake();  // resume_via_loop with a child done already
}

void MultiWait::await_resume() {
  nodes_.reset();  // unlinks the nodes of children still running
  if (loop_ && in_heap()) loop_->io().remove_timer(this);
  if (task_) task_->check_interrupt();  // first: it also clears the task's interrupt flag
  if (cancelled_) task_->throw_cancelled();
}

void MultiWait::on_child_done(FutureStateBase& s) noexcept {
  --pending_;
  any_done_ = true;
  if (!first_failure_ && failed(s)) first_failure_ = &s;
  if (satisfied()) wake();
}

void MultiWait::wake() noexcept {
  if (!opts_.resume_via_loop) {
    task_->wake();
    return;
  }
  if (expire == &on_settled) return;  // on its way already
  // The deadline timer is done with: the node now carries the wake-up.
  if (in_heap()) loop_->io().remove_timer(this);
  expire = &on_settled;
  try {
    loop_->io().add_timer(this, loop_->time());
  } catch (...) {  // no room in the heap: resume in the next iteration instead
    task_->wake();
  }
}

void MultiWait::on_settled(TimerNode* n) noexcept {
  static_cast<MultiWait*>(n)->task_->wake();
}

void MultiWait::fire_node(Callback* cb, FutureStateBase& s) noexcept {
  static_cast<Node*>(cb)->owner->on_child_done(s);
}

// For call graphs: every child (done ones too, as asyncio's awaited_by) and the deadline.
void MultiWait::describe(const AwaitPoint* p, AwaitInfo& info) noexcept {
  auto* self = static_cast<const MultiWait*>(p);
  info.awaited = self->states_;
  if (self->in_heap()) info.deadline = self->when;
}

bool MultiWait::on_cancel(AwaitPoint* p, const std::string& msg) noexcept {
  auto* self = static_cast<MultiWait*>(p);
  if (self->satisfied()) return false;  // the task is woken already: the step interrupts
  self->cancelled_ = true;
  if (!self->opts_.cancel_children) {
    self->task_->wake();
    return true;
  }
  // gather: cancel every child, then wait for all of them before the
  // waiter sees its CancelledError (asyncio's _GatheringFuture.cancel).
  self->opts_.until = Until::all;
  for (FutureStateBase* s : self->states_) {
    if (s->done()) continue;
    try {
      s->cancel(msg);
    } catch (...) {
      (void)s->cancel();
    }
  }
  if (self->pending_ == 0) self->task_->wake();
  return true;
}

void MultiWait::on_deadline(TimerNode* n) noexcept {
  auto* self = static_cast<MultiWait*>(n);
  self->timed_out_ = true;
  self->task_->wake();
}

}  // namespace corio::detail
