// Boost.Asio (1.81, C++20 coroutines) peer for the core-runtime benchmarks.
// Same five metrics as bench/core_bench.cpp; prints one JSON object per line:
//   {"impl": "asio", "metric": "...", "value": ..., "unit": "..."}
//
// Equivalents chosen:
//   spawn_await   co_await co_spawn(ex, child(), use_awaitable)
//   switch        co_await asio::post(ex, use_awaitable)   (a yield through the io_context queue)
//   direct_await  co_await child()                           (asio::awaitable<int>)
//   mem_per_task  co_spawn'd coroutines all waiting on ONE steady_timer that expires at
//                 time_point::max() (a pending "future" many can wait on); timer.cancel()
//                 completes them all
//   timers_1m     1M steady_timers, async_wait with a plain (non-coroutine) handler
//
// The io_context is created with concurrency hint 1 (the documented single-thread hint).
//
// Usage: asio_core_bench [--quick] [--reps N] [--only metric]

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "../bench_util.hpp"

namespace asio = boost::asio;
using asio::awaitable;
using asio::use_awaitable;

namespace {

bool g_quick = false;
int g_reps = 3;
const char* g_only = nullptr;

void emit(const char* metric, double value, const char* unit) {
  std::printf("{\"impl\": \"asio\", \"metric\": \"%s\", \"value\": %.6g, \"unit\": \"%s\"}\n",
              metric, value, unit);
  std::fflush(stdout);
}

bool selected(const char* metric) { return !g_only || std::strcmp(g_only, metric) == 0; }

// Runs body(n) (which returns elapsed seconds for n operations) with n calibrated so one
// run takes ~target seconds; returns the median ns per operation over g_reps runs.
double measure_ns(const std::function<double(long)>& body, double ops_per_iter = 1.0) {
  const double target = g_quick ? 0.1 : 0.5;
  long n = 1000;
  for (;;) {
    double t = body(n);
    if (t >= target / 10 || n >= (1L << 40)) {
      n = static_cast<long>(static_cast<double>(n) * target / std::max(t, 1e-9));
      n = std::max(n, 1000L);
      break;
    }
    n *= 10;
  }
  std::vector<double> runs;
  for (int r = 0; r < g_reps; ++r)
    runs.push_back(body(n) * 1e9 / (static_cast<double>(n) * ops_per_iter));
  std::sort(runs.begin(), runs.end());
  return runs[runs.size() / 2];
}

// --- 1. spawn_await -------------------------------------------------------------------
awaitable<int> child(int x) { co_return x + 1; }

awaitable<void> spawn_await_main(long n, double* out) {
  auto ex = co_await asio::this_coro::executor;
  int acc = 0;
  double t0 = bench_util::wall_seconds();
  for (long i = 0; i < n; ++i) acc += co_await asio::co_spawn(ex, child(acc & 1), use_awaitable);
  *out = bench_util::wall_seconds() - t0;
  if (acc == -1) std::abort();
}

double run_spawn_await(long n) {
  asio::io_context ctx(1);
  double t = 0;
  asio::co_spawn(ctx, spawn_await_main(n, &t), asio::detached);
  ctx.run();
  return t;
}

// --- 2. switch ------------------------------------------------------------------------
awaitable<void> switcher(long n) {
  auto ex = co_await asio::this_coro::executor;
  for (long i = 0; i < n; ++i) co_await asio::post(ex, use_awaitable);
}

double run_switch(long n) {
  asio::io_context ctx(1);
  asio::co_spawn(ctx, switcher(n), asio::detached);
  asio::co_spawn(ctx, switcher(n), asio::detached);
  double t0 = bench_util::wall_seconds();
  ctx.run();
  return bench_util::wall_seconds() - t0;
}

// --- 3. direct_await ------------------------------------------------------------------
awaitable<void> direct_main(long n, double* out) {
  int acc = 0;
  double t0 = bench_util::wall_seconds();
  for (long i = 0; i < n; ++i) acc += co_await child(acc & 1);
  *out = bench_util::wall_seconds() - t0;
  if (acc == -1) std::abort();
}

double run_direct(long n) {
  asio::io_context ctx(1);
  double t = 0;
  asio::co_spawn(ctx, direct_main(n, &t), asio::detached);
  ctx.run();
  return t;
}

// --- 4. mem_per_task ------------------------------------------------------------------
long g_finished = 0;

awaitable<void> waiter(asio::steady_timer& gate) {
  boost::system::error_code ec;
  co_await gate.async_wait(asio::redirect_error(use_awaitable, ec));
  ++g_finished;
}

void run_mem() {
  const std::size_t n = bench_util::kMemTasks;
  asio::io_context ctx(1);
  asio::steady_timer gate(ctx, asio::steady_timer::time_point::max());
  // Warm up the io_context's internals and the awaitable frame recycler.
  asio::co_spawn(
      ctx, [&]() -> awaitable<void> { co_await asio::post(ctx, use_awaitable); }, asio::detached);
  ctx.poll();
  ctx.restart();

  const std::size_t heap0 = bench_util::heap_in_use();
  const std::size_t rss0 = bench_util::rss_bytes();
  for (std::size_t i = 0; i < n; ++i) asio::co_spawn(ctx, waiter(gate), asio::detached);
  ctx.poll();  // every coroutine runs to its suspension on the timer
  const std::size_t heap1 = bench_util::heap_in_use();
  const std::size_t rss1 = bench_util::rss_bytes();
  ctx.restart();
  gate.cancel();
  ctx.run();
  if (g_finished != static_cast<long>(n)) {
    std::fprintf(stderr, "asio mem: only %ld of %zu finished\n", g_finished, n);
    std::exit(1);
  }
  emit("mem_per_task_heap", static_cast<double>(heap1 - heap0) / static_cast<double>(n), "bytes");
  emit("mem_per_task_rss", static_cast<double>(rss1 - rss0) / static_cast<double>(n), "bytes");
}

// --- 5. timers_1m ---------------------------------------------------------------------
void run_timers() {
  const auto delays = bench_util::timer_delays();
  const std::size_t n = delays.size();
  bench_util::prefault_heap();
  asio::io_context ctx(1);
  std::deque<asio::steady_timer> timers;  // stable addresses, storage from the malloc heap
  std::size_t fired = 0;
  double t_last = 0;

  const double c0 = bench_util::cpu_seconds();
  const double t0 = bench_util::wall_seconds();
  const auto start = asio::steady_timer::clock_type::now();  // deadlines in [start, start + 1 s]
  for (std::size_t i = 0; i < n; ++i) {
    auto& t = timers.emplace_back(ctx, start + delays[i]);
    t.async_wait([&](const boost::system::error_code&) {
      if (++fired == n) t_last = bench_util::wall_seconds();
    });
  }
  const double t_sched = bench_util::wall_seconds();
  ctx.run();
  const double c1 = bench_util::cpu_seconds();
  if (fired != n) {
    std::fprintf(stderr, "asio timers: only %zu of %zu fired\n", fired, n);
    std::exit(1);
  }
  emit("timers_1m_wall", t_last - t0, "s");
  emit("timers_1m_cpu", c1 - c0, "s");
  emit("timers_1m_sched", t_sched - t0, "s");
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) {
      g_quick = true;
      g_reps = 1;
    } else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) {
      g_reps = std::max(1, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) {
      g_only = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--reps N] [--only METRIC]\n", argv[0]);
      return 2;
    }
  }
  if (selected("mem_per_task")) run_mem();  // first, on a fresh heap
  if (selected("spawn_await")) emit("spawn_await", measure_ns(run_spawn_await), "ns");
  if (selected("switch")) emit("switch", measure_ns(run_switch, 2.0), "ns");
  if (selected("direct_await")) emit("direct_await", measure_ns(run_direct), "ns");
  if (selected("timers_1m")) run_timers();
  return 0;
}
