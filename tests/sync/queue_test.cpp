// corio::Queue, LifoQueue and PriorityQueue: the order each hands items out,
// move-only items, the _nowait forms, maxsize back-pressure, the no-yield
// fast paths, FIFO fairness among getters and among putters (a woken waiter's
// item or slot cannot be taken by a later arrival), and cancellation:
// waiters cancelled while queued, woken waiters cancelled before they ran
// (their item or slot passes on) and wait_for() timeouts. Virtual time.
// Shutdown, task_done()/join(), a cancellation storm and a pipeline:
// queue_shutdown_test.cpp.
#include <cstdlib>
#include <memory>
#include <type_traits>

#include "sync/sync_support.hpp"
#include <corio/queue.hpp>

namespace corio_sync_test {
namespace {

using IntQueue = corio::Queue<int>;
using Ptr = std::unique_ptr<int>;

// An awaiter is movable until awaited (wait_for carries it into its frame),
// never copyable, and get() returns the item itself.
using PtrQueue = corio::Queue<Ptr>;
using PtrGet = decltype(std::declval<PtrQueue&>().get());
using PtrPut = decltype(std::declval<PtrQueue&>().put(nullptr));
static_assert(std::is_move_constructible_v<PtrGet> && !std::is_copy_constructible_v<PtrGet>);
static_assert(std::is_move_constructible_v<PtrPut> && !std::is_copy_constructible_v<PtrPut>);
static_assert(std::is_same_v<corio::detail::result_t<PtrGet>, Ptr>);
static_assert(!std::is_copy_constructible_v<IntQueue> && !std::is_move_constructible_v<IntQueue>);

// Gets one item and records "name:item".
template <class Q>
Coro<void> getter(Q* q, Order* log, std::string name) {
  int v = co_await q->get();
  log->push_back(name + ":" + std::to_string(v));
}

// Puts v, then records name.
template <class Q>
Coro<void> putter(Q* q, Order* log, std::string name, int v) {
  co_await q->put(v);
  log->push_back(name);
}

// Sleeps `delay`, records name in *arrivals, then as getter() or putter().
Coro<void> late_getter(IntQueue* q, Order* arrivals, Order* log, std::string name, double delay) {
  co_await corio::sleep(Secs(delay));
  arrivals->push_back(name);
  co_await getter(q, log, name);
}
Coro<void> late_putter(IntQueue* q, Order* arrivals, std::string name, int v, double delay) {
  co_await corio::sleep(Secs(delay));
  arrivals->push_back(name);
  co_await q->put(v);
}

// Everything get_nowait() hands out, in order.
template <class Q>
std::vector<int> take_all(Q* q) {
  std::vector<int> out;
  while (!q->empty()) out.push_back(q->get_nowait());
  return out;
}

template <class Q>
Coro<std::vector<int>> put_then_get(Q* q, std::vector<int> in) {
  for (int v : in) co_await q->put(v);
  std::vector<int> out;
  for (std::size_t i = 0; i < in.size(); ++i) out.push_back(co_await q->get());
  co_return out;
}

// ---- the order of items ---------------------------------------------------------------------

TEST(Queue, FirstInFirstOut) {
  IntQueue q;  // constructed outside any loop, as asyncio allows
  EXPECT_EQ(run_vt(put_then_get(&q, {3, 1, 2, 5, 4})), (std::vector<int>{3, 1, 2, 5, 4}));
  for (int v : {7, 8, 9}) q.put_nowait(v);
  EXPECT_EQ(q.qsize(), 3u);
  EXPECT_EQ(take_all(&q), (std::vector<int>{7, 8, 9}));
}

TEST(LifoQueue, LastInFirstOut) {
  corio::LifoQueue<int> q;
  EXPECT_EQ(run_vt(put_then_get(&q, {3, 1, 2, 5, 4})), (std::vector<int>{4, 5, 2, 1, 3}));
  for (int v : {7, 8, 9}) q.put_nowait(v);
  EXPECT_EQ(take_all(&q), (std::vector<int>{9, 8, 7}));
}

TEST(PriorityQueue, SmallestFirstLikeHeapq) {
  corio::PriorityQueue<int> q;
  EXPECT_EQ(run_vt(put_then_get(&q, {3, 1, 2, 5, 4, 1})), (std::vector<int>{1, 1, 2, 3, 4, 5}));
  // Python's (priority, data) tuples.
  corio::PriorityQueue<std::pair<int, std::string>> jobs;
  jobs.put_nowait({2, "code"});
  jobs.put_nowait({1, "plan"});
  jobs.put_nowait({3, "test"});
  EXPECT_EQ(jobs.get_nowait().second, "plan");
  EXPECT_EQ(jobs.get_nowait().second, "code");
  EXPECT_EQ(jobs.get_nowait().second, "test");
}

bool by_abs(int a, int b) { return std::abs(a) < std::abs(b); }

TEST(PriorityQueue, CustomCompare) {
  corio::PriorityQueue<int, std::greater<int>> max_first;
  EXPECT_EQ(run_vt(put_then_get(&max_first, {3, 1, 2, 5, 4})), (std::vector<int>{5, 4, 3, 2, 1}));
  corio::PriorityQueue<int, bool (*)(int, int)> q(0, &by_abs);
  for (int v : {-3, 1, 4, -2}) q.put_nowait(v);
  EXPECT_EQ(take_all(&q), (std::vector<int>{1, -2, -3, 4}));
}

// The item a woken getter gets is chosen when it runs: the best one then.
template <class Q>
Coro<void> best_item_at_resume(Order* log) {
  Q q;
  Task<void> a = corio::create_task(getter(&q, log, "A"));
  co_await corio::sleep(0s);
  q.put_nowait(5);  // reserved for A ...
  q.put_nowait(1);  // ... who gets this one: the newest, or the smallest
  co_await a;
  EXPECT_EQ(take_all(&q), (std::vector<int>{5}));
}

TEST(PriorityQueue, WokenGetterTakesBestItemWhenItRuns) {
  Order log;
  run_vt(best_item_at_resume<corio::PriorityQueue<int>>(&log));
  run_vt(best_item_at_resume<corio::LifoQueue<int>>(&log));
  EXPECT_EQ(log, (Order{"A:1", "A:1"}));
}

// ---- move-only items ------------------------------------------------------------------------

Coro<void> ptr_getter(corio::Queue<Ptr>* q, int* out) { *out = *co_await q->get(); }
template <class Q>
Coro<void> put_ptr(Q* q, Ptr v) {
  co_await q->put(std::move(v));
}

template <template <class...> class Q>
Coro<void> move_only_round_trip() {
  Q<Ptr> q(1);
  q.put_nowait(std::make_unique<int>(1));
  Ptr p = q.get_nowait();
  EXPECT_EQ(*p, 1);
  co_await q.put(std::move(p));
  Ptr full = std::make_unique<int>(2);
  EXPECT_THROW(q.put_nowait(std::move(full)), corio::QueueFull);
  CO_ASSERT(full);  // a failed put_nowait() does not move from its argument
  Task<void> waiting_putter = corio::create_task(put_ptr(&q, std::move(full)));  // waits: full
  co_await corio::sleep(0s);
  EXPECT_EQ(*co_await q.get(), 1);  // frees the slot for the putter
  co_await waiting_putter;
  EXPECT_EQ(*co_await q.get(), 2);
}

TEST(QueueMoveOnly, UniquePtrThroughAllThreeKinds) {
  run_vt(move_only_round_trip<corio::Queue>());
  run_vt(move_only_round_trip<corio::LifoQueue>());
  run_vt(move_only_round_trip<corio::PriorityQueue>());
}

Coro<void> move_only_to_waiting_getter() {
  corio::Queue<Ptr> q;
  int got = 0;
  Task<void> g = corio::create_task(ptr_getter(&q, &got));
  co_await corio::sleep(0s);
  co_await q.put(std::make_unique<int>(42));
  co_await g;
  EXPECT_EQ(got, 42);
}

TEST(QueueMoveOnly, ReservedItemMovesToWaitingGetter) { run_vt(move_only_to_waiting_getter()); }

// ---- the _nowait forms, sizes --------------------------------------------------------------

TEST(Queue, NowaitFailuresLeaveQueueUnchanged) {
  IntQueue q(2);
  EXPECT_EQ(q.maxsize(), 2u);
  EXPECT_THROW(q.get_nowait(), corio::QueueEmpty);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.qsize(), 0u);
  q.put_nowait(1);
  EXPECT_FALSE(q.full());
  q.put_nowait(2);
  EXPECT_TRUE(q.full());
  EXPECT_THROW(q.put_nowait(3), corio::QueueFull);
  EXPECT_EQ(q.qsize(), 2u);
  EXPECT_EQ(take_all(&q), (std::vector<int>{1, 2}));
  EXPECT_THROW(q.get_nowait(), corio::QueueEmpty);
  EXPECT_FALSE(q.full());
}

TEST(Queue, MaxsizeZeroIsUnbounded) {
  IntQueue q;
  EXPECT_EQ(q.maxsize(), 0u);
  for (int i = 0; i < 10000; ++i) q.put_nowait(i);
  EXPECT_FALSE(q.full());
  EXPECT_EQ(q.qsize(), 10000u);
}

// ---- fast paths: no yield -------------------------------------------------------------------

Coro<void> fast_paths_do_not_yield() {
  IntQueue q(2);
  bool ran = false;
  Task<int> other = corio::create_task(mark_started(&ran, 1));  // runs at our first yield
  co_await q.put(1);
  co_await q.put(2);
  EXPECT_EQ(co_await q.get(), 1);
  EXPECT_EQ(co_await q.get(), 2);
  EXPECT_FALSE(ran) << "get() of an available item or put() with room suspended";
  co_await other;
}

TEST(Queue, GetOfAvailableItemAndPutWithRoomDoNotYield) { run_vt(fast_paths_do_not_yield()); }

// ---- back-pressure --------------------------------------------------------------------------

Coro<void> producer(IntQueue* q, int n, std::vector<double>* put_times) {
  for (int i = 0; i < n; ++i) {
    co_await q->put(i);
    put_times->push_back(now());
  }
}

Coro<void> back_pressure() {
  IntQueue q(2);
  std::vector<double> put_times;
  Task<void> p = corio::create_task(producer(&q, 5, &put_times));
  co_await corio::sleep(1s);
  EXPECT_TRUE(q.full());
  EXPECT_EQ(q.qsize(), 2u);
  EXPECT_EQ(put_times.size(), 2u) << "put() did not wait on a full queue";
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(co_await q.get(), i);
    co_await corio::sleep(1s);
  }
  co_await p;
  expect_times(put_times, {0, 0, 1, 2, 3});
}

