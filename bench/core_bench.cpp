// corio core-runtime benchmarks (Google Benchmark). Peers: peers/asio_core.cpp,
// peers/asyncio_core.py; bench/run runs all of them and prints the comparison.
//
//   BM_spawn_await   create_task(child()) then co_await it           time/iteration = ns per
//   spawn+await BM_switch        two tasks alternating co_await sleep(0s)        time/iteration =
//   ns per switch BM_direct_await  co_await child() (Coro<int>, completes inline)   time/iteration
//   = ns per await BM_mem_per_task  100k tasks suspended on one pending Future<void>; counters
//   bytes_per_task
//                    (mallinfo2 heap delta) and rss_per_task (RSS delta)
//   BM_mem_per_event_task  the same, each task in Event::wait() on one Event (bench/idle)
//   BM_timers_1m     1M loop.call_at(start + d, fn), d uniform in [0, 1 s] (fixed seed);
//                    counters wall_s (first schedule -> last fire), cpu_s, sched_s
//
// Only the public API of API.md is used.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench_util.hpp"
#include <corio/corio.hpp>

using namespace std::chrono_literals;

namespace {

corio::Coro<int> child(int x) { co_return x + 1; }

// --- 1. spawn_await ----------------------------------------------------------------------
corio::Coro<void> spawn_await_main(benchmark::State& state) {
  int acc = 0;
  for (auto _ : state) {
    auto task = corio::create_task(child(acc & 1));
    acc += co_await task;
  }
  benchmark::DoNotOptimize(acc);
}

void BM_spawn_await(benchmark::State& state) { corio::run(spawn_await_main(state)); }

// --- 2. switch ---------------------------------------------------------------------------
// The main task and a partner both loop on sleep(0s); every loop iteration resumes each of
// them once, so a batch of 2 benchmark iterations is 2 switches: time/iteration = per switch.
corio::Coro<void> partner(const bool* stop) {
  while (!*stop) co_await corio::sleep(0s);
}

corio::Coro<void> switch_main(benchmark::State& state) {
  bool stop = false;
  auto other = corio::create_task(partner(&stop));
  co_await corio::sleep(0s);  // partner is now inside its loop
  while (state.KeepRunningBatch(2)) co_await corio::sleep(0s);
  stop = true;
  co_await other;
}

void BM_switch(benchmark::State& state) { corio::run(switch_main(state)); }

// --- 3. direct_await ---------------------------------------------------------------------
corio::Coro<void> direct_main(benchmark::State& state) {
  int acc = 0;
  for (auto _ : state) acc += co_await child(acc & 1);
  benchmark::DoNotOptimize(acc);
}

void BM_direct_await(benchmark::State& state) { corio::run(direct_main(state)); }

// --- 4. mem_per_task ---------------------------------------------------------------------
// Heap and RSS growth per task over kMemTasks tasks, each spawned by spawn() and run to its
// first suspension; release() then lets every task finish, each counting itself in finished.
template <class Spawn, class Release>
corio::Coro<void> mem_measure(benchmark::State& state, Spawn spawn, Release release,
                              const long& finished) {
  constexpr std::size_t n = bench_util::kMemTasks;
  std::vector<corio::Task<void>> tasks;
  tasks.reserve(n);  // the container is not part of the per-task cost
  co_await corio::sleep(0s);

  const std::size_t heap0 = bench_util::heap_in_use();
  const std::size_t rss0 = bench_util::rss_bytes();
  for (std::size_t i = 0; i < n; ++i) tasks.push_back(spawn());
  co_await corio::sleep(0s);  // every task runs its first step and suspends
  co_await corio::sleep(0s);
  const std::size_t heap1 = bench_util::heap_in_use();
  const std::size_t rss1 = bench_util::rss_bytes();

  release();
  for (auto& t : tasks) co_await t;
  if (finished != static_cast<long>(n)) state.SkipWithError("not every task finished");
  state.counters["bytes_per_task"] = static_cast<double>(heap1 - heap0) / static_cast<double>(n);
  state.counters["rss_per_task"] = static_cast<double>(rss1 - rss0) / static_cast<double>(n);
}

corio::Coro<void> waiter(corio::Future<void> fut, long* finished) {
  co_await fut;
  ++*finished;
}

corio::Coro<void> mem_main(benchmark::State& state) {
  long finished = 0;
  auto fut = corio::get_running_loop().create_future<void>();
  co_await mem_measure(
      state, [&] { return corio::create_task(waiter(fut, &finished)); }, [&] { fut.set_result(); },
      finished);
}

void BM_mem_per_task(benchmark::State& state) {
  for (auto _ : state) corio::run(mem_main(state));
}

// The same with each task in Event::wait() on one shared Event: what an idle connection's
// task costs while it waits on a sync primitive. Its RSS counter means something only in
// a process of its own (bench/run --suite idle runs it alone with --benchmark_filter):
// after BM_mem_per_task the freed frames are still resident and get reused.
corio::Coro<void> event_waiter(corio::Event* ev, long* finished) {
  co_await ev->wait();
  ++*finished;
}

corio::Coro<void> event_mem_main(benchmark::State& state) {
  long finished = 0;
  corio::Event ev;
  co_await mem_measure(
      state, [&] { return corio::create_task(event_waiter(&ev, &finished)); }, [&] { ev.set(); },
      finished);
}

void BM_mem_per_event_task(benchmark::State& state) {
  for (auto _ : state) corio::run(event_mem_main(state));
}

// --- 5. timers_1m ------------------------------------------------------------------------
struct TimerState {
  std::size_t fired = 0;
  std::size_t n = 0;
  double t_last = 0;
  corio::Future<void> all_fired;
};

corio::Coro<void> timers_main(benchmark::State& state) {
  const auto delays = bench_util::timer_delays();
  bench_util::prefault_heap();  // see bench_util.hpp: measure the loop, not first-touch faults
  auto& loop = corio::get_running_loop();
  TimerState st;
  st.n = delays.size();
  st.all_fired = loop.create_future<void>();
  TimerState* sp = &st;

  const double c0 = bench_util::cpu_seconds();
  const double t0 = bench_util::wall_seconds();
  // Deadlines in [start, start + 1 s], as every peer does: the last timer is
  // due 1 s after the start, so wall time above 1 s is the loop's overhead.
  const double start = loop.time();
  for (auto d : delays) {
    (void)loop.call_at(start + std::chrono::duration<double>(d).count(), [sp] {
      if (++sp->fired == sp->n) {
        sp->t_last = bench_util::wall_seconds();
        sp->all_fired.set_result();
      }
    });
  }
  const double t_sched = bench_util::wall_seconds();
  co_await st.all_fired;
  const double c1 = bench_util::cpu_seconds();
  state.counters["wall_s"] = st.t_last - t0;
  state.counters["cpu_s"] = c1 - c0;
  state.counters["sched_s"] = t_sched - t0;
}

void BM_timers_1m(benchmark::State& state) {
  for (auto _ : state) corio::run(timers_main(state));
}

// Memory first, on a heap the other benchmarks have not touched yet.
BENCHMARK(BM_mem_per_task)
    ->Iterations(1)
    ->Repetitions(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_mem_per_event_task)
    ->Iterations(1)
    ->Repetitions(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_spawn_await)->Unit(benchmark::kNanosecond)->UseRealTime();
BENCHMARK(BM_switch)->Unit(benchmark::kNanosecond)->UseRealTime();
BENCHMARK(BM_direct_await)->Unit(benchmark::kNanosecond)->UseRealTime();
BENCHMARK(BM_timers_1m)
    ->Iterations(1)
    ->Repetitions(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
