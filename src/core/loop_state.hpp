// What the loop runs on, below its public face: the backend, the timer heap,
// the counts of what can still wake a task, and the queue other threads post
// to (the only state shared with them). EventLoop and LoopIo (loop_io.hpp)
// share it; nothing outside the core layer sees it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "backend/backend.hpp"
#include "lag_window.hpp"
#include "timer_heap.hpp"
#include <corio/detail/io_wait.hpp>
#include <corio/errors.hpp>
#include <corio/handle.hpp>

namespace corio::detail {

// While callbacks keep the ready queue busy, poll for I/O only every
// kIoPollInterval iterations: a zero-timeout epoll_wait costs a syscall
// (~0.3 us), more than a task switch. Tokio's scheduler checks its driver
// every 61 ticks for the same reason. Idle loops always poll.
constexpr unsigned kIoPollInterval = 61;
constexpr int kMaxEventsPerPoll = 256;

// A loop that is not running, as the thread that last ran it remembers it:
// a Socket closed there between two runs (after run_until_complete, before
// close()) still detaches from it, so that the backend lets go of the file at
// once (socket.cpp). The loop owns the record until close(): an expired
// weak reference means the loop is closed or gone, and is never followed.
struct StoppedLoop {
  EventLoop* loop;
};
inline thread_local std::weak_ptr<StoppedLoop> tls_stopped_loop;

struct LoopState {
  explicit LoopState(EventLoop& loop) : stopped(std::make_shared<StoppedLoop>(StoppedLoop{&loop})) {}

  std::unique_ptr<IoBackend> backend;
  std::shared_ptr<StoppedLoop> stopped;  // tls_stopped_loop's referent; reset by close()
  TimerHeap timers;
  // Waits parked in slots: a busy loop must still poll for them.
  std::size_t parked_io = 0;
  // Native file requests in the backend (submit_file), the same for the same reasons.
  std::size_t file_ops = 0;
  void fire(FdWaiter*& parked, bool closed) noexcept {
    --parked_io;
    std::exchange(parked, nullptr)->fire(closed);
  }
  std::size_t watched_fds = 0;
  LagWindow lag;

  // Installs (h) or removes (empty h) the reader or writer callback of fd.
  void watch(int fd, bool is_reader, Ref<CallbackHandle> h) {
    if (fd < 0) throw ValueError("invalid file descriptor " + std::to_string(fd));
    FdSlot& w = backend->slot(fd);
    if (!w.callbacks) w.callbacks = std::make_unique<FdCallbacks>();
    FdCallbacks& cb = *w.callbacks;
    const bool was_watched = cb.reader || cb.writer;
    const bool read = is_reader ? static_cast<bool>(h) : static_cast<bool>(cb.reader);
    const bool write = is_reader ? static_cast<bool>(cb.writer) : static_cast<bool>(h);
    backend->set_interest(fd, read, write);
    auto& slot = is_reader ? cb.reader : cb.writer;
    if (slot) slot->cancelled = true;  // a queued run of the old callback is skipped
    slot = std::move(h);
    if (read || write) {
      if (!was_watched) ++watched_fds;
    } else {
      if (was_watched) --watched_fds;
      w.callbacks.reset();
    }
  }
  IoEvent events[kMaxEventsPerPoll];

  // post_threadsafe: the only state shared with other threads.
  std::mutex ts_mutex;
  std::condition_variable ts_posted;  // close() waits on it for executor calls
  ReadyQueue ts_queue;                // each node owns itself or a reference
  std::atomic<bool> ts_pending{false};
  bool ts_closed = false;

  ReadyNode* take_posted() {
    std::lock_guard lock(ts_mutex);
    ts_pending.store(false, std::memory_order_relaxed);
    return ts_queue.take_all();
  }
};

}  // namespace corio::detail
