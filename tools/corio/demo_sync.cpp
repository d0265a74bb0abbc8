// Sections 7, 9 and 10: the counter race and Lock (examples/counter_race.cpp),
// a producer/consumer pipeline on a bounded Queue
// (examples/producer_consumer.cpp), a Semaphore capping concurrency
// (examples/semaphore_limit.cpp).
#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "demo.hpp"

namespace corio_cli::demo {

namespace {

// ---- 7. the counter race ---------------------------------------------------

constexpr int kRaceTasks = 1000;

corio::Coro<> add_one(int* counter) {
  *counter += 1;  // read and write with no await in between: nothing can interleave
  co_await corio::sleep(Seconds(0));
}

corio::Coro<> add_one_racy(int* counter) {
  const int value = *counter;
  co_await corio::sleep(Seconds(0));  // every other task reads the same value here
  *counter = value + 1;
}

corio::Coro<> add_one_locked(int* counter, corio::Lock* lock) {
  auto guard = co_await lock->scoped_lock();
  const int value = *counter;
  co_await corio::sleep(Seconds(0));  // the others run, but queue at the lock
  *counter = value + 1;
}

// Runs kRaceTasks add(&counter) with gather and returns the counter.
corio::Coro<int> race(corio::Coro<> (*add)(int*)) {
  int counter = 0;
  std::vector<corio::Coro<>> adds;
  adds.reserve(kRaceTasks);
  for (int i = 0; i < kRaceTasks; ++i) adds.push_back(add(&counter));
  co_await corio::gather(std::move(adds));
  co_return counter;
}

// ---- 9. producer/consumer ---------------------------------------------------

struct Pipeline {
  corio::Queue<std::string> queue{3};
  std::vector<std::string> processed;
  int waits = 0;               // put() calls held up by a full queue
  int stopped = 0;             // consumers ended by QueueShutDown
  std::size_t peak_qsize = 0;  // never above maxsize
};

// Reports the put() calls that had to wait for a consumer to free a slot.
corio::Coro<> producer(Demo& demo, Pipeline* p, std::string name, int n, Seconds work) {
  for (int i = 1; i <= n; ++i) {
    std::string item = name + std::to_string(i);
    const std::string label = item;
    const double asked = demo.elapsed();
    co_await p->queue.put(std::move(item));  // waits while the queue is full
    p->peak_qsize = std::max(p->peak_qsize, p->queue.qsize());
    const double waited = demo.elapsed() - asked;
    if (waited >= work.count() / 2) {
      ++p->waits;
      demo.out("{}: put({}) waited {} s for a free slot", name, label, demo.text(Seconds(waited)));
    }
  }
}

corio::Coro<> consumer(Demo& demo, Pipeline* p, std::string name, Seconds work) {
  for (;;) {
    std::string item;
    try {
      item = co_await p->queue.get();
    } catch (const corio::QueueShutDown&) {
      ++p->stopped;
      demo.out("{}: get() raised QueueShutDown, consumer ends", name);
      co_return;
    }
    co_await corio::sleep(work);  // processing
    demo.out("{}: processed {}", name, item);
    p->processed.push_back(std::move(item));
    p->queue.task_done();
  }
}

// ---- 10. a Semaphore ---------------------------------------------------------

struct Crowd {
  int running = 0;
  int peak = 0;
  int acquired = 0;
  int finished = 0;
};

corio::Coro<> limited_fetch(Demo& demo, corio::Semaphore* sem, Crowd* crowd, int id, int total,
                            Seconds delay) {
  auto permit = co_await sem->scoped_acquire();
  ++crowd->running;
  ++crowd->acquired;
  crowd->peak = std::max(crowd->peak, crowd->running);
  if (id % 20 == 0) {
    demo.out("fetch {:3} gets a permit: {} running, {} still waiting", id, crowd->running,
             total - crowd->acquired);
  }
  co_await corio::sleep(delay);
  --crowd->running;
  ++crowd->finished;
}  // the permit goes straight to the longest waiter

}  // namespace

corio::Coro<> lock_section(Demo& demo) {
  demo.explain("Tasks share memory like threads, but a task is only interrupted at a co_await:");
  demo.explain("updates are lost only when an await sits between the read and the write.");
  demo.explain(fmt::format("Each variant runs {} tasks with gather.", kRaceTasks));

  demo.part("(a) counter += 1; co_await sleep(0s);   (the tutorial's example)");
  const int a = co_await race(&add_one);
  demo.out("counter = {}: no await splits the update, so nothing is lost", a);
  demo.expect(a == kRaceTasks, "(a) should count every update");

  demo.part("(b) int v = counter; co_await sleep(0s); counter = v + 1;");
  const int b = co_await race(&add_one_racy);
  demo.out("counter = {}: all {} tasks read the counter before any of them wrote it", b,
           kRaceTasks);
  demo.expect(b < kRaceTasks, "(b) should lose updates");

  demo.part("(c) the same inside auto guard = co_await lock.scoped_lock();");
  corio::Lock lock;
  int c = 0;
  {
    std::vector<corio::Coro<>> adds;
    adds.reserve(kRaceTasks);
    for (int i = 0; i < kRaceTasks; ++i) adds.push_back(add_one_locked(&c, &lock));
    co_await corio::gather(std::move(adds));
  }
  demo.out("counter = {}: one task at a time between read and write", c);
  demo.expect(c == kRaceTasks, "(c) should count every update");
  demo.elapsed_line(fmt::format("{} tasks through the lock, one loop iteration each", kRaceTasks));
}

corio::Coro<> queue_section(Demo& demo) {
  constexpr int kItems = 4;  // per producer
  const Seconds work = demo.t(0.1);
  demo.explain(
      "Producers put() into a bounded Queue(maxsize=3); consumers get(), work, task_done().");
  demo.explain("The producers are fast, the consumers slow: x and y take an item each, 3 more");
  demo.explain("fill the queue, and then put() waits for a free slot (back-pressure). join()");
  demo.explain("returns once every item is task_done(); then shutdown() makes the consumers'");
  demo.explain("get() raise QueueShutDown (asyncio 3.13) and they end.");
  demo.explain(fmt::format("  producers A and B, {} items each; consumers x and y, {} s per item",
                           kItems, demo.text(work)));
  Pipeline p;
  corio::Task<> x = corio::create_task(consumer(demo, &p, "x", work));
  corio::Task<> y = corio::create_task(consumer(demo, &p, "y", work));
  co_await corio::gather(producer(demo, &p, "A", kItems, work),
                         producer(demo, &p, "B", kItems, work));
  demo.out("main: every item is in the queue, co_await q.join()");
  co_await p.queue.join();
  demo.out("main: join() returned, q.shutdown()");
  p.queue.shutdown();
  co_await x;
  co_await y;

  std::vector<std::string> expected;
  for (const char* name : {"A", "B"})
    for (int i = 1; i <= kItems; ++i) expected.push_back(name + std::to_string(i));
  std::vector<std::string> got = p.processed;
  std::sort(got.begin(), got.end());
  demo.out("{} items processed, {} put() calls held up, at most {} items queued",
           p.processed.size(), p.waits, p.peak_qsize);
  demo.expect(got == expected, "every item should be processed exactly once");
  demo.expect(p.waits > 0, "the producers should have had to wait (back-pressure)");
  demo.expect(p.peak_qsize <= 3, "the queue should never hold more than maxsize items");
  demo.expect(p.stopped == 2 && p.queue.qsize() == 0,
              "both consumers should end by QueueShutDown, the queue empty");
  demo.elapsed_line(fmt::format("{} items x {} s / 2 consumers = {} s", 2 * kItems, demo.text(work),
                                demo.secs(0.1 * kItems)));
}

corio::Coro<> semaphore_section(Demo& demo) {
  constexpr int kTasks = 100;
  constexpr int kLimit = 5;
  const Seconds delay = demo.t(0.02);
  demo.explain(fmt::format("{} tasks start at once; a Semaphore({}) lets {} of them in at a time:",
                           kTasks, kLimit, kLimit));
  demo.explain(fmt::format("  auto permit = co_await sem.scoped_acquire();  co_await sleep({} s);",
                           demo.text(delay)));
  corio::Semaphore sem(kLimit);
  Crowd crowd;
  std::vector<corio::Coro<>> fetches;
  fetches.reserve(kTasks);
  for (int id = 1; id <= kTasks; ++id)
    fetches.push_back(limited_fetch(demo, &sem, &crowd, id, kTasks, delay));
  co_await corio::gather(std::move(fetches));
  const double elapsed = demo.elapsed();
  const double expected = kTasks / kLimit * delay.count();
  demo.out("{} finished, at most {} running at once", crowd.finished, crowd.peak);
  demo.expect(crowd.finished == kTasks, "every task should finish");
  demo.expect(crowd.peak == kLimit, fmt::format("at most {} should run at once", kLimit));
  demo.expect(elapsed >= 0.9 * expected, "the tasks should run in waves, not all at once");
  demo.elapsed_line(fmt::format("{} / {} waves x {} s = {} s", kTasks, kLimit, demo.text(delay),
                                demo.text(Seconds(expected))));
}

}  // namespace corio_cli::demo
