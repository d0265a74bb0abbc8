// corio::Condition: misuse (wait/notify without the lock), the lock
// forwarding, notify(1) / notify(n) / notify_all in FIFO order, wait()
// returning with the lock re-acquired, wait_for(pred), a shared external
// Lock, and cancellation: a parked waiter, a notified waiter cancelled before
// it ran or while re-acquiring the lock (the lock is held again when
// CancelledError leaves wait(); the notification is passed on), and
// corio::wait_for() timeouts. Virtual time.
#include "sync/sync_support.hpp"
#include <corio/condition.hpp>

namespace corio_sync_test {
namespace {

using corio::Condition;

static_assert(!std::is_copy_constructible_v<Condition> && !std::is_move_constructible_v<Condition>);
static_assert(std::is_same_v<decltype(std::declval<Condition&>().scoped_lock().await_resume()),
                             Condition::Guard>);
static_assert(std::is_same_v<Condition::Guard, corio::Lock::Guard>);

// Takes the lock, waits once, records `name` (checking the lock is held
// again), releases.
Coro<void> waiter(Condition* c, Order* order, std::string name) {
  auto guard = co_await c->scoped_lock();
  co_await c->wait();
  EXPECT_TRUE(c->locked()) << name << " returned from wait() without the lock";
  order->push_back(name);
}

std::vector<Task<void>> spawn_waiters(Condition* c, Order* order, int n) {
  std::vector<Task<void>> tasks;
  for (int i = 0; i < n; ++i)
    tasks.push_back(corio::create_task(waiter(c, order, "W" + std::to_string(i))));
  return tasks;
}

// As waiter(), recording in *held whether the lock was held when
// CancelledError left wait().
Coro<void> observed_waiter(Condition* c, Order* order, std::string name, bool* held) {
  auto guard = co_await c->scoped_lock();
  try {
    co_await c->wait();
  } catch (const corio::CancelledError&) {
    *held = c->locked();
    order->push_back(name + ":cancelled");
    throw;
  }
  order->push_back(name);
}

// notify(n) (n < 0: notify_all) from a task holding the lock.
Coro<void> notify_locked(Condition* c, int n) {
  auto guard = co_await c->scoped_lock();
  if (n < 0)
    c->notify_all();
  else
    c->notify(static_cast<std::size_t>(n));
}

// ---- misuse and forwarding --------------------------------------------------------------

Coro<void> misuse(Condition* c) {
  EXPECT_THROW(co_await c->wait(), corio::RuntimeError);
  EXPECT_THROW(co_await c->wait_for([] { return false; }), corio::RuntimeError);
  EXPECT_FALSE(c->locked());
  EXPECT_THROW(c->notify(), corio::RuntimeError);
  EXPECT_THROW(c->notify_all(), corio::RuntimeError);
}

TEST(Condition, WaitAndNotifyWithoutTheLockThrow) {
  Condition c;  // constructed outside the loop, as asyncio allows
  EXPECT_THROW(c.notify(), corio::RuntimeError);
  EXPECT_THROW(c.notify_all(), corio::RuntimeError);
  run_vt(misuse(&c));
}

Coro<void> forwarding() {
  Condition c;
  EXPECT_FALSE(c.locked());
  co_await c.acquire();
  EXPECT_TRUE(c.locked());
  c.notify();  // nobody waits: a no-op, but legal with the lock held
  c.notify_all();
  c.release();
  EXPECT_FALSE(c.locked());
  EXPECT_THROW(c.release(), corio::RuntimeError);
  {
    Condition::Guard g = co_await c.scoped_lock();
    EXPECT_TRUE(g.owns());
    EXPECT_TRUE(c.locked());
  }
  EXPECT_FALSE(c.locked());
}

TEST(Condition, LockOperationsForwardToTheLock) { run_vt(forwarding()); }

// Two conditions on one Lock: each sees the lock's state, and a waiter on
// one is not woken by notifying the other.
Coro<void> shared_lock(Order* order) {
  corio::Lock lock;
  Condition a(lock), b(lock);
  co_await lock.acquire();
  EXPECT_TRUE(a.locked());
  EXPECT_TRUE(b.locked());
  lock.release();
  Task<void> wa = corio::create_task(waiter(&a, order, "A"));
  Task<void> wb = corio::create_task(waiter(&b, order, "B"));
  co_await corio::sleep(0s);
  EXPECT_FALSE(lock.locked()) << "wait() released the shared lock";
  co_await lock.acquire();
  b.notify();  // the lock taken directly counts as held
  lock.release();
  co_await wb;
  EXPECT_FALSE(wa.done());
  co_await notify_locked(&a, 1);
  co_await wa;
  EXPECT_FALSE(lock.locked());
}

TEST(Condition, ConditionsSharingAnExternalLock) {
  Order order;
  run_vt(shared_lock(&order));
  EXPECT_EQ(order, (Order{"B", "A"}));
}

// ---- notify ---------------------------------------------------------------------------

Coro<void> notify_one_at_a_time(Order* order) {
  Condition c;
  std::vector<Task<void>> tasks = spawn_waiters(&c, order, 3);
  co_await corio::sleep(1s);
  EXPECT_TRUE(order->empty());
  for (std::size_t woken = 1; woken <= 3; ++woken) {
    co_await notify_locked(&c, 1);
    co_await yield_n(2);
    EXPECT_EQ(order->size(), woken) << "notify(1) woke more or less than one";
  }
  co_await drain(&tasks);
  EXPECT_FALSE(c.locked());
}

TEST(Condition, NotifyOneWakesOneWaiterInArrivalOrder) {
  Order order;
  run_vt(notify_one_at_a_time(&order));
  EXPECT_EQ(order, (Order{"W0", "W1", "W2"}));
}

Coro<void> notify_n(Order* order) {
  Condition c;
  std::vector<Task<void>> tasks = spawn_waiters(&c, order, 5);
  co_await corio::sleep(0s);
  co_await notify_locked(&c, 2);
  co_await yield_n(3);
  EXPECT_EQ(*order, (Order{"W0", "W1"}));
  co_await notify_locked(&c, 10);  // more than wait: wakes the rest
  co_await drain(&tasks);
  co_await notify_locked(&c, 1);  // nobody left: a no-op
}

TEST(Condition, NotifyNWakesAtMostNInArrivalOrder) {
  Order order;
  run_vt(notify_n(&order));
  EXPECT_EQ(order, (Order{"W0", "W1", "W2", "W3", "W4"}));
}

Coro<void> notify_all_wakes_all(Order* order) {
  Condition c;
  std::vector<Task<void>> tasks = spawn_waiters(&c, order, 4);
  co_await corio::sleep(1s);
  co_await notify_locked(&c, -1);
  co_await drain(&tasks);
  EXPECT_DOUBLE_EQ(now(), 1.0);
  EXPECT_FALSE(c.locked());
}

TEST(Condition, NotifyAllWakesEveryWaiterInArrivalOrder) {
  Order order;
  run_vt(notify_all_wakes_all(&order));
  EXPECT_EQ(order, (Order{"W0", "W1", "W2", "W3"}));
}

// A notified waiter returns only once the notifier lets go of the lock.
Coro<void> wait_reacquires(Order* order) {
  Condition c;
  Task<void> w = corio::create_task(waiter(&c, order, "W"));
  co_await corio::sleep(0s);
  co_await c.acquire();
  c.notify();
  co_await corio::sleep(2s);
  EXPECT_FALSE(w.done()) << "wait() returned while another task held the lock";
  order->push_back("notifier");
  c.release();
  co_await w;
  EXPECT_DOUBLE_EQ(now(), 2.0);
}

TEST(Condition, WaitReturnsOnlyWithTheLockReacquired) {
  Order order;
  run_vt(wait_reacquires(&order));
  EXPECT_EQ(order, (Order{"notifier", "W"}));
}

// ---- wait_for(pred) ---------------------------------------------------------------------

// Waits until *value reaches `at_least`; records the predicate's value and
// how many times the predicate ran.
Coro<void> value_waiter(Condition* c, const int* value, int at_least, int* got, int* checks) {
  auto guard = co_await c->scoped_lock();
  *got = co_await c->wait_for([c, value, at_least, checks] {
    EXPECT_TRUE(c->locked());
    ++*checks;
    return *value >= at_least ? *value : 0;
  });
}

Coro<void> wait_for_pred() {
  Condition c;
  int value = 0, got = -1, checks = 0;
  Task<void> w = corio::create_task(value_waiter(&c, &value, 3, &got, &checks));
  for (int i = 1; i <= 4; ++i) {
    co_await corio::sleep(1s);
    auto guard = co_await c.scoped_lock();
    value = i;
    c.notify_all();
  }
  co_await w;
  EXPECT_EQ(got, 3);
  EXPECT_EQ(checks, 4);  // once up front, then once per notification until it held
}

TEST(Condition, WaitForReturnsThePredicateValueOnceItHolds) { run_vt(wait_for_pred()); }

// A predicate that already holds returns at once, without yielding.
Coro<void> wait_for_true_at_once() {
  Condition c;
  bool ran = false;
  Task<int> other = corio::create_task(mark_started(&ran, 1));
  auto guard = co_await c.scoped_lock();
  const char* got = co_await c.wait_for([] { return "ready"; });
  EXPECT_STREQ(got, "ready");
  EXPECT_FALSE(ran) << "wait_for() with a true predicate suspended";
  EXPECT_TRUE(c.locked());
  co_await other;
}

TEST(Condition, WaitForWithTruePredicateDoesNotYield) { run_vt(wait_for_true_at_once()); }

// ---- cancellation -----------------------------------------------------------------------

// A parked waiter is cancelled while the canceller holds the lock: it stays
// blocked (re-acquiring) until the lock is released, then CancelledError
// leaves wait() with the lock held; its guard releases it. The other waiters
// are still notified normally.
Coro<void> cancel_parked(Order* order, bool* held) {
  Condition c;
  std::vector<Task<void>> tasks = spawn_waiters(&c, order, 2);
  Task<void> v = corio::create_task(observed_waiter(&c, order, "V", held));
  co_await corio::sleep(0s);
  co_await c.acquire();
  v.cancel();
  co_await corio::sleep(1s);
  EXPECT_FALSE(v.done()) << "CancelledError left wait() without the lock";
  c.notify_all();
  c.release();
  tasks.push_back(v);
  co_await drain(&tasks);
  EXPECT_EQ(end_of(v), End::cancelled);
  EXPECT_EQ(end_of(tasks[0]), End::value);
  EXPECT_EQ(end_of(tasks[1]), End::value);
  EXPECT_FALSE(c.locked());
}

TEST(ConditionCancel, ParkedWaiterReacquiresLockBeforeCancelledError) {
  Order order;
  bool held = false;
  run_vt(cancel_parked(&order, &held));
  EXPECT_TRUE(held);
  // V queued for the lock first (at its cancellation), then W0 and W1.
  EXPECT_EQ(order, (Order{"V:cancelled", "W0", "W1"}));
}

// notify(1) goes to W0, cancelled before it runs: W1 gets the notification
// instead (gh-112202), W2 still waits.
Coro<void> notified_then_cancelled(Order* order) {
  Condition c;
  std::vector<Task<void>> tasks = spawn_waiters(&c, order, 3);
  co_await corio::sleep(0s);
  co_await c.acquire();
  c.notify(1);
  tasks[0].cancel();
  c.release();
  co_await yield_n(4);
  EXPECT_EQ(end_of(tasks[0]), End::cancelled);
  EXPECT_EQ(*order, (Order{"W1"})) << "the notification was lost with the cancelled waiter";
  EXPECT_FALSE(tasks[2].done());
  co_await notify_locked(&c, 1);
  co_await drain(&tasks);
  EXPECT_FALSE(c.locked());
}

TEST(ConditionCancel, NotifiedWaiterCancelledBeforeRunningPassesNotificationOn) {
  Order order;
  run_vt(notified_then_cancelled(&order));
  EXPECT_EQ(order, (Order{"W1", "W2"}));
}

// Alone, a notified-then-cancelled waiter leaves nothing behind: a later
// waiter is not woken by a stale notification.
Coro<void> notified_cancelled_alone(Order* order) {
  Condition c;
  Task<void> a = corio::create_task(waiter(&c, order, "A"));
  co_await corio::sleep(0s);
  co_await notify_locked(&c, 1);
  a.cancel();
  co_await finish(a);
  EXPECT_EQ(end_of(a), End::cancelled);
  EXPECT_FALSE(c.locked());
  Task<void> b = corio::create_task(waiter(&c, order, "B"));
  co_await corio::sleep(1s);
  EXPECT_FALSE(b.done());
  co_await notify_locked(&c, 1);
  co_await b;
}

TEST(ConditionCancel, NotifiedWaiterCancelledAloneLeavesNoStaleNotification) {
  Order order;
  run_vt(notified_cancelled_alone(&order));
  EXPECT_EQ(order, (Order{"B"}));
}

// W0 is notified and runs, but the notifier still holds the lock; W0 is
// cancelled (`cancels` times) while queued for it. CancelledError leaves
// wait() only once W0 holds the lock, and the notification W0 consumed goes
// to W1 (asyncio 3.13). X, queued for the lock behind W0, gets it after W0's
// guard releases it.
Coro<void> cancelled_while_reacquiring(int cancels, Order* order, bool* held) {
  Condition c;
  Task<void> w0 = corio::create_task(observed_waiter(&c, order, "W0", held));
  std::vector<Task<void>> tasks{w0, corio::create_task(waiter(&c, order, "W1"))};
  co_await corio::sleep(0s);
  co_await c.acquire();
  c.notify(1);
  co_await yield_n(2);  // W0 runs and queues for the lock
  tasks.push_back(corio::create_task(taker(&c, order, "X", 0)));
  co_await yield_n(2);
  for (int i = 0; i < cancels; ++i) {
    w0.cancel();
    co_await corio::sleep(1s);
    EXPECT_FALSE(w0.done()) << "CancelledError left wait() without the lock";
  }
  order->push_back("release");
  c.release();
  co_await drain(&tasks);
  EXPECT_EQ(end_of(w0), End::cancelled);
  EXPECT_EQ(end_of(tasks[1]), End::value) << "W0's notification was lost";
  EXPECT_FALSE(c.locked());
}

TEST(ConditionCancel, CancelledWhileReacquiringEndsWithLockHeldAndPassesNotificationOn) {
  for (int cancels : {1, 3}) {
    Order order;
    bool held = false;
    run_vt(cancelled_while_reacquiring(cancels, &order, &held));
    EXPECT_TRUE(held) << "cancels " << cancels;
    // After a cancellation W0 queues for the lock again, now behind X.
    EXPECT_EQ(order, (Order{"release", "X", "W0:cancelled", "W1"})) << "cancels " << cancels;
  }
}

// corio::wait_for(cond.wait(), 1s) times out: wait() re-acquired the lock
// before the TimeoutError, the timed-out waiter is gone from the queue, and
// the condition keeps working.
Coro<void> timed_waiter(Condition* c, End* end, bool* held) {
  co_await c->acquire();
  co_await capture(corio::wait_for(c->wait(), 1s), end);
  *held = c->locked();
  c->release();
}

Coro<void> wait_for_timeout(Order* order) {
  Condition c;
  End end = End::none;
  bool held = false;
  Task<void> t = corio::create_task(timed_waiter(&c, &end, &held));
  Task<void> w = corio::create_task(waiter(&c, order, "W"));
  co_await t;
  EXPECT_EQ(end, End::timeout);
  EXPECT_TRUE(held) << "wait() timed out without re-acquiring the lock";
  EXPECT_DOUBLE_EQ(now(), 1.0);
  EXPECT_FALSE(c.locked());
  co_await notify_locked(&c, 1);  // goes to W, not to the timed-out waiter
  co_await w;
  Task<void> again = corio::create_task(waiter(&c, order, "again"));
  co_await corio::sleep(0s);
  co_await notify_locked(&c, -1);
  co_await again;
}

TEST(ConditionCancel, WaitForTimeoutLeavesConditionUsable) {
  Order order;
  run_vt(wait_for_timeout(&order));
  EXPECT_EQ(order, (Order{"W", "again"}));
}

}  // namespace
}  // namespace corio_sync_test
