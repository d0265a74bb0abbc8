// Helpers shared by the sync-layer tests (Lock, Event, Semaphore,
// BoundedSemaphore): the async-layer helpers (virtual time, watchdog,
// CO_ASSERT, Log, ...) plus yields and outcome capture.
//
// State goes into coroutines as parameters (pointers), never as lambda
// captures (DESIGN.md "Known toolchain traps").
#pragma once

#include <algorithm>
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

// The end of a finished task: value, cancelled (CancelledError) or other.
template <class T>
End end_of(const Task<T>& t) {
  if (!t.done()) return End::none;
  if (t.cancelled()) return End::cancelled;
  return end_of_error(t.exception());
}

// Awaits aw and records how it ended in *out (never throws).
template <class A>
Coro<void> capture(A aw, End* out) {
  try {
    co_await std::move(aw);
    *out = End::value;
  } catch (...) {
    *out = end_of_error(std::current_exception());
  }
}

// The order in which tasks did something, by name.
using Order = std::vector<std::string>;

// Coroutine wrappers, so wait_for() gets a Coro whatever the awaiter type.
// P is corio::Lock, corio::Semaphore or corio::BoundedSemaphore.
template <class P>
Coro<void> acquire_coro(P* p) {
  co_await p->acquire();
}
inline Coro<void> event_wait(corio::Event* e) { co_await e->wait(); }

// The guard-returning acquire: scoped_lock() of a Lock, scoped_acquire() of a
// semaphore.
template <class P>
auto scoped(P* p) {
  if constexpr (requires { p->scoped_lock(); })
    return p->scoped_lock();
  else
    return p->scoped_acquire();
}

// Takes the lock or a permit, records `name`, holds it for `hold` yields,
// releases.
template <class P>
Coro<void> taker(P* p, Order* order, std::string name, int hold) {
  co_await p->acquire();
  order->push_back(name);
  co_await yield_n(hold);
  p->release();
}

// As taker(), through scoped().
template <class P>
Coro<void> scoped_taker(P* p, Order* order, std::string name, int hold) {
  auto guard = co_await scoped(p);
  order->push_back(name);
  co_await yield_n(hold);
}

// Sleeps `delay`, records "arrive:name" in *arrivals, then as taker().
template <class P>
Coro<void> late_taker(P* p, Order* arrivals, Order* order, std::string name, double delay,
                      int hold) {
  co_await corio::sleep(Secs(delay));
  arrivals->push_back(name);
  co_await taker(p, order, name, hold);
}

// Starts takers "A", "B" and "C" (each holding for `hold` yields).
template <class P>
std::vector<Task<void>> spawn_abc(P* p, Order* order, int hold) {
  std::vector<Task<void>> tasks;
  for (const char* n : {"A", "B", "C"})
    tasks.push_back(corio::create_task(taker(p, order, n, hold)));
  return tasks;
}

// `direct`: wait_for(p->acquire(), t), else wait_for on a Coro that acquires.
// Records how it ended in *end; on success records "T", yields, releases.
template <class P>
Coro<void> timed_taker(P* p, double timeout, End* end, Order* order, bool direct = true) {
  try {
    if (direct)
      co_await corio::wait_for(p->acquire(), Secs(timeout));
    else
      co_await corio::wait_for(acquire_coro(p), Secs(timeout));
  } catch (const corio::TimeoutError&) {
    *end = End::timeout;
    co_return;
  }
  *end = End::value;
  order->push_back("T");
  co_await corio::sleep(0s);
  p->release();
}

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

// *p has one unit (the lock, or one permit), free: takes it, queues taker A,
// then releases (granting it to A) and cancels A before A runs. Ends when A
// has ended; A never records itself in *order.
template <class P>
Coro<void> grant_then_cancel(P* p, Order* order) {
  co_await p->acquire();
  Task<void> a = corio::create_task(taker(p, order, "A", 1));
  co_await corio::sleep(0s);
  p->release();
  a.cancel();
  co_await finish(a);
  EXPECT_EQ(end_of(a), End::cancelled);
}

// *p has one unit, free: holds it while T waits with a 1s timeout and B
// arrives at 0.5s (to hold for
// `b_hold` yields); at 1.5s T has timed out and the unit passes to B. Ends when
// B has ended.
template <class P>
Coro<void> timeout_behind_holder(P* p, Order* order, int b_hold) {
  End end = End::none;
  co_await p->acquire();
  Task<void> t = corio::create_task(timed_taker(p, 1.0, &end, order));
  Task<void> b = corio::create_task(late_taker(p, order, order, "B", 0.5, b_hold));
  co_await corio::sleep(1.5s);
  EXPECT_EQ(end, End::timeout);
  EXPECT_TRUE(t.done());
  EXPECT_TRUE(p->locked());
  p->release();  // to B, the only one left
  co_await b;
}

// *p has one unit, free: the release (from a timer callback) and T's deadline
// fall at the same instant; whichever wins, T ends and B (arriving at 0.5s,
// holding for `b_hold` yields) gets the unit.
template <class P>
Coro<void> release_at_deadline(P* p, Order* order, int b_hold) {
  End end = End::none;
  co_await p->acquire();
  corio::get_running_loop().call_later(1s, [p] { p->release(); });
  Task<void> t = corio::create_task(timed_taker(p, 1.0, &end, order, false));
  Task<void> b = corio::create_task(late_taker(p, order, order, "B", 0.5, b_hold));
  std::vector<Task<void>> tasks{t, b};
  co_await drain(&tasks);
  EXPECT_TRUE(end == End::timeout || end == End::value) << end;
  EXPECT_EQ(end_of(b), End::value);
}

// Runs body(victim, &order) for each victim of the three queued takers A, B,
// C (cancelled while queued) and checks that the other two took their turn in
// order.
inline void expect_queued_cancel_keeps_order(Coro<void> (*body)(int victim, Order* order)) {
  const Order want[] = {{"B", "C"}, {"A", "C"}, {"A", "B"}};
  for (int victim = 0; victim < 3; ++victim) {
    Order order;
    run_vt(body(victim, &order));
    EXPECT_EQ(order, want[victim]) << "victim " << victim;
  }
}

}  // namespace corio_sync_test
