// corio::testing::VirtualClock: time stands still while work is ready and
// jumps to the next timer when the loop would otherwise wait.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <corio/event_loop.hpp>
#include <corio/run.hpp>
#include <corio/sleep.hpp>
#include <corio/testing/virtual_clock.hpp>

using namespace std::chrono_literals;
using corio::Coro;
using corio::EventLoop;
using corio::testing::VirtualClock;

namespace {

corio::RunOptions with_clock(std::shared_ptr<VirtualClock> clock) {
  corio::RunOptions opts;
  opts.clock = std::move(clock);
  return opts;
}

Coro<double> sleep_an_hour() {
  const double start = corio::get_running_loop().time();
  co_await corio::sleep(1h);
  co_return corio::get_running_loop().time() - start;
}

TEST(VirtualClock, AnHourOfSleepTakesNoRealTime) {
  auto clock = std::make_shared<VirtualClock>();
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(corio::run(sleep_an_hour(), with_clock(clock)), 3600.0);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);  // generous: it is microseconds
  EXPECT_EQ(clock->now(), 3600.0);
}

TEST(VirtualClock, StartsWhereToldAndTheLoopReadsIt) {
  auto clock = std::make_shared<VirtualClock>(1000.0);
  EventLoop loop(with_clock(clock));
  EXPECT_EQ(loop.time(), 1000.0);
  EXPECT_EQ(&loop.clock(), clock.get());
  EXPECT_EQ(loop.run_until_complete(sleep_an_hour()), 3600.0);
  EXPECT_EQ(loop.time(), 4600.0);
}

Coro<std::vector<double>> sleep_steps() {
  std::vector<double> seen;
  auto& loop = corio::get_running_loop();
  for (double d : {0.5, 0.25, 10.0, 0.125}) {
    co_await corio::sleep(std::chrono::duration<double>(d));
    seen.push_back(loop.time());
  }
  co_return seen;
}

TEST(VirtualClock, LoopTimeAdvancesByExactlyTheSleptDurations) {
  auto clock = std::make_shared<VirtualClock>();
  EXPECT_EQ(corio::run(sleep_steps(), with_clock(clock)),
            (std::vector<double>{0.5, 0.75, 10.75, 10.875}));
}

Coro<double> tenths() {
  for (int i = 0; i < 10; ++i) co_await corio::sleep(100ms);
  co_return corio::get_running_loop().time();
}

TEST(VirtualClock, NonDyadicStepsLandOnTheDeadlines) {
  double expected = 0;
  for (int i = 0; i < 10; ++i) expected = expected + 0.1;  // as the loop computes deadlines
  EXPECT_EQ(corio::run(tenths(), with_clock(std::make_shared<VirtualClock>())), expected);
}

Coro<int> busy_yields(int n) {
  for (int i = 0; i < n; ++i) co_await corio::sleep(0s);
  co_return corio::get_running_loop().time() == 0.0 ? n : -1;
}

TEST(VirtualClock, TimeStandsStillWhileWorkIsReady) {
  auto clock = std::make_shared<VirtualClock>();
  EventLoop loop(with_clock(clock));
  loop.call_later(1s, [] {});  // a timer exists, but nothing waits for it
  EXPECT_EQ(loop.run_until_complete(busy_yields(1000)), 1000);
  EXPECT_EQ(loop.time(), 0.0);
}

TEST(VirtualClock, AdvanceMovesTimeByHand) {
  VirtualClock clock(5.0);
  clock.advance(2.5);
  EXPECT_EQ(clock.now(), 7.5);
  clock.advance(0);
  clock.advance(-3);  // time never goes back
  EXPECT_EQ(clock.now(), 7.5);
  EXPECT_EQ(clock.on_idle(-1), -1);  // no timer: real waiting (I/O), no jump
  EXPECT_EQ(clock.now(), 7.5);
  EXPECT_EQ(clock.on_idle(2.0), 0);  // jumps and asks for a non-blocking poll
  EXPECT_EQ(clock.now(), 9.5);
}

TEST(VirtualClock, AdvanceBetweenTimers) {
  auto clock = std::make_shared<VirtualClock>();
  EventLoop loop(with_clock(clock));
  std::vector<std::pair<int, double>> fired;
  loop.call_later(10s, [&] { fired.emplace_back(10, loop.time()); });
  loop.call_later(30s, [&] {
    fired.emplace_back(30, loop.time());
    loop.stop();
  });
  loop.call_soon([&] { clock->advance(20); });  // past the first timer, short of the second
  loop.run_forever();
  using P = std::pair<int, double>;
  EXPECT_EQ(fired, (std::vector<P>{{10, 20.0}, {30, 30.0}}));
}

TEST(VirtualClock, TimersFireInDeadlineOrderAtTheirDeadlines) {
  auto clock = std::make_shared<VirtualClock>();
  EventLoop loop(with_clock(clock));
  std::vector<double> at;
  for (int s : {5, 1, 3, 2, 4}) {
    loop.call_later(std::chrono::seconds(s), [&] { at.push_back(loop.time()); });
  }
  loop.call_later(6s, [&] { loop.stop(); });
  loop.run_forever();
  EXPECT_EQ(at, (std::vector<double>{1, 2, 3, 4, 5}));
}

// "time jumps ... whenever the loop would otherwise wait": when an fd is
// already readable the loop would not wait, so I/O that is ready now must be
// seen now, before time jumps to the next timer.
TEST(VirtualClock, ReadyIoIsHandledBeforeTimeJumps) {
  auto clock = std::make_shared<VirtualClock>();
  EventLoop loop(with_clock(clock));
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
  double seen_at = -1;
  loop.add_reader(fds[0], [&] {
    char c;
    (void)::read(fds[0], &c, 1);
    seen_at = loop.time();
    loop.remove_reader(fds[0]);
  });
  ASSERT_EQ(::write(fds[1], "x", 1), 1);  // readable before the loop starts
  loop.call_later(60s, [&] { loop.stop(); });
  loop.run_forever();
  EXPECT_EQ(seen_at, 0.0) << "the virtual clock jumped 60 s although I/O was ready";
  ::close(fds[0]);
  ::close(fds[1]);
}

}  // namespace