TEST(Queue, PutWaitsWhileFullAndResumesAfterGet) { run_vt(back_pressure()); }

// ---- fairness -------------------------------------------------------------------------------

const double kDelays[] = {0.5, 0.2, 0.9, 0.1, 0.7, 0.3, 0.8, 0.4};

Coro<void> getters_in_order(Order* arrivals, Order* log) {
  IntQueue q;
  std::vector<Task<void>> tasks;
  for (int i = 0; i < 8; ++i)
    tasks.push_back(
        corio::create_task(late_getter(&q, arrivals, log, "g" + std::to_string(i), kDelays[i])));
  co_await corio::sleep(2s);
  for (int i = 0; i < 8; ++i) q.put_nowait(i);
  co_await drain(&tasks);
}

TEST(Queue, GettersServedInArrivalOrder) {
  Order arrivals, log;
  run_vt(getters_in_order(&arrivals, &log));
  EXPECT_EQ(arrivals, (Order{"g3", "g1", "g5", "g7", "g0", "g4", "g6", "g2"}));
  EXPECT_EQ(log, (Order{"g3:0", "g1:1", "g5:2", "g7:3", "g0:4", "g4:5", "g6:6", "g2:7"}));
}

// B's first step runs between the put and A's resumption; in asyncio B would
// take the item and A would wait again.
Coro<void> getter_not_barged(Order* log) {
  IntQueue q;
  Task<void> a = corio::create_task(getter(&q, log, "A"));
  co_await corio::sleep(0s);
  Task<void> b = corio::create_task(getter(&q, log, "B"));
  q.put_nowait(1);  // reserved for A
  EXPECT_TRUE(q.empty()) << "the item promised to A is up for grabs";
  EXPECT_THROW(q.get_nowait(), corio::QueueEmpty);
  co_await corio::sleep(0s);
  q.put_nowait(2);
  std::vector<Task<void>> tasks{a, b};
  co_await drain(&tasks);
}

