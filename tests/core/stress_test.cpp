// Scale: many concurrent tasks, long runs of synchronously completing awaits,
// deep chains of nested Coros. The stack must stay flat in every build,
// including g++ -O0 and ASan (DESIGN.md "Known toolchain traps").
#include <algorithm>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "core/test_support.hpp"

using namespace std::chrono_literals;
using corio::Coro;
using corio::EventLoop;
using corio::Task;
using corio_test::virtual_time;

namespace {

// ---- many tasks ------------------------------------------------------------------------------

struct Wakeups {
  std::vector<double> times;  // in wake-up order
  int wrong_time = 0;
};

Coro<int> sleep_ms(int ms, Wakeups* w) {
  const double expected = ms / 1000.0;
  co_await corio::sleep(std::chrono::milliseconds(ms));
  const double now = corio::get_running_loop().time();
  if (now != expected) ++w->wrong_time;
  w->times.push_back(now);
  co_return ms;
}

Coro<std::int64_t> many_tasks_main(int n, Wakeups* w) {
  std::mt19937 rng(12345);
  std::uniform_int_distribution<int> dist(0, 10'000);
  std::vector<Task<int>> tasks;
  tasks.reserve(static_cast<std::size_t>(n));
  std::int64_t expected = 0;
  for (int i = 0; i < n; ++i) {
    const int ms = dist(rng);
    expected += ms;
    tasks.push_back(corio::create_task(sleep_ms(ms, w)));
  }
  std::int64_t sum = 0;
  for (auto& t : tasks) sum += co_await t;
  co_return sum == expected ? sum : -1;
}

TEST(Stress, HundredThousandConcurrentSleepingTasks) {
  constexpr int kTasks = 100'000;
  Wakeups w;
  w.times.reserve(kTasks);
  EXPECT_GT(corio::run(many_tasks_main(kTasks, &w), virtual_time()), 0);
  EXPECT_EQ(w.times.size(), static_cast<std::size_t>(kTasks));
  EXPECT_EQ(w.wrong_time, 0);  // each woke exactly at its virtual deadline
  EXPECT_TRUE(std::is_sorted(w.times.begin(), w.times.end()));
}

// ---- synchronous completion -------------------------------------------------------------------

Coro<int> one() { co_return 1; }

Coro<std::int64_t> ten_million_awaits(int n) {
  std::int64_t sum = 0;
  for (int i = 0; i < n; ++i) sum += co_await one();
  co_return sum;
}

TEST(Stress, TenMillionSynchronousAwaitsUseConstantStack) {
  constexpr int kAwaits = 10'000'000;
  EXPECT_EQ(corio::run(ten_million_awaits(kAwaits)), kAwaits);
}

Coro<std::int64_t> done_future_awaits(corio::Future<int> f, int n) {
  std::int64_t sum = 0;
  for (int i = 0; i < n; ++i) sum += co_await f;
  co_return sum;
}

TEST(Stress, MillionAwaitsOfADoneFuture) {
  EventLoop loop;
  auto f = loop.create_future<int>();
  f.set_result(2);
  EXPECT_EQ(loop.run_until_complete(done_future_awaits(f, 1'000'000)), 2'000'000);
}

// ---- deep chains -------------------------------------------------------------------------------

Coro<int> depth(int n) {
  if (n == 0) co_return 0;
  co_return 1 + co_await depth(n - 1);
}

TEST(Stress, TwoHundredThousandDeepChainOfCoros) {
  constexpr int kDepth = 200'000;
  EXPECT_EQ(corio::run(depth(kDepth)), kDepth);
}

Coro<int> depth_suspending(int n) {
  if (n == 0) {
    co_await corio::sleep(1s);  // the whole chain is suspended here
    co_return 0;
  }
  co_return 1 + co_await depth_suspending(n - 1);
}

TEST(Stress, DeepChainSuspendedAtTheBottomResumes) {
  constexpr int kDepth = 200'000;
  EXPECT_EQ(corio::run(depth_suspending(kDepth), virtual_time()), kDepth);
}

Coro<int> depth_throwing(int n) {
  if (n == 0) {
    co_await corio::sleep(0s);
    throw std::runtime_error("bottom");
  }
  co_return 1 + co_await depth_throwing(n - 1);
}

TEST(Stress, ExceptionUnwindsADeepChain) {
  EXPECT_THROW(corio::run(depth_throwing(50'000)), std::runtime_error);
}

TEST(Stress, CancellingADeepChainUnwindsEveryLevel) {
  EventLoop loop(virtual_time());
  auto t = loop.create_task(depth_suspending(50'000));
  loop.run_once();
  t.cancel();
  EXPECT_THROW(loop.run_until_complete(t), corio::CancelledError);
  EXPECT_TRUE(t.cancelled());
}

}  // namespace
