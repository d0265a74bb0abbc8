// corio::Lock: state and misuse, the no-yield fast path, FIFO fairness with
// direct hand-off (no barging), and cancellation: a queued waiter, a waiter
// granted the lock but cancelled before it ran, wait_for() timeouts, and
// scoped_lock() guards unwound by cancellation. Virtual time.
#include "sync/sync_support.hpp"

namespace corio_sync_test {
namespace {

// ---- state ----------------------------------------------------------------------------

Coro<void> basic_state(corio::Lock* lock) {
  EXPECT_FALSE(lock->locked());
  co_await lock->acquire();
  EXPECT_TRUE(lock->locked());
  lock->release();
  EXPECT_FALSE(lock->locked());
  EXPECT_THROW(lock->release(), corio::RuntimeError);
  EXPECT_FALSE(lock->locked());  // the failed release changed nothing
  co_await lock->acquire();
  EXPECT_TRUE(lock->locked());
  lock->release();
}

TEST(Lock, StateAndReleaseOfUnlockedLockThrows) {
  corio::Lock lock;  // constructed outside the loop, as asyncio allows
  EXPECT_FALSE(lock.locked());
  EXPECT_THROW(lock.release(), corio::RuntimeError);
  run_vt(basic_state(&lock));
}

// ---- fast path: no yield --------------------------------------------------------------

Coro<void> acquire_does_not_yield() {
  corio::Lock lock;
  bool ran = false;
  Task<int> other = corio::create_task(mark_started(&ran, 1));  // runs at our first yield
  co_await lock.acquire();
  EXPECT_FALSE(ran) << "acquire() of a free lock suspended";
  lock.release();
  {
    auto guard = co_await lock.scoped_lock();
    EXPECT_FALSE(ran) << "scoped_lock() of a free lock suspended";
    EXPECT_TRUE(lock.locked());
  }
  EXPECT_FALSE(lock.locked());
  co_await corio::sleep(0s);
  EXPECT_TRUE(ran);
  co_await other;
}

TEST(Lock, AcquireOfFreeLockDoesNotYield) { run_vt(acquire_does_not_yield()); }

// ---- fairness -------------------------------------------------------------------------

Coro<void> fifo_order(Order* arrivals, Order* order) {
  corio::Lock lock;
  co_await lock.acquire();
  const double delays[] = {0.5, 0.2, 0.9, 0.1, 0.7, 0.3, 0.8, 0.4};
  std::vector<Task<void>> tasks;
  for (int i = 0; i < 8; ++i)
    tasks.push_back(corio::create_task(
        late_taker(&lock, arrivals, order, "t" + std::to_string(i), delays[i], 1)));
  co_await corio::sleep(2s);
  EXPECT_TRUE(order->empty());
  lock.release();
  co_await drain(&tasks);
  EXPECT_FALSE(lock.locked());
}

TEST(Lock, WaitersAcquireInArrivalOrder) {
  Order arrivals, order;
  run_vt(fifo_order(&arrivals, &order));
  EXPECT_EQ(arrivals, (Order{"t3", "t1", "t5", "t7", "t0", "t4", "t6", "t2"}));
  EXPECT_EQ(order, arrivals);
}

// release() hands the lock to A directly: B (whose first step is already
// queued) and the releaser itself, acquiring again at once, wait behind A.
Coro<void> no_barging(Order* order) {
  corio::Lock lock;
  co_await lock.acquire();
  Task<void> a = corio::create_task(taker(&lock, order, "A", 2));
  co_await corio::sleep(0s);  // A is queued
  Task<void> b = corio::create_task(taker(&lock, order, "B", 0));
  lock.release();
  EXPECT_TRUE(lock.locked()) << "release() with a waiter must hand the lock over";
  co_await lock.acquire();  // must queue behind A (and ahead of B, who arrives later)
  order->push_back("main");
  lock.release();
  co_await a;
  co_await b;
  EXPECT_FALSE(lock.locked());
}

TEST(Lock, ReleaseHandsOffToFirstWaiterWithoutBarging) {
  Order order;
  run_vt(no_barging(&order));
  EXPECT_EQ(order, (Order{"A", "main", "B"}));
}

// Many contenders; the critical section yields in the middle and is never
// entered twice.
Coro<void> exclusive_section(corio::Lock* lock, int* inside, int* counter, int* overlaps) {
  co_await lock->acquire();
  if (++*inside != 1) ++*overlaps;
  const int seen = *counter;
  co_await corio::sleep(0s);
  co_await corio::sleep(Secs(0.001));
  *counter = seen + 1;
  --*inside;
  lock->release();
}

Coro<void> mutual_exclusion() {
  corio::Lock lock;
  int inside = 0, counter = 0, overlaps = 0;
  std::vector<Task<void>> tasks;
  for (int i = 0; i < 50; ++i)
    tasks.push_back(corio::create_task(exclusive_section(&lock, &inside, &counter, &overlaps)));
  co_await drain(&tasks);
  EXPECT_EQ(counter, 50);
  EXPECT_EQ(overlaps, 0);
  EXPECT_FALSE(lock.locked());
}

TEST(Lock, MutualExclusionUnderContention) { run_vt(mutual_exclusion()); }

// ---- cancellation: (a) a queued waiter --------------------------------------------------

Coro<void> cancel_queued(int victim, Order* order) {
  corio::Lock lock;
  co_await lock.acquire();
  std::vector<Task<void>> tasks = spawn_abc(&lock, order, 1);
  co_await corio::sleep(0s);  // all three queued
  tasks[victim].cancel();
  co_await corio::sleep(0s);
  EXPECT_EQ(end_of(tasks[victim]), End::cancelled);
  EXPECT_TRUE(lock.locked());
  lock.release();
  co_await drain(&tasks);
  EXPECT_FALSE(lock.locked());
  co_await lock.acquire();  // free, and no stale waiter blocks the fast path
  lock.release();
}

TEST(LockCancel, QueuedWaiterIsRemovedOthersKeepOrder) {
  expect_queued_cancel_keeps_order(cancel_queued);
}

// ---- cancellation: (b) granted, then cancelled before it ran ----------------------------

Coro<void> granted_cancel_passes_on(bool scoped, Order* order) {
  corio::Lock lock;
  co_await lock.acquire();
  Task<void> a =
      corio::create_task(scoped ? scoped_taker(&lock, order, "A", 1) : taker(&lock, order, "A", 1));
  Task<void> b = corio::create_task(taker(&lock, order, "B", 1));
  co_await corio::sleep(0s);  // A and B queued
  lock.release();             // granted to A ...
  a.cancel();                 // ... who is cancelled before it runs
  std::vector<Task<void>> tasks{a, b};
  co_await drain(&tasks);
  EXPECT_EQ(end_of(a), End::cancelled);
  EXPECT_EQ(end_of(b), End::value);
  EXPECT_FALSE(lock.locked()) << "the lock is held by nobody";
  co_await lock.acquire();
  lock.release();
}

TEST(LockCancel, GrantedWaiterCancelledBeforeRunningPassesLockOn) {
  Order order;
  run_vt(granted_cancel_passes_on(false, &order));
  EXPECT_EQ(order, (Order{"B"}));
}

TEST(LockCancel, GrantedScopedWaiterCancelledBeforeRunningPassesLockOn) {
  Order order;
  run_vt(granted_cancel_passes_on(true, &order));
  EXPECT_EQ(order, (Order{"B"}));
}

// The same race from a plain callback (release and cancel in one loop step).
Coro<void> granted_cancel_in_callback(Order* order) {
  corio::Lock lock;
  co_await lock.acquire();
  Task<void> a = corio::create_task(taker(&lock, order, "A", 1));
  Task<void> b = corio::create_task(taker(&lock, order, "B", 1));
  co_await corio::sleep(0s);
  corio::Lock* l = &lock;
  corio::TaskRef ra = a;
  corio::get_running_loop().call_soon([l, ra]() mutable {
    l->release();
    ra.cancel();
  });
  std::vector<Task<void>> tasks{a, b};
  co_await drain(&tasks);
  EXPECT_EQ(end_of(a), End::cancelled);
  EXPECT_EQ(end_of(b), End::value);
  EXPECT_FALSE(lock.locked());
}

TEST(LockCancel, GrantedWaiterCancelledInSameCallbackPassesLockOn) {
  Order order;
  run_vt(granted_cancel_in_callback(&order));
  EXPECT_EQ(order, (Order{"B"}));
}

// No other waiter: the abandoned lock becomes free.
Coro<void> granted_cancel_alone() {
  corio::Lock lock;
  Order order;
  co_await grant_then_cancel(&lock, &order);
  EXPECT_TRUE(order.empty());
  EXPECT_FALSE(lock.locked()) << "lock lost: held by a cancelled task";
  bool ran = false;
  Task<int> other = corio::create_task(mark_started(&ran, 1));
  co_await lock.acquire();  // free: no suspension
  EXPECT_FALSE(ran);
  lock.release();
  co_await other;
}

TEST(LockCancel, GrantedWaiterCancelledWithNoOtherWaiterFreesLock) {
  run_vt(granted_cancel_alone());
}

// A granted and cancelled, then (after A gave it to B) B cancelled too, before
// B ran: C gets it.
Coro<void> chained_grant_cancels(bool same_step, Order* order) {
  corio::Lock lock;
  co_await lock.acquire();
  std::vector<Task<void>> tasks = spawn_abc(&lock, order, 1);
  co_await corio::sleep(0s);
  lock.release();
  tasks[0].cancel();
  if (!same_step) co_await corio::sleep(0s);  // A ran and passed the lock to B
  tasks[1].cancel();
  co_await drain(&tasks);
  EXPECT_EQ(end_of(tasks[0]), End::cancelled);
  EXPECT_EQ(end_of(tasks[1]), End::cancelled);
  EXPECT_EQ(end_of(tasks[2]), End::value);
  EXPECT_FALSE(lock.locked());
}

TEST(LockCancel, ChainedCancelsOfGrantedWaiters) {
  for (bool same_step : {true, false}) {
    Order order;
    run_vt(chained_grant_cancels(same_step, &order));
    EXPECT_EQ(order, (Order{"C"})) << "same_step " << same_step;
  }
}

// Granted, cancelled, then the cancellation withdrawn (uncancel) before A
// runs: A either still ends cancelled (and the lock passes to B) or takes the
// lock; either way nobody is left holding it.
Coro<void> granted_cancel_uncancel(Order* order) {
  corio::Lock lock;
  co_await lock.acquire();
  Task<void> a = corio::create_task(taker(&lock, order, "A", 1));
  Task<void> b = corio::create_task(taker(&lock, order, "B", 1));
  co_await corio::sleep(0s);
  lock.release();
  a.cancel();
  a.uncancel();
  std::vector<Task<void>> tasks{a, b};
  co_await drain(&tasks);
  EXPECT_EQ(end_of(b), End::value);
  if (end_of(a) == End::cancelled) {
    EXPECT_EQ(*order, (Order{"B"}));
  } else {
    EXPECT_EQ(end_of(a), End::value);
    EXPECT_EQ(*order, (Order{"A", "B"}));
  }
  EXPECT_FALSE(lock.locked());
}

TEST(LockCancel, GrantedWaiterCancelledThenUncancelledStaysConsistent) {
  Order order;
  run_vt(granted_cancel_uncancel(&order));
}

// ---- cancellation: (c) wait_for() timeouts ----------------------------------------------

// `race`: release_at_deadline(), else timeout_behind_holder().
Coro<void> timed_out_or_raced(bool race, Order* order) {
  corio::Lock lock;
  if (race)
    co_await release_at_deadline(&lock, order, 1);
  else
    co_await timeout_behind_holder(&lock, order, 1);
  EXPECT_FALSE(lock.locked());
}

TEST(LockCancel, WaitForTimeoutLeavesLockConsistent) {
  Order order;
  run_vt(timed_out_or_raced(false, &order));
  EXPECT_EQ(order, (Order{"B", "B"}));  // arrival, then acquisition
}

Coro<void> wait_for_in_time(Order* order) {
  corio::Lock lock;
  End end = End::none;
  co_await lock.acquire();
  Task<void> t = corio::create_task(timed_taker(&lock, 1.0, &end, order));
  co_await corio::sleep(0.5s);
  lock.release();
  co_await t;
  EXPECT_EQ(end, End::value);
  EXPECT_FALSE(lock.locked());
  co_await corio::sleep(1s);  // the old deadline passes harmlessly
  EXPECT_FALSE(lock.locked());
  {
    corio::Lock::Guard g = co_await corio::wait_for(lock.scoped_lock(), 1s);
    EXPECT_TRUE(g.owns());
    EXPECT_TRUE(lock.locked());
  }
  EXPECT_FALSE(lock.locked());
}

TEST(LockCancel, WaitForAcquiredInTime) {
  Order order;
  run_vt(wait_for_in_time(&order));
  EXPECT_EQ(order, (Order{"T"}));
}

TEST(LockCancel, WaitForDeadlineAtTheReleaseInstant) {
  Order order;
  run_vt(timed_out_or_raced(true, &order));
  // B arrives, then acquires (with T first if T won the race).
  EXPECT_TRUE(order == (Order{"B", "B"}) || order == (Order{"B", "T", "B"})) << order.size();
}

// ---- cancellation: (d) scoped_lock() guards ---------------------------------------------

Coro<void> scoped_holder(corio::Lock* lock, Log* log) {
  auto guard = co_await lock->scoped_lock();
  log->add("H:got");
  co_await corio::sleep(10s);
  log->add("H:done");
}

Coro<void> guard_released_on_cancel(Log* log) {
  corio::Lock lock;
  Order order;
  Task<void> h = corio::create_task(scoped_holder(&lock, log));
  co_await corio::sleep(0.1s);
  EXPECT_TRUE(lock.locked());
  Task<void> w = corio::create_task(taker(&lock, &order, "W", 0));
  co_await corio::sleep(0.9s);
  h.cancel();
  co_await w;
  EXPECT_DOUBLE_EQ(now(), 1.0);
  EXPECT_EQ(end_of(h), End::cancelled);
  EXPECT_EQ(order, (Order{"W"}));
  EXPECT_FALSE(lock.locked());
}

TEST(LockCancel, CancellingGuardHolderReleasesLock) {
  Log log;
  run_vt(guard_released_on_cancel(&log));
  EXPECT_EQ(log.events, (Order{"H:got"}));
}

// unlock() releases once; the destructor then does nothing, even when another
// task holds the lock by then. A moved-from guard releases nothing.
Coro<void> guard_unlock_and_move() {
  corio::Lock lock;
  Order order;
  {
    auto guard = co_await lock.scoped_lock();
    EXPECT_TRUE(guard.owns());
    guard.unlock();
    EXPECT_FALSE(guard.owns());
    EXPECT_FALSE(lock.locked());
    Task<void> w = corio::create_task(taker(&lock, &order, "W", 5));
    co_await corio::sleep(0s);
    CO_ASSERT(order == (Order{"W"}));
    EXPECT_TRUE(lock.locked());
  }  // guard destroyed while W holds the lock
  EXPECT_TRUE(lock.locked()) << "an unlocked guard released the lock again";
  co_await yield_n(6);
  EXPECT_FALSE(lock.locked());
  {
    corio::Lock::Guard outer = co_await lock.scoped_lock();
    {
      corio::Lock::Guard inner = std::move(outer);
      EXPECT_FALSE(outer.owns());
      EXPECT_TRUE(inner.owns());
    }
    EXPECT_FALSE(lock.locked());
  }
  EXPECT_FALSE(lock.locked());
  co_await lock.acquire();
  lock.release();
}

TEST(Lock, GuardUnlockAndMoveReleaseOnce) { run_vt(guard_unlock_and_move()); }

// Cancelling a task queued in scoped_lock() (no guard yet) releases nothing.
Coro<void> cancel_queued_scoped() {
  corio::Lock lock;
  Order order;
  co_await lock.acquire();
  Task<void> a = corio::create_task(scoped_taker(&lock, &order, "A", 0));
  Task<void> b = corio::create_task(scoped_taker(&lock, &order, "B", 0));
  co_await corio::sleep(0s);
  a.cancel();
  co_await corio::sleep(0s);
  EXPECT_TRUE(lock.locked()) << "a cancelled queued waiter released the lock";
  EXPECT_TRUE(order.empty());
  lock.release();
  co_await b;
  EXPECT_EQ(order, (Order{"B"}));
  EXPECT_FALSE(lock.locked());
}

TEST(LockCancel, CancelledQueuedScopedWaiterReleasesNothing) { run_vt(cancel_queued_scoped()); }

}  // namespace
}  // namespace corio_sync_test