TEST(Queue, WokenGetterIsNotBargedByLaterGetter) {
  Order log;
  run_vt(getter_not_barged(&log));
  EXPECT_EQ(log, (Order{"A:1", "B:2"}));
}

Coro<void> putters_in_order(Order* arrivals) {
  IntQueue q(1);
  q.put_nowait(-1);
  std::vector<Task<void>> tasks;
  for (int i = 0; i < 8; ++i)
    tasks.push_back(
        corio::create_task(late_putter(&q, arrivals, "p" + std::to_string(i), i, kDelays[i])));
  co_await corio::sleep(2s);
  EXPECT_EQ(co_await q.get(), -1);
  std::vector<int> got;
  for (int i = 0; i < 8; ++i) got.push_back(co_await q.get());
  EXPECT_EQ(got, (std::vector<int>{3, 1, 5, 7, 0, 4, 6, 2}));  // the arrival order
  co_await drain(&tasks);
}

TEST(Queue, PuttersServedInArrivalOrder) {
  Order arrivals;
  run_vt(putters_in_order(&arrivals));
  EXPECT_EQ(arrivals, (Order{"p3", "p1", "p5", "p7", "p0", "p4", "p6", "p2"}));
}

Coro<void> putter_not_barged(Order* log) {
  IntQueue q(1);
  q.put_nowait(0);
  Task<void> p = corio::create_task(putter(&q, log, "P", 1));
  co_await corio::sleep(0s);
  Task<void> r = corio::create_task(putter(&q, log, "R", 2));
  EXPECT_EQ(q.get_nowait(), 0);  // the slot goes to P
  EXPECT_TRUE(q.full()) << "the slot promised to P is up for grabs";
  EXPECT_THROW(q.put_nowait(9), corio::QueueFull);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(co_await q.get(), 1);
  EXPECT_EQ(co_await q.get(), 2);
  std::vector<Task<void>> tasks{p, r};
  co_await drain(&tasks);
}

