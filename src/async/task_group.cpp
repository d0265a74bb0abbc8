#include <corio/task_group.hpp>

namespace corio {

TaskGroup::TaskGroup() : loop_(get_running_loop()) {}

TaskGroup::~TaskGroup() {
  abort_soon_.cancel();
  abort();
  children_.clear();  // unlinks the nodes; the cancelled tasks unwind on the loop
}

void TaskGroup::check_accepting() const {
  if (finished_) throw RuntimeError("TaskGroup is finished");
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
        abort_soon_ = loop_.call_soon([this] { abort(); });
      } catch (...) {
        abort();
      }
    }
  }
  children_.erase(child.self);
  if (children_.empty() && all_done_.valid() && !all_done_.done()) all_done_.set_result();
}

void TaskGroup::abort() noexcept {
  if (aborting_) return;
  aborting_ = true;
  for (Child& c : children_) (void)c.task->cancel();
}

Coro<void> TaskGroup::wait() {
  std::exception_ptr cancelled;
  while (!children_.empty()) {
    all_done_ = loop_.create_future<void>();
    try {
      co_await all_done_;
    } catch (const CancelledError&) {
      if (!cancelled) cancelled = std::current_exception();
      abort();
    }
  }
  finished_ = true;
  if (errors_.size() == 1) std::rethrow_exception(errors_.front());
  if (errors_.size() > 1) throw ExceptionGroup("unhandled errors in a TaskGroup", errors_);
  if (cancelled) std::rethrow_exception(cancelled);
}

}  // namespace corio
