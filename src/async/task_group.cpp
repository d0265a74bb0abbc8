// TaskGroup: asyncio's Lib/asyncio/taskgroups.py state machine.
//
// A child's completion is seen by a Callback linked into its state, which
// fires inside the completion and so must only schedule: the abort a failure
// causes (cancelling siblings and, with a body, the owner) runs from the
// ready queue, as asyncio's done-callbacks do.
#include <corio/detail/multi_wait.hpp>
#include <corio/sleep.hpp>
#include <corio/task_group.hpp>

namespace corio {

TaskGroup::TaskGroup() : loop_(get_running_loop()) {}

TaskGroup::TaskGroup(OwnsBody)
    : loop_(get_running_loop()), parent_(&detail::current_task_for("task_group()")) {}

TaskGroup::~TaskGroup() {
  abort_soon_.cancel();
  abort();
  children_.clear();  // unlinks the nodes; the cancelled tasks unwind on the loop
}

void TaskGroup::check_accepting() const {
  if (exiting_ && children_.empty()) throw RuntimeError("TaskGroup is finished");
  if (aborting_) throw RuntimeError("TaskGroup is shutting down");
}

void TaskGroup::adopt(detail::FutureStateBase* task) {
  Child& c = children_.emplace_back();
  c.self = std::prev(children_.end());
  c.group = this;
  c.task = detail::Ref<detail::FutureStateBase>::share(task);
  c.fire = [](detail::Callback* cb, detail::FutureStateBase& t) noexcept {
    auto* child = static_cast<Child*>(cb);
    child->group->on_child_done(*child, t);
  };
  task->mark_retrieved();  // the group collects its children's errors
  task->add_callback(&c);
}

void TaskGroup::on_child_done(Child& child, detail::FutureStateBase& task) noexcept {
  if (!task.cancelled() && task.peek_exception()) {
    try {
      errors_.push_back(task.peek_exception());
    } catch (...) {
    }
    if (!aborting_ && !abort_soon_) {
      try {
        abort_soon_ = loop_.call_soon([this] { on_child_failed(); });
      } catch (...) {
        abort();  // out of memory: cancel the siblings now, not the owner
      }
    }
  }
  children_.erase(child.self);
}

// The first failure: cancel the siblings and, with a body, the owner's
// current await, remembering that we did so exit() withdraws it.
void TaskGroup::on_child_failed() noexcept {
  abort_soon_ = {};
  if (aborting_ || parent_cancel_requested_) return;
  abort();
  if (parent_) {
    parent_cancel_requested_ = true;
    (void)parent_->request_cancel({});
  }
}

void TaskGroup::abort() noexcept {
  if (aborting_) return;
  aborting_ = true;
  for (Child& c : children_) (void)c.task->cancel();
}

Coro<void> TaskGroup::wait() { return exit(nullptr); }

// asyncio's TaskGroup._aexit, step for step.
Coro<void> TaskGroup::exit(std::exception_ptr body_error) {
  exiting_ = true;
  if (abort_soon_) {  // a child failed and its abort has not run yet: run it here
    abort_soon_.cancel();
    abort_soon_ = {};
    abort();
  }
  std::exception_ptr propagate_cancel;
  if (body_error) {
    if (is_cancelled_error(body_error)) propagate_cancel = body_error;
    abort();
  }
  std::exception_ptr pending_cancel;
  while (!children_.empty()) {
    // Awaiting the children themselves, as gather does, makes each child's
    // call graph show the owner in awaited_by; the references keep their
    // states alive for it. Children started meanwhile: the next round.
    std::vector<detail::Ref<detail::FutureStateBase>> alive;
    std::vector<detail::FutureStateBase*> states;
    for (Child& c : children_) {
      alive.push_back(c.task);
      states.push_back(c.task.get());
    }
    try {
      detail::MultiWait all(states, {});
      co_await all;
    } catch (const CancelledError&) {
      pending_cancel = std::current_exception();
      if (!aborting_) {  // the owner is cancelled from outside
        propagate_cancel = pending_cancel;
        abort();
      }
    }
  }
  if (!errors_.empty()) {
    // asyncio wakes the owner from the deferred step that handles a child's
    // failure, two turns after the completion; MultiWait resumes us one turn
    // after it, alongside the other deferred steps of that turn, an
    // enclosing group's abort among them. One turn more before a failure is
    // thrown lets those cancel the owner first, as in asyncio (CPython's
    // test_nested_groups_both_cancelled); only failures pay for it. Here
    // aborting_ holds, so a cancellation is only noted, as in the loop above.
    try {
      co_await sleep(std::chrono::seconds(0));
    } catch (const CancelledError&) {
      pending_cancel = std::current_exception();
    }
  }
  if (parent_cancel_requested_) {
    parent_cancel_requested_ = false;
    if (parent_->uncancel() == 0) {
      propagate_cancel = nullptr;  // the only cancellation was ours
    } else if (!propagate_cancel) {
      propagate_cancel = pending_cancel;  // the rest is not ours: keep it
    }
  }
  if (propagate_cancel && errors_.empty()) std::rethrow_exception(propagate_cancel);
  if (body_error && !is_cancelled_error(body_error)) errors_.push_back(body_error);
  if (!errors_.empty()) throw_errors();
}

void TaskGroup::throw_errors() {
  // A cancellation from outside is still pending: withdraw and renew it, so
  // the count stays and the owner's next await is interrupted (asyncio).
  detail::TaskBase* owner = parent_ ? parent_ : detail::tls_current_task;
  if (owner && owner->cancelling() > 0) {
    owner->uncancel();
    (void)owner->request_cancel(owner->cancel_message());
  }
  if (errors_.size() == 1) std::rethrow_exception(errors_.front());
  throw ExceptionGroup("unhandled errors in a TaskGroup", std::move(errors_));
}

}  // namespace corio
