// corio::Queue shutdown (asyncio 3.13) and task_done()/join(): puts raise
// QueueShutDown at once, gets once the queue is drained, waiters (also those
// already woken) raise it, shutdown(immediate=true) drops the items, counts
// them done for join() and fails getters that were promised one of them.
// Then whole runs: a storm of cancellations (released by shutdown()) that
// must neither lose nor invent an item, and a producer/consumer pipeline.
// Virtual time.
#include <cstdint>

#include "sync/sync_support.hpp"
#include <corio/queue.hpp>

namespace corio_sync_test {
namespace {

using IntQueue = corio::Queue<int>;

// Gets one item; records "name:item" or "name:QueueShutDown".
Coro<void> getter(IntQueue* q, Order* log, std::string name) {
  std::string got;
  try {
    got = std::to_string(co_await q->get());
  } catch (const corio::QueueShutDown&) {
    got = "QueueShutDown";
  }
  log->push_back(name + ":" + got);
}

// Puts v; records "name:put" or "name:QueueShutDown".
Coro<void> putter(IntQueue* q, Order* log, std::string name, int v) {
  std::string end = "put";
  try {
    co_await q->put(v);
  } catch (const corio::QueueShutDown&) {
    end = "QueueShutDown";
  }
  log->push_back(name + ":" + end);
}

// Records when join() returned.
template <class Q>
Coro<void> joiner(Q* q, double* joined_at) {
  co_await q->join();
  *joined_at = now();
}

// Gets n items, taking `secs` over each before task_done().
Coro<void> worker(IntQueue* q, int n, double secs) {
  for (int i = 0; i < n; ++i) {
    co_await q->get();
    co_await corio::sleep(Secs(secs));
    q->task_done();
  }
}

// Everything get_nowait() hands out, in order.
std::vector<int> take_all(IntQueue* q) {
  std::vector<int> out;
  while (!q->empty()) out.push_back(q->get_nowait());
  return out;
}

// ---- task_done() and join() -----------------------------------------------------------------

Coro<void> join_without_work() {
  IntQueue q;
  bool ran = false;
  Task<int> other = corio::create_task(mark_started(&ran, 1));
  co_await q.join();  // nothing was ever put
  q.put_nowait(1);
  q.get_nowait();
  q.task_done();
  co_await q.join();
  EXPECT_FALSE(ran) << "join() with no unfinished item suspended";
  co_await other;
}

TEST(QueueJoin, JoinWithNoUnfinishedItemDoesNotYield) { run_vt(join_without_work()); }

Coro<void> join_waits_for_task_done() {
  IntQueue q;
  for (int i = 0; i < 3; ++i) q.put_nowait(i);
  double joined_at = -1;
  Task<void> j = corio::create_task(joiner(&q, &joined_at));
  Task<void> w = corio::create_task(worker(&q, 3, 1.0));
  co_await corio::sleep(2.5s);
  EXPECT_TRUE(q.empty());  // all got, one still being worked on
  EXPECT_EQ(joined_at, -1);
  co_await j;
  EXPECT_DOUBLE_EQ(joined_at, 3.0);
  co_await w;
}

TEST(QueueJoin, JoinReturnsOnlyAfterEveryItemIsTaskDone) { run_vt(join_waits_for_task_done()); }

TEST(QueueJoin, TaskDoneTooManyTimesRaisesValueError) {
  IntQueue q;
  try {
    q.task_done();
    ADD_FAILURE() << "no ValueError";
  } catch (const corio::ValueError& e) {
    EXPECT_STREQ(e.what(), "task_done() called too many times");
  }
  q.put_nowait(1);
  q.put_nowait(2);
  q.task_done();
  q.task_done();  // before the items are got: allowed, as in asyncio
  EXPECT_THROW(q.task_done(), corio::ValueError);
  EXPECT_EQ(q.qsize(), 2u);
}

// ---- shutdown(): putting, draining ----------------------------------------------------------

template <class Q>
Coro<void> put_after_shutdown(std::size_t maxsize) {
  Q q(maxsize);
  q.put_nowait(1);
  q.shutdown();
  EXPECT_THROW(q.put_nowait(2), corio::QueueShutDown);
  bool raised = false;
  try {
    co_await q.put(2);
  } catch (const corio::QueueShutDown&) {
    raised = true;
  }
  EXPECT_TRUE(raised) << "maxsize " << maxsize;
  EXPECT_EQ(q.qsize(), 1u);
  q.shutdown();  // again: no effect
  EXPECT_EQ(q.get_nowait(), 1);
}

TEST(QueueShutdown, PutAfterShutdownRaises) {
  for (std::size_t maxsize : {0u, 1u, 5u}) {
    run_vt(put_after_shutdown<IntQueue>(maxsize));
    run_vt(put_after_shutdown<corio::LifoQueue<int>>(maxsize));
    run_vt(put_after_shutdown<corio::PriorityQueue<int>>(maxsize));
  }
}

Coro<void> drain_then_raise(Order* log) {
  IntQueue q;
  for (int i = 1; i <= 3; ++i) q.put_nowait(i);
  q.shutdown();
  EXPECT_EQ(co_await q.get(), 1);
  EXPECT_EQ(q.get_nowait(), 2);
  co_await getter(&q, log, "A");
  co_await getter(&q, log, "B");
  EXPECT_THROW(q.get_nowait(), corio::QueueShutDown);
  double joined_at = -1;
  Task<void> j = corio::create_task(joiner(&q, &joined_at));
  co_await corio::sleep(1s);
  EXPECT_EQ(joined_at, -1) << "a plain shutdown() must not release join()";
  for (int i = 0; i < 3; ++i) q.task_done();
  co_await j;
}

TEST(QueueShutdown, GetDrainsRemainingItemsThenRaises) {
  Order log;
  run_vt(drain_then_raise(&log));
  EXPECT_EQ(log, (Order{"A:3", "B:QueueShutDown"}));
}

// ---- shutdown(): waiters --------------------------------------------------------------------

// A is woken with an item just before shutdown() and still gets it; B and C,
// waiting, raise.
Coro<void> waiting_getters(Order* log) {
  IntQueue q;
  std::vector<Task<void>> tasks;
  for (const char* n : {"A", "B", "C"}) tasks.push_back(corio::create_task(getter(&q, log, n)));
  co_await corio::sleep(0s);
  q.put_nowait(1);
  q.shutdown();
  co_await drain(&tasks);
  EXPECT_THROW(q.get_nowait(), corio::QueueShutDown);
}

TEST(QueueShutdown, WaitingGettersRaiseButAWokenOneGetsItsItem) {
  Order log;
  run_vt(waiting_getters(&log));
  EXPECT_EQ(log, (Order{"A:1", "B:QueueShutDown", "C:QueueShutDown"}));
}

// P is woken with a free slot just before shutdown(): like asyncio, whose
// woken putter re-runs put_nowait(), it raises too.
Coro<void> waiting_putters(Order* log) {
  IntQueue q(1);
  q.put_nowait(0);
  std::vector<Task<void>> tasks;
  for (const char* n : {"P", "R", "S"}) tasks.push_back(corio::create_task(putter(&q, log, n, 1)));
  co_await corio::sleep(0s);
  EXPECT_EQ(q.get_nowait(), 0);  // the slot goes to P
  q.shutdown();
  co_await drain(&tasks);
  EXPECT_TRUE(q.empty());
  EXPECT_FALSE(q.full()) << "P's slot reservation was not released";
}

TEST(QueueShutdown, WaitingPuttersRaiseAlsoOneWokenWithASlot) {
  Order log;
  run_vt(waiting_putters(&log));
  EXPECT_EQ(log, (Order{"P:QueueShutDown", "R:QueueShutDown", "S:QueueShutDown"}));
}

// ---- shutdown(immediate = true) -------------------------------------------------------------

// Three items, one of them got but not task_done(): the other two are
// dropped and count as done, so join() waits for the third only.
Coro<void> immediate_drops_items() {
  IntQueue q;
  for (int i = 0; i < 3; ++i) q.put_nowait(i);
  EXPECT_EQ(q.get_nowait(), 0);
  double joined_at = -1;
  Task<void> j = corio::create_task(joiner(&q, &joined_at));
  co_await corio::sleep(1s);
  q.shutdown(true);
  EXPECT_EQ(q.qsize(), 0u);
  EXPECT_THROW(q.get_nowait(), corio::QueueShutDown);
  co_await corio::sleep(1s);
  EXPECT_EQ(joined_at, -1);
  q.task_done();
  co_await j;
  EXPECT_DOUBLE_EQ(joined_at, 2.0);
  EXPECT_THROW(q.task_done(), corio::ValueError);
}

TEST(QueueShutdown, ImmediateDropsItemsAndCountsThemDone) { run_vt(immediate_drops_items()); }

Coro<void> immediate_releases_join() {
  corio::PriorityQueue<int> q(2);
  q.put_nowait(2);
  q.put_nowait(1);
  double joined_at = -1;
  Task<void> j = corio::create_task(joiner(&q, &joined_at));
  co_await corio::sleep(1s);
  EXPECT_EQ(joined_at, -1);
  q.shutdown(true);
  co_await j;
  EXPECT_DOUBLE_EQ(joined_at, 1.0);
  EXPECT_FALSE(q.full());
}

TEST(QueueShutdown, ImmediateReleasesJoin) { run_vt(immediate_releases_join()); }

// A is woken with an item, which shutdown(true) drops before A runs: A
// raises QueueShutDown -- or, cancelled too, CancelledError -- and no count
// goes astray.
Coro<void> immediate_after_grant(bool cancel_too, Order* log) {
  IntQueue q;
  Task<void> a = corio::create_task(getter(&q, log, "A"));
  Task<void> b = corio::create_task(getter(&q, log, "B"));
  co_await corio::sleep(0s);
  q.put_nowait(1);  // reserved for A
  q.shutdown(true);
  if (cancel_too) a.cancel();
  std::vector<Task<void>> tasks{a, b};
  co_await drain(&tasks);
  EXPECT_EQ(end_of(a), cancel_too ? End::cancelled : End::value);
  EXPECT_EQ(q.qsize(), 0u);
  EXPECT_TRUE(q.empty());
  EXPECT_THROW(q.get_nowait(), corio::QueueShutDown);
  co_await q.join();  // the dropped item counts as done
}

TEST(QueueShutdown, ImmediateDropsItemPromisedToWokenGetter) {
  for (bool cancel_too : {false, true}) {
    Order log;
    run_vt(immediate_after_grant(cancel_too, &log));
    const Order want =
        cancel_too ? Order{"B:QueueShutDown"} : Order{"A:QueueShutDown", "B:QueueShutDown"};
    EXPECT_EQ(log, want) << "cancel too " << cancel_too;
  }
}

// ---- cancellation: nothing lost, nothing invented --------------------------------------------

// Puts v at time `at`; records v only if the put went through.
Coro<void> put_at(IntQueue* q, std::vector<int>* put, int v, double at) {
  co_await corio::sleep(Secs(at));
  co_await q->put(v);
  put->push_back(v);
}
Coro<void> get_at(IntQueue* q, std::vector<int>* got, double at) {
  co_await corio::sleep(Secs(at));
  got->push_back(co_await q->get());
}

// 60 putters and 60 getters on a maxsize-3 queue, a third of each cancelled;
// starts and cancellations on a 0.1s grid, so that many land in the same
// pass as the wake-up they race. Items put = items got + items left.
Coro<void> cancellation_storm(const std::uint32_t seed) {
  IntQueue q(3);
  std::uint32_t state = seed;
  std::vector<int> put, got;
  std::vector<Task<void>> tasks, cancellers;
  auto next = [&state](int n) {  // a small LCG: deterministic, varied
    state = state * 1664525u + 1013904223u;
    return static_cast<int>((state >> 8) % static_cast<std::uint32_t>(n));
  };
  for (int i = 0; i < 120; ++i) {
    const double at = 0.1 * next(30);
    tasks.push_back(corio::create_task(i % 2 ? get_at(&q, &got, at) : put_at(&q, &put, i, at)));
    if (i % 3 == 0)
      cancellers.push_back(corio::create_task(cancel_after(at + 0.1 * next(3), tasks.back())));
  }
  co_await corio::sleep(10s);
  q.shutdown();  // releases whoever still waits
  co_await drain(&tasks);
  co_await drain(&cancellers);
  std::vector<int> left = take_all(&q);
  EXPECT_LE(left.size(), 3u);
  got.insert(got.end(), left.begin(), left.end());
  std::sort(put.begin(), put.end());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(put, got) << "seed " << seed;
  EXPECT_GT(put.size(), 20u);
}

TEST(QueueStorm, CancellationStormNeitherLosesNorInventsItems) {
  for (std::uint32_t seed = 1; seed <= 16; ++seed) run_vt(cancellation_storm(seed));
}

// ---- a pipeline -----------------------------------------------------------------------------

struct Tally {
  long sum = 0;
  int count[3] = {};
  std::size_t max_qsize = 0;
};

Coro<void> produce(IntQueue* q, int n, Tally* t) {
  for (int i = 1; i <= n; ++i) {
    co_await q->put(i);
    t->max_qsize = std::max(t->max_qsize, q->qsize());
    if (i % 7 == 0) co_await corio::sleep(Secs(0.001));
  }
  co_await q->join();
  q->shutdown();  // lets the consumers go
}

// Consumes until the queue is shut down and drained.
Coro<void> consume(IntQueue* q, int id, Tally* t) {
  for (;;) {
    int v = 0;
    try {
      v = co_await q->get();
    } catch (const corio::QueueShutDown&) {
      co_return;
    }
    co_await corio::sleep(Secs(0.001 * (1 + (v + id) % 3)));
    t->sum += v;
    ++t->count[id];
    q->task_done();
  }
}

Coro<void> pipeline(Tally* t) {
  IntQueue q(4);
  std::vector<Task<void>> tasks{corio::create_task(produce(&q, 1000, t))};
  for (int id = 0; id < 3; ++id) tasks.push_back(corio::create_task(consume(&q, id, t)));
  for (Task<void>& task : tasks) co_await task;
  EXPECT_TRUE(q.empty());
}

TEST(QueuePipeline, ThousandItemsThroughMaxsizeFourWithThreeConsumers) {
  Tally t;
  run_vt(pipeline(&t));
  EXPECT_EQ(t.sum, 500500);
  EXPECT_EQ(t.count[0] + t.count[1] + t.count[2], 1000);
  for (int c : t.count) EXPECT_GT(c, 200);
  EXPECT_LE(t.max_qsize, 4u);
}

}  // namespace
}  // namespace corio_sync_test
