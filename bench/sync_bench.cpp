// corio sync-layer and thread benchmarks (Google Benchmark). Peer: peers/asyncio_sync.py
// (asyncio and uvloop); bench/run --suite sync runs both and prints the comparison.
//
//   BM_lock_uncontended  one task: co_await lock.acquire(); lock.release();
//                        time/iteration = ns per acquire/release pair
//   BM_lock_contended    kLockTasks tasks, each: acquire; co_await sleep(0s); release.
//                        The lock is FIFO, so every round hands it to each task once:
//                        time/iteration = ns per hand-off (one sleep(0) switch included)
//   BM_queue_bounded     producer co_await q.put(i) into Queue<int>(kQueueMax), consumer
//                        co_await q.get(): time/iteration = ns per item
//   BM_queue_unbounded   the same on Queue<int>(0); the producer yields (sleep(0s)) after
//                        every kBurst puts so the queue stays small: ns per item
//   BM_to_thread         co_await corio::to_thread(fn), fn returning 1, one after another:
//                        time/iteration = ns per round trip (the table shows us)
//
// Only the public API is used. Coroutines take their state as pointers.

#include <chrono>
#include <cstddef>
#include <vector>

#include <benchmark/benchmark.h>

#include <corio/corio.hpp>
#include <corio/lock.hpp>
#include <corio/queue.hpp>
#include <corio/to_thread.hpp>

using namespace std::chrono_literals;

namespace {

constexpr int kLockTasks = 4;           // peers/asyncio_sync.py LOCK_TASKS
constexpr std::size_t kQueueMax = 100;  // QUEUE_MAX
constexpr int kBurst = 100;             // BURST

// --- 1. lock_uncontended -----------------------------------------------------------------
corio::Coro<void> lock_uncontended_main(benchmark::State* state) {
  corio::Lock lock;
  for (auto _ : *state) {
    co_await lock.acquire();
    lock.release();
  }
}

void BM_lock_uncontended(benchmark::State& state) { corio::run(lock_uncontended_main(&state)); }

// --- 2. lock_contended -------------------------------------------------------------------
corio::Coro<void> lock_worker(corio::Lock* lock, const bool* stop) {
  while (!*stop) {
    co_await lock->acquire();
    co_await corio::sleep(0s);
    lock->release();
  }
}

// The main task is one of the kLockTasks; with the lock FIFO-fair, each of its rounds is
// kLockTasks hand-offs, hence KeepRunningBatch(kLockTasks).
corio::Coro<void> lock_contended_main(benchmark::State* state) {
  corio::Lock lock;
  bool stop = false;
  std::vector<corio::Task<void>> others;
  for (int i = 1; i < kLockTasks; ++i)
    others.push_back(corio::create_task(lock_worker(&lock, &stop)));
  co_await lock.acquire();
  co_await corio::sleep(0s);  // the others run and queue up behind us
  lock.release();
  while (state->KeepRunningBatch(kLockTasks)) {
    co_await lock.acquire();
    co_await corio::sleep(0s);
    lock.release();
  }
  stop = true;
  for (auto& t : others) co_await t;
}

void BM_lock_contended(benchmark::State& state) { corio::run(lock_contended_main(&state)); }

// --- 3. queue_bounded / queue_unbounded ----------------------------------------------------
// The consumer stops at the first negative item.
corio::Coro<void> consumer(corio::Queue<int>* q, long* sum) {
  for (;;) {
    const int v = co_await q->get();
    if (v < 0) break;
    *sum += v;
  }
}

corio::Coro<void> queue_bounded_main(benchmark::State* state) {
  corio::Queue<int> q(kQueueMax);
  long sum = 0;
  auto cons = corio::create_task(consumer(&q, &sum));
  int i = 0;
  for (auto _ : *state) co_await q.put(i++ & 0xffff);
  co_await q.put(-1);
  co_await cons;
  benchmark::DoNotOptimize(sum);
}

void BM_queue_bounded(benchmark::State& state) { corio::run(queue_bounded_main(&state)); }

corio::Coro<void> queue_unbounded_main(benchmark::State* state) {
  corio::Queue<int> q(0);
  long sum = 0;
  auto cons = corio::create_task(consumer(&q, &sum));
  int i = 0;
  while (state->KeepRunningBatch(kBurst)) {
    for (int k = 0; k < kBurst; ++k) co_await q.put(i++ & 0xffff);
    co_await corio::sleep(0s);  // the consumer drains the burst
  }
  co_await q.put(-1);
  co_await cons;
  benchmark::DoNotOptimize(sum);
}

void BM_queue_unbounded(benchmark::State& state) { corio::run(queue_unbounded_main(&state)); }

// --- 4. to_thread ------------------------------------------------------------------------
int one() { return 1; }

corio::Coro<void> to_thread_main(benchmark::State* state) {
  long acc = co_await corio::to_thread(one);  // outside the timing: starts the pool's thread
  for (auto _ : *state) acc += co_await corio::to_thread(one);
  benchmark::DoNotOptimize(acc);
}

void BM_to_thread(benchmark::State& state) { corio::run(to_thread_main(&state)); }

BENCHMARK(BM_lock_uncontended)->Unit(benchmark::kNanosecond)->UseRealTime();
BENCHMARK(BM_lock_contended)->Unit(benchmark::kNanosecond)->UseRealTime();
BENCHMARK(BM_queue_bounded)->Unit(benchmark::kNanosecond)->UseRealTime();
BENCHMARK(BM_queue_unbounded)->Unit(benchmark::kNanosecond)->UseRealTime();
BENCHMARK(BM_to_thread)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
