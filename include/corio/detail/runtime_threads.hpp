// The threads corio itself runs (thread-pool workers, the stall watchdog),
// counted so that the deadlock check can tell whether any other thread
// exists: one the program made could call call_soon_threadsafe at any time,
// so while one lives, "nothing can wake these tasks" is not certain (a cycle
// of tasks still is a deadlock).
#pragma once

#include <atomic>
#include <cstddef>

namespace corio::detail {

inline std::atomic<std::size_t> g_runtime_threads{0};

// Counts the thread it lives on as the runtime's, for its lifetime.
struct RuntimeThread {
  RuntimeThread() noexcept { g_runtime_threads.fetch_add(1, std::memory_order_relaxed); }
  ~RuntimeThread() { g_runtime_threads.fetch_sub(1, std::memory_order_relaxed); }
  RuntimeThread(const RuntimeThread&) = delete;
  RuntimeThread& operator=(const RuntimeThread&) = delete;
};

// Whether the process has a thread that is neither the caller nor corio's
// (from /proc/self/stat; true when it cannot be read: the safe answer).
bool foreign_threads_exist() noexcept;

}  // namespace corio::detail
