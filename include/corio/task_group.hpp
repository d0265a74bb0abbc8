// corio::TaskGroup: asyncio.TaskGroup, with RAII in place of `async with`.
//
//   TaskGroup tg;
//   auto a = tg.create_task(fetch(1));
//   auto b = tg.create_task(fetch(2));
//   co_await tg.wait();          // the end of the `async with` block
//
// The first child to fail with an exception cancels the others; wait() then
// waits for all of them and rethrows that exception, or an ExceptionGroup
// listing each when several failed. Cancelling the task in wait() cancels the
// children, waits for them, and rethrows CancelledError. A TaskGroup
// destroyed with children still running cancels them (they unwind on the
// loop; a destructor cannot wait).
//
// Unlike asyncio, a failing child does not cancel the task that owns the
// group while it is still creating children: the failure surfaces in wait().
#pragma once

#include <list>
#include <vector>

#include <corio/event_loop.hpp>

namespace corio {

class TaskGroup {
 public:
  TaskGroup();  // in a running loop
  TaskGroup(const TaskGroup&) = delete;
  TaskGroup& operator=(const TaskGroup&) = delete;
  ~TaskGroup();

  template <class T>
  Task<T> create_task(Coro<T> coro, std::string name = {},
                      SourceLocation where = SourceLocation::current()) {
    check_accepting();
    Task<T> task = loop_.create_task(std::move(coro), std::move(name), where);
    adopt(task.state());
    return task;
  }

  // Waits for every child; rethrows as described above.
  Coro<void> wait();

  std::size_t running() const noexcept { return children_.size(); }

 private:
  struct Child : detail::Callback {
    TaskGroup* group = nullptr;
    detail::Ref<detail::FutureStateBase> task;
    std::list<Child>::iterator self;
  };
  void check_accepting() const;
  void adopt(detail::FutureStateBase* task);
  void on_child_done(Child& child, detail::FutureStateBase& task) noexcept;
  void abort() noexcept;

  EventLoop& loop_;
  std::list<Child> children_;
  std::vector<std::exception_ptr> errors_;
  Future<void> all_done_;
  Handle abort_soon_;
  bool aborting_ = false;
  bool finished_ = false;
};

}  // namespace corio