TEST(Queue, WokenPutterIsNotBargedByLaterPutter) {
  Order log;
  run_vt(putter_not_barged(&log));
  EXPECT_EQ(log, (Order{"P", "R"}));
}

// ---- cancellation: waiters still queued -----------------------------------------------------

Coro<void> cancel_queued_getter(int victim, Order* log) {
  IntQueue q;
  std::vector<Task<void>> tasks;
  for (const char* n : {"A", "B", "C"}) tasks.push_back(corio::create_task(getter(&q, log, n)));
  co_await corio::sleep(0s);
  tasks[victim].cancel();
  co_await corio::sleep(0s);
  EXPECT_EQ(end_of(tasks[victim]), End::cancelled);
  q.put_nowait(1);
  q.put_nowait(2);
  co_await drain(&tasks);
  EXPECT_TRUE(q.empty());
}

TEST(QueueCancel, QueuedGetterCancelledNextPutGoesToNextGetter) {
  const Order want[] = {{"B:1", "C:2"}, {"A:1", "C:2"}, {"A:1", "B:2"}};
  for (int victim = 0; victim < 3; ++victim) {
    Order log;
    run_vt(cancel_queued_getter(victim, &log));
    EXPECT_EQ(log, want[victim]) << "victim " << victim;
  }
}

Coro<void> cancel_queued_putter(Order* log) {
  IntQueue q(1);
  q.put_nowait(0);
  Task<void> p = corio::create_task(putter(&q, log, "P", 1));
  Task<void> r = corio::create_task(putter(&q, log, "R", 2));
  co_await corio::sleep(0s);
  p.cancel();
  co_await finish(p);
  EXPECT_EQ(end_of(p), End::cancelled);
  EXPECT_EQ(co_await q.get(), 0);
  EXPECT_EQ(co_await q.get(), 2) << "the cancelled putter's item was put";
  co_await r;
  EXPECT_TRUE(q.empty());
}

TEST(QueueCancel, QueuedPutterCancelledItsItemIsNotPut) {
  Order log;
  run_vt(cancel_queued_putter(&log));
  EXPECT_EQ(log, (Order{"R"}));
}

// ---- cancellation: woken with an item or slot, cancelled before running ----------------------

// A, B and C wait; two puts wake A and B; A is cancelled before it runs.
Coro<void> woken_getter_cancelled(Order* log) {
  IntQueue q;
  std::vector<Task<void>> tasks;
  for (const char* n : {"A", "B", "C"}) tasks.push_back(corio::create_task(getter(&q, log, n)));
  co_await corio::sleep(0s);
  q.put_nowait(1);
  q.put_nowait(2);
  tasks[0].cancel();
  co_await drain(&tasks);
  EXPECT_EQ(end_of(tasks[0]), End::cancelled);
  EXPECT_TRUE(q.empty());
}

