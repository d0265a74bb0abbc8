// corio::Event: state, wait() on a set event not yielding, set() waking every
// waiter (in order, even if clear() runs before they do), and cancellation:
// cancelled waiters, queued or already woken, affect nobody else; wait_for()
// timeouts leave the event usable. Virtual time.
#include "sync/sync_support.hpp"

namespace corio_sync_test {
namespace {

// Waits for the event, then records `name`.
Coro<void> waiter(corio::Event* ev, Order* order, std::string name) {
  co_await ev->wait();
  order->push_back(name);
}

std::vector<Task<void>> spawn_waiters(corio::Event* ev, Order* order, int n) {
  std::vector<Task<void>> tasks;
  for (int i = 0; i < n; ++i)
    tasks.push_back(corio::create_task(waiter(ev, order, "W" + std::to_string(i))));
  return tasks;
}

// ---- state ----------------------------------------------------------------------------

TEST(Event, SetClearIsSet) {
  corio::Event ev;  // outside any loop
  EXPECT_FALSE(ev.is_set());
  ev.set();
  EXPECT_TRUE(ev.is_set());
  ev.set();  // idempotent
  EXPECT_TRUE(ev.is_set());
  ev.clear();
  EXPECT_FALSE(ev.is_set());
  ev.clear();
  EXPECT_FALSE(ev.is_set());
}

Coro<void> wait_on_set_does_not_yield() {
  corio::Event ev;
  ev.set();
  bool ran = false;
  Task<int> other = corio::create_task(mark_started(&ran, 1));
  co_await ev.wait();
  co_await ev.wait();
  EXPECT_FALSE(ran) << "wait() on a set event suspended";
  EXPECT_TRUE(ev.is_set());  // wait() does not consume the event
  co_await other;
}

TEST(Event, WaitOnSetEventReturnsWithoutYielding) { run_vt(wait_on_set_does_not_yield()); }

// ---- wake-up ------------------------------------------------------------------------------

Coro<void> set_wakes_all(Order* order) {
  corio::Event ev;
  std::vector<Task<void>> tasks = spawn_waiters(&ev, order, 4);
  co_await corio::sleep(1s);
  EXPECT_TRUE(order->empty());
  ev.set();
  co_await drain(&tasks);
  EXPECT_DOUBLE_EQ(now(), 1.0);
  EXPECT_TRUE(ev.is_set());
}

TEST(Event, SetWakesEveryWaiterInOrder) {
  Order order;
  run_vt(set_wakes_all(&order));
  EXPECT_EQ(order, (Order{"W0", "W1", "W2", "W3"}));
}

// set() then clear() in one step: the waiters still return; a later waiter waits
// for the next set().
Coro<void> set_then_clear(Order* order) {
  corio::Event ev;
  std::vector<Task<void>> tasks = spawn_waiters(&ev, order, 3);
  co_await corio::sleep(0s);
  ev.set();
  ev.clear();
  co_await drain(&tasks);
  EXPECT_EQ(*order, (Order{"W0", "W1", "W2"}));
  EXPECT_FALSE(ev.is_set());
  Task<void> late = corio::create_task(waiter(&ev, order, "late"));
  co_await corio::sleep(1s);
  EXPECT_FALSE(late.done());
  ev.set();
  co_await late;
  EXPECT_DOUBLE_EQ(now(), 1.0);
}

TEST(Event, WaitersWokenBySetReturnEvenIfClearedBeforeTheyRun) {
  Order order;
  run_vt(set_then_clear(&order));
  EXPECT_EQ(order, (Order{"W0", "W1", "W2", "late"}));
}

// Several set/clear rounds with the same waiters looping.
Coro<void> looping_waiter(corio::Event* ev, int rounds, int* woken) {
  for (int i = 0; i < rounds; ++i) {
    co_await ev->wait();
    ++*woken;
    co_await corio::sleep(0.5s);  // the setter clears meanwhile
  }
}

Coro<void> set_clear_rounds() {
  corio::Event ev;
  int woken = 0;
  std::vector<Task<void>> tasks;
  for (int i = 0; i < 3; ++i) tasks.push_back(corio::create_task(looping_waiter(&ev, 4, &woken)));
  for (int r = 1; r <= 4; ++r) {
    co_await corio::sleep(0.1s);
    EXPECT_EQ(woken, 3 * (r - 1));
    ev.set();
    co_await corio::sleep(0.1s);
    EXPECT_EQ(woken, 3 * r);
    ev.clear();
    co_await corio::sleep(0.5s);  // the waiters are back waiting
  }
  co_await drain(&tasks);
  EXPECT_EQ(woken, 12);
}

TEST(Event, RepeatedSetClearRounds) { run_vt(set_clear_rounds()); }

// A waiter that waits again right after waking, on a still-set event, returns at once.
Coro<void> rewait(corio::Event* ev, int* count) {
  co_await ev->wait();
  ++*count;
  co_await ev->wait();
  ++*count;
}

Coro<void> rewait_main() {
  corio::Event ev;
  int count = 0;
  Task<void> t = corio::create_task(rewait(&ev, &count));
  co_await corio::sleep(0s);
  ev.set();
  co_await t;
  EXPECT_EQ(count, 2);
}

TEST(Event, WokenWaiterWaitingAgainOnSetEventReturns) { run_vt(rewait_main()); }

// ---- cancellation -------------------------------------------------------------------------

Coro<void> cancel_queued_waiter(int victim, Order* order) {
  corio::Event ev;
  std::vector<Task<void>> tasks = spawn_waiters(&ev, order, 3);
  co_await corio::sleep(0s);
  tasks[victim].cancel();
  co_await corio::sleep(0s);
  EXPECT_EQ(end_of(tasks[victim]), End::cancelled);
  EXPECT_FALSE(ev.is_set());
  ev.set();
  co_await drain(&tasks);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(end_of(tasks[i]), i == victim ? End::cancelled : End::value) << i;
}

TEST(EventCancel, CancelledQueuedWaiterDoesNotAffectOthers) {
  const Order want[] = {{"W1", "W2"}, {"W0", "W2"}, {"W0", "W1"}};
  for (int victim = 0; victim < 3; ++victim) {
    Order order;
    run_vt(cancel_queued_waiter(victim, &order));
    EXPECT_EQ(order, want[victim]) << "victim " << victim;
  }
}

// set() then cancel() of a woken waiter in one step: it gets CancelledError
// (as in asyncio, the task's cancellation lands at that await); the others
// return.
Coro<void> set_then_cancel(Order* order) {
  corio::Event ev;
  std::vector<Task<void>> tasks = spawn_waiters(&ev, order, 3);
  co_await corio::sleep(0s);
  ev.set();
  tasks[1].cancel();
  co_await drain(&tasks);
  EXPECT_EQ(end_of(tasks[0]), End::value);
  EXPECT_EQ(end_of(tasks[1]), End::cancelled);
  EXPECT_EQ(end_of(tasks[2]), End::value);
  EXPECT_TRUE(ev.is_set());
}

TEST(EventCancel, WokenWaiterCancelledBeforeRunningDoesNotAffectOthers) {
  Order order;
  run_vt(set_then_cancel(&order));
  EXPECT_EQ(order, (Order{"W0", "W2"}));
}

// All waiters cancelled: set() afterwards wakes nobody and nothing breaks;
// new waiters work.
Coro<void> all_cancelled(Order* order) {
  corio::Event ev;
  std::vector<Task<void>> tasks = spawn_waiters(&ev, order, 3);
  co_await corio::sleep(0s);
  for (Task<void>& t : tasks) t.cancel();
  co_await drain(&tasks);
  for (Task<void>& t : tasks) EXPECT_EQ(end_of(t), End::cancelled);
  ev.set();
  co_await corio::sleep(0s);
  ev.clear();
  Task<void> fresh = corio::create_task(waiter(&ev, order, "fresh"));
  co_await corio::sleep(0s);
  EXPECT_FALSE(fresh.done());
  ev.set();
  co_await fresh;
}

TEST(EventCancel, AllWaitersCancelledThenNewWaiter) {
  Order order;
  run_vt(all_cancelled(&order));
  EXPECT_EQ(order, (Order{"fresh"}));
}

// wait_for() on the event times out; a plain waiter queued behind it is still
// woken by a later set().
// `direct`: wait_for(ev.wait(), t), else wait_for on a Coro that waits.
Coro<void> timed_waiter(corio::Event* ev, double secs, End* end, bool direct = true) {
  if (direct)
    co_await capture(corio::wait_for(ev->wait(), Secs(secs)), end);
  else
    co_await capture(corio::wait_for(event_wait(ev), Secs(secs)), end);
}

Coro<void> wait_for_timeout(Order* order) {
  corio::Event ev;
  End e1 = End::none, e2 = End::none;
  Task<void> t1 = corio::create_task(timed_waiter(&ev, 1.0, &e1));
  Task<void> w = corio::create_task(waiter(&ev, order, "W"));
  Task<void> t2 = corio::create_task(timed_waiter(&ev, 3.0, &e2));
  co_await corio::sleep(2s);
  EXPECT_EQ(e1, End::timeout);
  EXPECT_TRUE(order->empty());
  ev.set();
  co_await w;
  co_await t2;
  EXPECT_EQ(e2, End::value);
  EXPECT_DOUBLE_EQ(now(), 2.0);
  co_await corio::sleep(2s);  // t2's old deadline passes harmlessly
}

TEST(EventCancel, WaitForTimeoutLeavesOtherWaitersIntact) {
  Order order;
  run_vt(wait_for_timeout(&order));
  EXPECT_EQ(order, (Order{"W"}));
}

// The set() and the deadline at the same instant: the timed waiter either
// returns or times out; the plain waiter is woken either way.
Coro<void> wait_for_race(Order* order) {
  corio::Event ev;
  End e = End::none;
  corio::Event* p = &ev;
  corio::get_running_loop().call_later(1s, [p] { p->set(); });
  Task<void> t = corio::create_task(timed_waiter(&ev, 1.0, &e, false));
  Task<void> w = corio::create_task(waiter(&ev, order, "W"));
  co_await t;
  co_await w;
  EXPECT_TRUE(e == End::value || e == End::timeout) << e;
  EXPECT_TRUE(ev.is_set());
}

TEST(EventCancel, WaitForDeadlineAtTheSetInstant) {
  Order order;
  run_vt(wait_for_race(&order));
  EXPECT_EQ(order, (Order{"W"}));
}

}  // namespace
}  // namespace corio_sync_test
