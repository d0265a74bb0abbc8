// corio::Semaphore and corio::BoundedSemaphore: construction, the no-yield
// fast path, release bounds, FIFO fairness with direct hand-off, concurrency
// limits (the seed: 100 tasks under Semaphore(10)), and cancellation: queued
// waiters, waiters granted a permit but cancelled before they ran (no stolen
// permit), wait_for() timeouts, and scoped_acquire() guards unwound by
// cancellation. Virtual time.
#include "sync/sync_support.hpp"

namespace corio_sync_test {
namespace {

// How many permits are free now: takes them all without suspending (locked()
// says when acquire() would wait), then gives them back.
template <class S>
Coro<int> free_permits(S* sem) {
  int n = 0;
  while (!sem->locked() && n < 1000) {
    co_await sem->acquire();
    ++n;
  }
  for (int i = 0; i < n; ++i) sem->release();
  co_return n;
}

// Holds a permit for `secs` while tracking the concurrency.
struct Gauge {
  int current = 0, max = 0, done = 0;
};

Coro<void> limited(corio::Semaphore* sem, Gauge* g, double secs) {
  auto permit = co_await sem->scoped_acquire();
  struct Inside {  // leaves before the permit is released, also when cancelled
    Gauge* g;
    ~Inside() { --g->current; }
  } inside{g};
  g->max = std::max(g->max, ++g->current);
  co_await corio::sleep(Secs(secs));
  ++g->done;
}

// ---- construction and state ---------------------------------------------------------------

TEST(Semaphore, ConstructionAndLocked) {
  EXPECT_THROW(corio::Semaphore(-1), corio::ValueError);
  EXPECT_THROW(corio::BoundedSemaphore(-1), corio::ValueError);
  corio::Semaphore zero(0);
  EXPECT_TRUE(zero.locked());
  corio::Semaphore two(2);
  EXPECT_FALSE(two.locked());
  corio::Semaphore dflt;  // asyncio's default value is 1
  EXPECT_FALSE(dflt.locked());
}

Coro<void> acquire_does_not_yield() {
  corio::Semaphore sem(3);
  bool ran = false;
  Task<int> other = corio::create_task(mark_started(&ran, 1));
  co_await sem.acquire();
  co_await sem.acquire();
  EXPECT_FALSE(sem.locked());
  {
    auto permit = co_await sem.scoped_acquire();
    EXPECT_TRUE(sem.locked());
  }
  EXPECT_FALSE(sem.locked());
  co_await sem.acquire();
  EXPECT_TRUE(sem.locked());
  EXPECT_FALSE(ran) << "acquire() with a free permit suspended";
  for (int i = 0; i < 3; ++i) sem.release();
  EXPECT_EQ(co_await free_permits(&sem), 3);
  co_await other;
}

TEST(Semaphore, AcquireWithFreePermitDoesNotYield) { run_vt(acquire_does_not_yield()); }

Coro<void> unbounded_release() {
  corio::Semaphore sem(1);
  sem.release();
  sem.release();  // a plain Semaphore may grow past its initial value
  EXPECT_EQ(co_await free_permits(&sem), 3);
}

TEST(Semaphore, PlainSemaphoreReleaseIsUnbounded) { run_vt(unbounded_release()); }

Coro<void> bounded_release() {
  corio::BoundedSemaphore sem(2);
  EXPECT_THROW(sem.release(), corio::ValueError);
  co_await sem.acquire();
  sem.release();
  EXPECT_THROW(sem.release(), corio::ValueError);
  co_await sem.acquire();
  co_await sem.acquire();
  EXPECT_TRUE(sem.locked());
  sem.release();
  sem.release();
  EXPECT_THROW(sem.release(), corio::ValueError);
  EXPECT_EQ(co_await free_permits(&sem), 2);
}

TEST(BoundedSemaphore, ReleasePastInitialValueThrows) { run_vt(bounded_release()); }

// BoundedSemaphore(0) never has a permit to give: a release() with a waiter
// is past the bound all the same (asyncio raises ValueError here too).
Coro<void> bounded_zero_with_waiter(Order* order) {
  corio::BoundedSemaphore sem(0);
  Task<void> a = corio::create_task(taker(&sem, order, "A", 0));
  co_await corio::sleep(0s);
  EXPECT_THROW(sem.release(), corio::ValueError) << "release() past the bound handed out a permit";
  co_await corio::sleep(0s);
  EXPECT_TRUE(order->empty());
  a.cancel();
  co_await finish(a);
}

TEST(BoundedSemaphore, ZeroBoundReleaseWithWaiterThrows) {
  Order order;
  run_vt(bounded_zero_with_waiter(&order));
  EXPECT_TRUE(order.empty());
}

// ---- fairness and limits --------------------------------------------------------------------

Coro<void> fifo_order(int permits, Order* arrivals, Order* order) {
  corio::Semaphore sem(permits);
  for (int i = 0; i < permits; ++i) co_await sem.acquire();
  const double delays[] = {0.5, 0.2, 0.9, 0.1, 0.7, 0.3, 0.8, 0.4};
  std::vector<Task<void>> tasks;
  for (int i = 0; i < 8; ++i)
    tasks.push_back(corio::create_task(
        late_taker(&sem, arrivals, order, "t" + std::to_string(i), delays[i], 3)));
  co_await corio::sleep(2s);
  for (int i = 0; i < permits; ++i) sem.release();
  co_await drain(&tasks);
  EXPECT_EQ(co_await free_permits(&sem), permits);
}

TEST(Semaphore, WaitersAcquireInArrivalOrder) {
  for (int permits : {1, 2, 3}) {
    Order arrivals, order;
    run_vt(fifo_order(permits, &arrivals, &order));
    EXPECT_EQ(arrivals, (Order{"t3", "t1", "t5", "t7", "t0", "t4", "t6", "t2"}));
    EXPECT_EQ(order, arrivals) << "permits " << permits;
  }
}

Coro<void> no_barging(Order* order) {
  corio::Semaphore sem(1);
  co_await sem.acquire();
  Task<void> a = corio::create_task(taker(&sem, order, "A", 2));
  co_await corio::sleep(0s);
  Task<void> b = corio::create_task(taker(&sem, order, "B", 0));
  sem.release();
  EXPECT_TRUE(sem.locked()) << "release() with a waiter must hand the permit over";
  co_await sem.acquire();
  order->push_back("main");
  sem.release();
  co_await a;
  co_await b;
  EXPECT_EQ(co_await free_permits(&sem), 1);
}

TEST(Semaphore, ReleaseHandsOffToFirstWaiterWithoutBarging) {
  Order order;
  run_vt(no_barging(&order));
  EXPECT_EQ(order, (Order{"A", "main", "B"}));
}

// The seed example: 100 tasks, Semaphore(10).
Coro<void> hundred_under_ten(Gauge* g, bool varied) {
  corio::Semaphore sem(10);
  std::vector<Task<void>> tasks;
  for (int i = 0; i < 100; ++i)
    tasks.push_back(corio::create_task(limited(&sem, g, varied ? 0.1 * (1 + i % 7) : 1.0)));
  co_await drain(&tasks);
  if (!varied) {
    EXPECT_DOUBLE_EQ(now(), 10.0);  // ten full waves
  }
  EXPECT_EQ(co_await free_permits(&sem), 10);
}

TEST(Semaphore, SeedHundredTasksUnderSemaphoreTen) {
  for (bool varied : {false, true}) {
    Gauge g;
    run_vt(hundred_under_ten(&g, varied));
    EXPECT_EQ(g.max, 10) << "varied " << varied;
    EXPECT_EQ(g.done, 100);
    EXPECT_EQ(g.current, 0);
  }
}

// ---- cancellation: (a) a queued waiter ------------------------------------------------------

Coro<void> cancel_queued(int victim, Order* order) {
  corio::Semaphore sem(1);
  co_await sem.acquire();
  std::vector<Task<void>> tasks = spawn_abc(&sem, order, 1);
  co_await corio::sleep(0s);
  tasks[victim].cancel();
  co_await corio::sleep(0s);
  EXPECT_EQ(end_of(tasks[victim]), End::cancelled);
  EXPECT_TRUE(sem.locked());
  sem.release();
  co_await drain(&tasks);
  EXPECT_EQ(co_await free_permits(&sem), 1);
}

TEST(SemaphoreCancel, QueuedWaiterIsRemovedOthersKeepOrder) {
  expect_queued_cancel_keeps_order(cancel_queued);
}

// ---- cancellation: (b) granted, then cancelled before it ran ----------------------------------

Coro<void> granted_cancel_passes_on(bool scoped, Order* order) {
  corio::Semaphore sem(1);
  co_await sem.acquire();
  Task<void> a =
      corio::create_task(scoped ? scoped_taker(&sem, order, "A", 1) : taker(&sem, order, "A", 1));
  Task<void> b = corio::create_task(taker(&sem, order, "B", 1));
  co_await corio::sleep(0s);
  sem.release();  // the permit goes to A ...
  a.cancel();     // ... who is cancelled before it runs
  std::vector<Task<void>> tasks{a, b};
  co_await drain(&tasks);
  EXPECT_EQ(end_of(a), End::cancelled);
  EXPECT_EQ(end_of(b), End::value);
  EXPECT_EQ(co_await free_permits(&sem), 1) << "a permit was lost or duplicated";
}

TEST(SemaphoreCancel, GrantedWaiterCancelledBeforeRunningPassesPermitOn) {
  for (bool scoped : {false, true}) {
    Order order;
    run_vt(granted_cancel_passes_on(scoped, &order));
    EXPECT_EQ(order, (Order{"B"})) << "scoped " << scoped;
  }
}

Coro<void> granted_cancel_alone() {
  corio::Semaphore sem(1);
  Order order;
  co_await grant_then_cancel(&sem, &order);
  EXPECT_TRUE(order.empty());
  EXPECT_FALSE(sem.locked()) << "permit lost with the cancelled task";
  EXPECT_EQ(co_await free_permits(&sem), 1);
}

TEST(SemaphoreCancel, GrantedWaiterCancelledWithNoOtherWaiterReturnsPermit) {
  run_vt(granted_cancel_alone());
}

// Two releases grant A and B; A is cancelled before it runs: B and C get the
// two permits.
Coro<void> two_grants_one_cancelled(Order* order) {
  corio::Semaphore sem(0);
  std::vector<Task<void>> tasks = spawn_abc(&sem, order, 2);
  co_await corio::sleep(0s);
  sem.release();
  sem.release();
  tasks[0].cancel();
  co_await drain(&tasks);
  EXPECT_EQ(end_of(tasks[0]), End::cancelled);
  EXPECT_EQ(end_of(tasks[1]), End::value);
  EXPECT_EQ(end_of(tasks[2]), End::value);
  EXPECT_EQ(co_await free_permits(&sem), 2);
}

TEST(SemaphoreCancel, OneOfTwoGrantedWaitersCancelled) {
  Order order;
  run_vt(two_grants_one_cancelled(&order));
  EXPECT_EQ(order, (Order{"B", "C"}));
}

// The abandoned permit of a BoundedSemaphore returns without tripping (or
// escaping) the bound.
Coro<void> bounded_granted_cancel() {
  corio::BoundedSemaphore sem(1);
  Order order;
  co_await grant_then_cancel(&sem, &order);
  EXPECT_TRUE(order.empty());
  EXPECT_EQ(co_await free_permits(&sem), 1);
  EXPECT_THROW(sem.release(), corio::ValueError);
}

TEST(SemaphoreCancel, BoundedGrantedWaiterCancelledReturnsPermitWithinBound) {
  run_vt(bounded_granted_cancel());
}

// ---- cancellation: (c) wait_for() timeouts --------------------------------------------------

// `race`: release_at_deadline(), else timeout_behind_holder().
Coro<void> timed_out_or_raced(bool race, Order* order) {
  corio::Semaphore sem(1);
  if (race)
    co_await release_at_deadline(&sem, order, 3);
  else
    co_await timeout_behind_holder(&sem, order, 3);
  EXPECT_EQ(co_await free_permits(&sem), 1);
}

TEST(SemaphoreCancel, WaitForTimeoutLeavesCountConsistent) {
  Order order;
  run_vt(timed_out_or_raced(false, &order));
  EXPECT_EQ(order, (Order{"B", "B"}));
}

TEST(SemaphoreCancel, WaitForDeadlineAtTheReleaseInstant) {
  Order order;
  run_vt(timed_out_or_raced(true, &order));
  EXPECT_TRUE(order == (Order{"B", "B"}) || order == (Order{"B", "T", "B"})) << order.size();
}

// ---- cancellation: (d) scoped_acquire() guards ----------------------------------------------

Coro<void> guards_released_on_cancel() {
  corio::Semaphore sem(2);
  Gauge g;
  Task<void> h1 = corio::create_task(limited(&sem, &g, 10));
  Task<void> h2 = corio::create_task(limited(&sem, &g, 10));
  Task<void> w = corio::create_task(limited(&sem, &g, 1));
  co_await corio::sleep(0.5s);
  EXPECT_EQ(g.current, 2);
  h1.cancel();
  co_await w;
  EXPECT_DOUBLE_EQ(now(), 1.5);  // W got h1's permit at 0.5
  EXPECT_EQ(end_of(h1), End::cancelled);
  h2.cancel();
  co_await finish(h2);
  EXPECT_EQ(g.max, 2);
  EXPECT_EQ(co_await free_permits(&sem), 2);
}

TEST(SemaphoreCancel, CancellingGuardHoldersReleasesPermits) {
  run_vt(guards_released_on_cancel());
}

Coro<void> guard_move() {
  corio::Semaphore sem(1);
  {
    corio::Semaphore::Guard outer = co_await sem.scoped_acquire();
    EXPECT_TRUE(sem.locked());
    { corio::Semaphore::Guard inner = std::move(outer); }
    EXPECT_FALSE(sem.locked());
  }  // the moved-from guard releases nothing
  EXPECT_EQ(co_await free_permits(&sem), 1);
}

TEST(Semaphore, MovedFromGuardReleasesNothing) { run_vt(guard_move()); }

}  // namespace
}  // namespace corio_sync_test
