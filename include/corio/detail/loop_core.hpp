// The part of the event loop that the header-only layers touch on their hot
// path: the ready queue, the task registry and the running task. EventLoop
// derives from it; everything else of the loop lives behind its .cpp.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include <corio/detail/intrusive.hpp>

namespace corio {
class EventLoop;
}

namespace corio::detail {

class TaskBase;

// A set of tasks with O(1) insert and erase: each task keeps its index here,
// and erase moves the last task into the hole. (A 4-byte index in the task
// instead of a 16-byte list hook.) Iteration order is unspecified, as for
// asyncio's all_tasks().
class TaskRegistry {
 public:
  bool empty() const noexcept { return tasks_.empty(); }
  std::size_t size() const noexcept { return tasks_.size(); }
  void insert(TaskBase* t);
  void erase(TaskBase* t) noexcept;
  TaskBase* back() const noexcept { return tasks_.back(); }
  // A copy: callers run code that may change the registry.
  std::vector<TaskBase*> snapshot() const { return tasks_; }
  // The task at t's address if it is here (t is only compared, never read).
  TaskBase* find(const TaskBase* t) const noexcept;

 private:
  std::vector<TaskBase*> tasks_;
};

struct LoopCore {
  ReadyQueue ready;
  // Pending tasks, each owned by the loop (a fire-and-forget task keeps
  // running). all_tasks() and close() walk it.
  TaskRegistry tasks;
  // Done tasks holding an exception nobody has retrieved yet: the report, made
  // when the task is destroyed, needs the loop; close() detaches them.
  TaskRegistry failed_tasks;
  std::uint64_t next_task_id = 1;
  std::uint64_t next_callback_id = 0;
  // The task whose step is running. Atomic so that a watchdog thread can name
  // the task that stalls the loop; relaxed stores cost a plain mov on x86.
  std::atomic<TaskBase*> running_task{nullptr};
  // run_in_executor calls not yet back on the loop; close() waits for them.
  std::size_t executor_calls = 0;
  // Watched fds and signal handlers of the runtime's own, which cannot wake a
  // task (LoopIo::add_internal_watcher).
  std::size_t internal_watchers = 0;
  // Live ThreadsafeHolds, and whether a thread other than the loop's posted
  // without one (it may post again: the deadlock check stops judging, since a
  // false report is worse than none). Written by other threads.
  std::atomic<std::size_t> threadsafe_holds{0};
  std::atomic<bool> foreign_poster{false};
  // Debug mode, latched for a whole ready batch: while on, each task step
  // leaves a reference to its task in stepped_task for the loop to time and
  // name the step.
  bool timing_steps = false;
  TaskBase* stepped_task = nullptr;
  bool closed = false;

  EventLoop& loop() noexcept;
};

// The task running on this thread's loop, or nullptr.
inline constinit thread_local TaskBase* tls_current_task = nullptr;

}  // namespace corio::detail