TEST(QueueCancel, WokenGetterCancelledPassesItemToNextGetter) {
  Order log;
  run_vt(woken_getter_cancelled(&log));
  EXPECT_EQ(log, (Order{"B:1", "C:2"}));
}

Coro<void> woken_getter_cancelled_alone(Order* log) {
  IntQueue q;
  Task<void> a = corio::create_task(getter(&q, log, "A"));
  co_await corio::sleep(0s);
  q.put_nowait(7);
  a.cancel();
  co_await finish(a);
  EXPECT_EQ(end_of(a), End::cancelled);
  EXPECT_EQ(q.qsize(), 1u) << "the item went with the cancelled getter";
  bool ran = false;
  Task<int> other = corio::create_task(mark_started(&ran, 1));
  EXPECT_EQ(co_await q.get(), 7);
  EXPECT_FALSE(ran) << "the item left behind is still reserved";
  co_await other;
}

TEST(QueueCancel, WokenGetterCancelledAloneLeavesItemInQueue) {
  Order log;
  run_vt(woken_getter_cancelled_alone(&log));
  EXPECT_TRUE(log.empty());
}

// P and R wait on a full queue; a get frees the slot for P, who is cancelled
// before it runs. With R there the slot passes to R, else it is free.
Coro<void> woken_putter_cancelled(bool with_r, Order* log) {
  IntQueue q(1);
  q.put_nowait(0);
  std::vector<Task<void>> tasks{corio::create_task(putter(&q, log, "P", 1))};
  if (with_r) tasks.push_back(corio::create_task(putter(&q, log, "R", 2)));
  co_await corio::sleep(0s);
  EXPECT_EQ(q.get_nowait(), 0);
  tasks[0].cancel();
  co_await drain(&tasks);
  EXPECT_EQ(end_of(tasks[0]), End::cancelled);
  if (!with_r) {
    EXPECT_FALSE(q.full()) << "the slot went with the cancelled putter";
    q.put_nowait(3);
  }
  EXPECT_EQ(take_all(&q), (std::vector<int>{with_r ? 2 : 3}));
}

TEST(QueueCancel, WokenPutterCancelledPassesSlotOnAndItsItemIsNotPut) {
  for (bool with_r : {true, false}) {
    Order log;
    run_vt(woken_putter_cancelled(with_r, &log));
    EXPECT_EQ(log, with_r ? Order{"R"} : Order{}) << "with R " << with_r;
  }
}

// ---- cancellation: wait_for() timeouts ------------------------------------------------------

Coro<void> get_timeouts() {
  corio::Queue<Ptr> q;
  End end = End::none;
  co_await capture(corio::wait_for(q.get(), 1s), &end);
  EXPECT_EQ(end, End::timeout);
  EXPECT_DOUBLE_EQ(now(), 1.0);
  q.put_nowait(std::make_unique<int>(5));
  EXPECT_EQ(q.qsize(), 1u) << "the item went to the timed-out getter";
  Ptr p = co_await corio::wait_for(q.get(), 1s);
  EXPECT_EQ(*p, 5);
  corio::get_running_loop().call_later(0.5s, [&q] { q.put_nowait(std::make_unique<int>(6)); });
  p = co_await corio::wait_for(q.get(), 1s);  // delivered before the deadline
  EXPECT_EQ(*p, 6);
  EXPECT_DOUBLE_EQ(now(), 1.5);
  EXPECT_TRUE(q.empty());
}

TEST(QueueCancel, WaitForGetTimeoutLeavesQueueConsistent) { run_vt(get_timeouts()); }

Coro<void> put_timeout() {
  IntQueue q(1);
  q.put_nowait(0);
  End end = End::none;
  co_await capture(corio::wait_for(q.put(9), 1s), &end);
  EXPECT_EQ(end, End::timeout);
  EXPECT_EQ(q.qsize(), 1u);
  EXPECT_EQ(q.get_nowait(), 0);
  EXPECT_FALSE(q.full()) << "the timed-out putter kept the slot";
  co_await corio::wait_for(q.put(1), 1s);
  EXPECT_EQ(take_all(&q), (std::vector<int>{1}));
}

TEST(QueueCancel, WaitForPutTimeoutDropsItsItemAndLeavesQueueConsistent) { run_vt(put_timeout()); }

}  // namespace
}  // namespace corio_sync_test
