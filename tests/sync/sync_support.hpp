// Helpers shared by the sync-layer tests (Lock, Event, Semaphore,
// BoundedSemaphore): the async-layer helpers (virtual time, watchdog,
// CO_ASSERT, Log, ...) plus yields and outcome capture.
//
// State goes into coroutines as parameters (pointers), never as lambda
// captures (DESIGN.md "Known toolchain traps").
#pragma once

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

#include "async/async_support.hpp"
#include <corio/event.hpp>
#include <corio/lock.hpp>
#include <corio/semaphore.hpp>

namespace corio_sync_test {

using namespace corio_async_test;  // NOLINT: the shared helpers
using corio::Coro;
using corio::Task;

// Yields to the loop n times (sleep(0) puts the task at the back of the
// ready queue once).
inline Coro<void> yield_n(int n) {
  for (int i = 0; i < n; ++i) co_await corio::sleep(0s);
}

// How an await ended.
enum class End { none, value, cancelled, timeout, other };

inline const char* to_string(End e) {
  switch (e) {
    case End::none:
      return "none";
    case End::value:
      return "value";
    case End::cancelled:
      return "cancelled";
    case End::timeout:
      return "timeout";
    case End::other:
      return "other";
  }
  return "?";
}

inline std::ostream& operator<<(std::ostream& os, End e) { return os << to_string(e); }

// The end of a finished task: value, cancelled (CancelledError) or other.
template <class T>
End end_of(const Task<T>& t) {
  if (!t.done()) return End::none;
  if (t.cancelled()) return End::cancelled;
  std::exception_ptr e = t.exception();
  if (!e) return End::value;
  if (is_cancelled_error(e)) return End::cancelled;
  try {
    std::rethrow_exception(e);
  } catch (const corio::TimeoutError&) {
    return End::timeout;
  } catch (...) {
  }
  return End::other;
}

// Awaits aw and records how it ended in *out (never throws).
template <class A>
Coro<void> capture(A aw, End* out) {
  try {
    co_await std::move(aw);
    *out = End::value;
  } catch (const corio::TimeoutError&) {
    *out = End::timeout;
  } catch (const corio::CancelledError&) {
    *out = End::cancelled;
  } catch (...) {
    *out = End::other;
  }
}

// Coroutine wrappers, so wait_for() gets a Coro whatever the awaiter type.
inline Coro<void> lock_acquire(corio::Lock* l) { co_await l->acquire(); }
template <class S>
Coro<void> sem_acquire(S* s) {
  co_await s->acquire();
}
inline Coro<void> event_wait(corio::Event* e) { co_await e->wait(); }

// Awaits every task of *tasks, ignoring how each ended -- but not a
// cancellation of the awaiting task itself (the watchdog's), which it lets
// through so that a hang still ends.
template <class T>
Coro<void> drain(std::vector<Task<T>>* tasks) {
  for (Task<T>& t : *tasks) {
    try {
      co_await t;
    } catch (const corio::CancelledError&) {
      if (cancelling() > 0) throw;
    } catch (...) {
    }
  }
}

// drain() of one task.
template <class T>
Coro<void> finish(Task<T> t) {
  std::vector<Task<T>> one{std::move(t)};
  co_await drain(&one);
}

}  // namespace corio_sync_test
