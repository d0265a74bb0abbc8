// loop.stats(): each counter against a loop driven by hand on virtual time,
// where "a step that took 200 ms" is a callback advancing the clock by 0.2.
#include <sys/socket.h>

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace {

using corio::Coro;
using corio::EventLoop;
using corio::testing::VirtualClock;
using namespace std::chrono_literals;

std::shared_ptr<VirtualClock> clock_of(const corio::RunOptions& opts) {
  return std::static_pointer_cast<VirtualClock>(opts.clock);
}

TEST(LoopStats, CountsIterationsStepsAndTheReadyQueue) {
  EventLoop loop(corio_testing::virtual_time());
  EXPECT_EQ(loop.stats().iterations, 0u);
  for (int i = 0; i < 3; ++i) loop.call_soon([] {});
  EXPECT_EQ(loop.stats().ready, 3u);
  loop.run_once();
  loop.call_soon([] {});
  loop.run_once();
  const corio::LoopStats s = loop.stats();
  EXPECT_EQ(s.iterations, 2u);
  EXPECT_EQ(s.steps, 4u);
  EXPECT_EQ(s.ready, 0u);
}

TEST(LoopStats, CountsPendingTimersAndWatchedFds) {
  EventLoop loop(corio_testing::virtual_time());
  corio::TimerHandle a = loop.call_later(1s, [] {});
  corio::TimerHandle b = loop.call_later(2s, [] {});
  EXPECT_EQ(loop.stats().timers, 2u);
  b.cancel();
  EXPECT_EQ(loop.stats().timers, 1u);
  corio_test::Pipe p;
  loop.add_reader(p.r, [] {});
  loop.add_writer(p.w, [] {});
  EXPECT_EQ(loop.stats().watched_fds, 2u);
  loop.remove_writer(p.w);
  EXPECT_EQ(loop.stats().watched_fds, 1u);
  loop.remove_reader(p.r);
  EXPECT_EQ(loop.stats().watched_fds, 0u);
}

Coro<std::string> recv_some(corio::Socket* s) {
  co_return co_await corio::get_running_loop().sock_recv(*s, 16);
}

Coro<void> io_wait_main(EventLoop* loop) {
  int fds[2];
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds), 0);
  corio::Socket a(fds[0]), b(fds[1]);
  corio::Task<std::string> t = loop->create_task(recv_some(&a));
  co_await corio::sleep(0s);
  EXPECT_EQ(loop->stats().io_waits, 1u);
  co_await loop->sock_sendall(b, "x");
  EXPECT_EQ(co_await t, "x");
  EXPECT_EQ(loop->stats().io_waits, 0u);
}

TEST(LoopStats, CountsParkedSocketOperations) {
  EventLoop loop(corio_testing::virtual_time());
  loop.run_until_complete(io_wait_main(&loop));
}

Coro<void> finish_after(std::chrono::seconds d) { co_await corio::sleep(d); }

TEST(LoopStats, CountsTasksAliveAndCreated) {
  EventLoop loop(corio_testing::virtual_time());
  corio::Task<void> quick = loop.create_task(finish_after(1s));
  corio::Task<void> slow1 = loop.create_task(finish_after(5s));
  corio::Task<void> slow2 = loop.create_task(finish_after(5s));
  EXPECT_EQ(loop.stats().tasks_alive, 3u);
  loop.run_until_complete(quick);
  corio::LoopStats s = loop.stats();
  EXPECT_EQ(s.tasks_alive, 2u);
  EXPECT_EQ(s.tasks_created, 3u);
  slow1.cancel();
  slow2.cancel();
  EXPECT_THROW(loop.run_until_complete(slow2), corio::CancelledError);
  EXPECT_EQ(loop.stats().tasks_alive, 0u);
}

// Each step "takes" 500 ms plus i ms while a timer is due after 500 ms: the
// loop gets to the timer i ms late.
Coro<void> lagging_steps(EventLoop* loop, VirtualClock* clock, int first_ms, int count) {
  for (int i = first_ms; i < first_ms + count; ++i) {
    loop->call_later(500ms, [] {});
    clock->advance(0.5 + i / 1000.0);
    co_await corio::sleep(0s);
  }
}

TEST(LoopStats, LagPercentilesAreTheLatenessOfDueTimers) {
  const corio::RunOptions opts = corio_testing::virtual_time();
  EventLoop loop(opts);
  EXPECT_EQ(loop.stats().lag.samples, 0u);
  loop.run_until_complete(lagging_steps(&loop, clock_of(opts).get(), 1, 100));
  const corio::LagPercentiles lag = loop.stats().lag;
  EXPECT_EQ(lag.samples, 100u);
  EXPECT_NEAR(lag.p50, 0.050, 1e-9);
  EXPECT_NEAR(lag.p90, 0.090, 1e-9);
  EXPECT_NEAR(lag.p99, 0.099, 1e-9);
  EXPECT_NEAR(lag.max, 0.100, 1e-9);
}

TEST(LoopStats, LagWindowKeepsOnlyTheRecentSamples) {
  const corio::RunOptions opts = corio_testing::virtual_time();
  EventLoop loop(opts);
  // 10 very late timers, then a full window of timers 1 ms late.
  loop.run_until_complete(lagging_steps(&loop, clock_of(opts).get(), 1000, 10));
  EXPECT_NEAR(loop.stats().lag.max, 1.009, 1e-9);
  constexpr int kWindow = static_cast<int>(corio::LoopStats::lag_window);
  for (int i = 0; i < kWindow; ++i)
    loop.run_until_complete(lagging_steps(&loop, clock_of(opts).get(), 1, 1));
  const corio::LagPercentiles lag = loop.stats().lag;
  EXPECT_EQ(lag.samples, corio::LoopStats::lag_window);
  EXPECT_NEAR(lag.max, 0.001, 1e-9);
  EXPECT_NEAR(lag.p50, 0.001, 1e-9);
}

TEST(LoopStats, DebugModeCountsSlowSteps) {
  corio::RunOptions opts = corio_testing::virtual_time();
  opts.debug = true;
  EventLoop loop(opts);
  corio_testing::Reports reports;
  reports.install(loop);
  VirtualClock* clock = clock_of(opts).get();
  loop.call_soon([clock] { clock->advance(0.25); });  // slow: past 0.1 s
  loop.call_soon([clock] { clock->advance(0.05); });  // not slow
  loop.run_once();
  const corio::LoopStats s = loop.stats();
  EXPECT_EQ(s.slow_steps, 1u);
  EXPECT_EQ(s.steps, 2u);
  EXPECT_EQ(reports.size(), 1u) << reports.joined();
}

TEST(LoopStats, WithoutDebugModeNoStepIsTimed) {
  const corio::RunOptions opts = corio_testing::virtual_time();
  EventLoop loop(opts);
  VirtualClock* clock = clock_of(opts).get();
  loop.call_soon([clock] { clock->advance(0.25); });
  loop.run_once();
  EXPECT_EQ(loop.stats().slow_steps, 0u);
  EXPECT_EQ(loop.stats().steps, 1u);
}

}  // namespace
