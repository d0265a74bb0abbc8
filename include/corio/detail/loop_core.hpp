// The part of the event loop that the header-only layers touch on their hot
// path: the ready queue, the task registry and the running task. EventLoop
// derives from it; everything else of the loop lives behind its .cpp.
#pragma once

#include <corio/detail/intrusive.hpp>

#include <atomic>
#include <cstdint>

namespace corio {
class EventLoop;
}

namespace corio::detail {

class TaskBase;

struct LoopCore {
  ReadyQueue ready;
  // Pending tasks, each owned by the loop (a fire-and-forget task keeps
  // running). all_tasks() and close() walk it.
  ListHead tasks;
  // Done tasks holding an exception nobody has retrieved yet: the report, made
  // when the task is destroyed, needs the loop; close() detaches them.
  ListHead failed_tasks;
  std::uint64_t next_task_id = 1;
  std::uint64_t next_callback_id = 0;
  // The task whose step is running. Atomic so that a watchdog thread can name
  // the task that stalls the loop; relaxed stores cost a plain mov on x86.
  std::atomic<TaskBase*> running_task{nullptr};
  bool closed = false;

  EventLoop& loop() noexcept;
};

// The task running on this thread's loop, or nullptr.
inline constinit thread_local TaskBase* tls_current_task = nullptr;

}  // namespace corio::detail
