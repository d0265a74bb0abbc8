// corio::Semaphore's FIFO order as asyncio 3.13 has it (its test_locks.py
// SemaphoreTests, translated): a waiter handed a permit but not yet run still
// counts, so a newcomer never overtakes it and locked() stays true until it
// has run; cancellations before and after the wake-up keep the order and
// lose no permit. Virtual time.
#include <optional>

#include "sync/sync_support.hpp"

namespace corio_sync_test {
namespace {

using Results = std::vector<int>;

// Acquires, records `tag`, keeps the permit.
template <class S>
Coro<void> take_and_keep(S* sem, Results* out, int tag) {
  co_await sem->acquire();
  out->push_back(tag);
}

// ---- test_acquire_fifo_order_4: a release wakes only as many as it frees ----------------------

Coro<void> record(Results* out, int tag) {
  out->push_back(tag);
  co_return;
}

struct Fifo4 {
  corio::Semaphore sem{0};
  Results result;
  std::optional<Task<void>> t4;
  std::vector<std::string> failures;
  void check(bool ok, const char* what) {
    if (!ok) failures.push_back(what);
  }
};

Coro<void> fifo4_c1(Fifo4* s) {
  s->check(s->sem.value() == 0, "c1: value before acquire");
  co_await s->sem.acquire();
  // Running, it has woken the two that queued behind it with the two
  // permits left.
  s->check(s->sem.value() == 0, "c1: value after acquire");
  s->t4 = corio::create_task(record(&s->result, 4));  // runs after c3, not before c2
  s->result.push_back(1);
}

Coro<void> fifo4_c2(Fifo4* s) {
  s->sem.release();
  s->sem.release();
  s->sem.release();
  s->check(s->sem.value() == 2, "c2: value after three releases");
  s->check(s->sem.locked(), "c2: locked while c1 has not run");
  co_await s->sem.acquire();
  s->result.push_back(2);
}

Coro<void> fifo4_c3(Fifo4* s) {
  co_await s->sem.acquire();
  s->check(s->sem.locked(), "c3: locked with no permit left");
  s->result.push_back(3);
}

Coro<void> fifo_order_4(Fifo4* s) {
  std::vector<Task<void>> tasks{corio::create_task(fifo4_c1(s)), corio::create_task(fifo4_c2(s)),
                                corio::create_task(fifo4_c3(s))};
  co_await corio::sleep(0s);
  // All three queued; c1 was handed a permit and has not run yet.
  EXPECT_EQ(s->sem.value(), 2);
  EXPECT_TRUE(s->sem.locked());
  co_await corio::sleep(0s);
  for (Task<void>& t : tasks) co_await t;
  CO_ASSERT(s->t4.has_value());
  co_await *s->t4;
}

TEST(SemaphoreFifo, WokenWaiterIsNotOvertakenByNewcomers) {
  Fifo4 s;
  run_vt(fifo_order_4(&s));
  EXPECT_EQ(s.result, (Results{1, 2, 3, 4}));
  EXPECT_TRUE(s.failures.empty()) << s.failures.front();
}

// ---- test_acquire_fifo_order_2: a release-then-acquire queues behind the woken ---------------

Coro<void> release_and_retake(corio::Semaphore* sem, Results* out) {
  co_await sem->acquire();
  out->push_back(2);
  sem->release();
  co_await sem->acquire();  // c3 was woken first: it goes first
  out->push_back(4);
}

Coro<void> fifo_order_2(Results* out) {
  corio::Semaphore sem(1);
  std::vector<Task<void>> tasks{corio::create_task(take_and_keep(&sem, out, 1)),
                                corio::create_task(release_and_retake(&sem, out)),
                                corio::create_task(take_and_keep(&sem, out, 3))};
  co_await corio::sleep(0s);
  sem.release();
  sem.release();
  for (Task<void>& t : tasks) co_await t;
}

TEST(SemaphoreFifo, ReleaseThenAcquireWaitsBehindTheWokenWaiter) {
  Results out;
  run_vt(fifo_order_2(&out));
  EXPECT_EQ(out, (Results{1, 2, 3, 4}));
}

// ---- test_acquire_fifo_order_3: a cancelled waiter gives up its place ------------------------

Coro<void> fifo_order_3(Results* out) {
  corio::Semaphore sem(0);
  std::vector<Task<void>> tasks;
  for (int tag : {1, 2, 3}) tasks.push_back(corio::create_task(take_and_keep(&sem, out, tag)));
  co_await corio::sleep(0s);
  tasks[0].cancel();
  co_await corio::sleep(0s);
  sem.release();
  sem.release();
  co_await drain(&tasks);
  EXPECT_EQ(end_of(tasks[0]), End::cancelled);
  EXPECT_TRUE(sem.locked());
}

TEST(SemaphoreFifo, CancelledWaiterGivesUpItsPlace) {
  Results out;
  run_vt(fifo_order_3(&out));
  EXPECT_EQ(out, (Results{2, 3}));
}

// ---- test_acquire_fifo_order: turns alternate while each holds across a sleep ----------------

Coro<void> two_turns(corio::Semaphore* sem, Order* order, std::string tag) {
  for (const char* turn : {"_1", "_2"}) {
    co_await sem->acquire();
    order->push_back(tag + turn);
    co_await corio::sleep(0.01s);
    sem->release();
  }
}

Coro<void> fifo_order(Order* order) {
  corio::Semaphore sem(1);
  std::vector<Task<void>> tasks;
  for (const char* tag : {"c1", "c2", "c3"})
    tasks.push_back(corio::create_task(two_turns(&sem, order, tag)));
  for (Task<void>& t : tasks) co_await t;
  EXPECT_FALSE(sem.locked());
}

TEST(SemaphoreFifo, TurnsAlternateInArrivalOrder) {
  Order order;
  run_vt(fifo_order(&order));
  EXPECT_EQ(order, (Order{"c1_1", "c2_1", "c3_1", "c1_2", "c2_2", "c3_2"}));
}

// ---- test_acquire: two releases wake two of three waiters, in order ---------------------------

template <class S>
Coro<void> acquire_three(Results* out) {
  S sem(3);
  co_await sem.acquire();
  co_await sem.acquire();
  EXPECT_FALSE(sem.locked());
  std::vector<Task<void>> tasks;
  for (int tag : {1, 2, 3}) tasks.push_back(corio::create_task(take_and_keep(&sem, out, tag)));
  co_await corio::sleep(0s);
  EXPECT_EQ(*out, (Results{1}));
  EXPECT_TRUE(sem.locked());
  EXPECT_EQ(sem.value(), 0);
  tasks.push_back(corio::create_task(take_and_keep(&sem, out, 4)));
  sem.release();
  sem.release();
  EXPECT_EQ(sem.value(), 0) << "both permits went to the waiters";
  co_await corio::sleep(0s);
  EXPECT_EQ(*out, (Results{1, 2, 3})) << "the newcomer 4 overtook a woken waiter";
  EXPECT_TRUE(sem.locked());
  EXPECT_FALSE(tasks[3].done());
  sem.release();
  for (Task<void>& t : tasks) co_await t;
}

TEST(SemaphoreFifo, ReleasesWakeTheQueuedBeforeANewcomer) {
  Results out;
  run_vt(acquire_three<corio::Semaphore>(&out));
  EXPECT_EQ(out, (Results{1, 2, 3, 4}));
}

TEST(SemaphoreFifo, BoundedSemaphoreWakesInTheSameOrder) {
  Results out;
  run_vt(acquire_three<corio::BoundedSemaphore>(&out));
  EXPECT_EQ(out, (Results{1, 2, 3, 4}));
}

// ---- test_acquire_hang, test_acquire_cancel_before_awoken --------------------------------------

// Cancels the first `cancelled` of four queued waiters, then releases once:
// the permit goes to the first waiter left, the rest keep waiting.
Coro<void> cancel_before_awoken(int cancelled, Results* out) {
  corio::Semaphore sem(0);
  std::vector<Task<void>> tasks;
  for (int tag : {1, 2, 3, 4}) tasks.push_back(corio::create_task(take_and_keep(&sem, out, tag)));
  co_await corio::sleep(0s);
  for (int i = 0; i < cancelled; ++i) tasks[i].cancel();
  sem.release();
  co_await yield_n(2);
  EXPECT_TRUE(sem.locked());
  EXPECT_TRUE(tasks[cancelled].done());
  EXPECT_FALSE(tasks[cancelled + 1].done());
  for (Task<void>& t : tasks) t.cancel();
  co_await drain(&tasks);
}

TEST(SemaphoreFifo, ReleaseAfterCancellingQueuedWaitersWakesTheNext) {
  for (int cancelled : {1, 2}) {
    Results out;
    run_vt(cancel_before_awoken(cancelled, &out));
    EXPECT_EQ(out, (Results{cancelled + 1})) << "cancelled " << cancelled;
  }
}

// ---- test_acquire_no_hang: a woken waiter cancelled before it runs --------------------------

Coro<void> hold_then_cancel(corio::Semaphore* sem, Task<void>* other) {
  {
    auto permit = co_await sem->scoped_acquire();
    co_await corio::sleep(0s);
  }  // the permit goes to `other`, which has not run yet ...
  other->cancel();  // ... and never will with it
}

Coro<void> never_enters(corio::Semaphore* sem, Results* out) {
  auto permit = co_await sem->scoped_acquire();
  out->push_back(2);
}

Coro<void> no_hang(Results* out) {
  corio::Semaphore sem(1);
  Task<void> t2;
  Task<void> t1 = corio::create_task(hold_then_cancel(&sem, &t2));
  t2 = corio::create_task(never_enters(&sem, out));
  std::vector<Task<void>> tasks{t1, t2};
  co_await drain(&tasks);
  EXPECT_EQ(end_of(t1), End::value);
  EXPECT_EQ(end_of(t2), End::cancelled);
  EXPECT_FALSE(sem.locked()) << "the cancelled waiter kept the permit";
  co_await corio::wait_for(sem.acquire(), 1s);
  EXPECT_DOUBLE_EQ(now(), 0.0);
}

TEST(SemaphoreFifo, WokenWaiterCancelledBeforeRunningDoesNotHang) {
  Results out;
  run_vt(no_hang(&out));
  EXPECT_TRUE(out.empty());
}

// ---- the woken waiter's permit, cancelled, goes to the one that queued behind it ------------

Coro<void> abandoned_permit_to_newcomer(Results* out) {
  corio::Semaphore sem(1);
  co_await sem.acquire();
  Task<void> a = corio::create_task(take_and_keep(&sem, out, 1));
  co_await corio::sleep(0s);
  Task<void> b = corio::create_task(take_and_keep(&sem, out, 2));  // its first step runs first
  sem.release();  // to A, who has not run
  EXPECT_TRUE(sem.locked());
  a.cancel();  // B queues behind A, then A runs cancelled and passes the permit on
  std::vector<Task<void>> tasks{a, b};
  co_await drain(&tasks);
  EXPECT_EQ(end_of(a), End::cancelled);
  EXPECT_EQ(end_of(b), End::value);
  EXPECT_TRUE(sem.locked());
  EXPECT_EQ(sem.value(), 0);
}

TEST(SemaphoreFifo, AbandonedPermitGoesToTheWaiterBehind) {
  Results out;
  run_vt(abandoned_permit_to_newcomer(&out));
  EXPECT_EQ(out, (Results{2}));
}

}  // namespace
}  // namespace corio_sync_test
