// Timers (call_later/call_at, on virtual time) and Handle/TimerHandle.
#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <corio/testing/virtual_clock.hpp>

#include "core/test_support.hpp"

using namespace std::chrono_literals;
using corio::EventLoop;
using corio_test::virtual_time;
using Log = std::vector<std::string>;

namespace {

// ---- timers ----------------------------------------------------------------------------

TEST(EventLoop, TimersRunByDeadlineThenInSchedulingOrder) {
  EventLoop loop(virtual_time());
  std::vector<std::pair<std::string, double>> fired;
  auto rec = [&](const char* name) {
    return [&fired, &loop, name] { fired.emplace_back(name, loop.time()); };
  };
  loop.call_later(2s, rec("c"));
  loop.call_later(1s, rec("a1"));
  loop.call_at(0.5, rec("z"));
  loop.call_later(1000ms, rec("a2"));
  loop.call_at(1.0, rec("a3"));
  loop.call_later(2.5s, [&loop] { loop.stop(); });
  loop.run_forever();
  using P = std::pair<std::string, double>;
  EXPECT_EQ(fired, (std::vector<P>{{"z", 0.5}, {"a1", 1.0}, {"a2", 1.0}, {"a3", 1.0}, {"c", 2.0}}));
  EXPECT_EQ(loop.time(), 2.5);
}

TEST(EventLoop, CallAtInThePastRunsOnTheNextIteration) {
  EventLoop loop(virtual_time(10.0));
  bool ran = false;
  auto h = loop.call_at(3.0, [&] { ran = true; });
  EXPECT_EQ(h.when(), 3.0);
  loop.run_once();
  EXPECT_TRUE(ran);
  EXPECT_EQ(loop.time(), 10.0);  // no time passed
}

TEST(EventLoop, TimerHandleWhenIsTheDeadline) {
  EventLoop loop(virtual_time(5.0));
  auto h = loop.call_later(1500ms, [] {});
  EXPECT_EQ(h.when(), 6.5);
  h.cancel();
}

// A clock that is not virtual (the loop does not ask it to jump), moved by hand.
class HandMovedClock final : public corio::Clock {
 public:
  double t = 1.0;
  double now() override { return t; }
};

TEST(EventLoop, PassTimeIsTheTimeReadAfterThePollForTheWholeIteration) {
  auto clock = std::make_shared<HandMovedClock>();
  corio::RunOptions opts;
  opts.clock = clock;
  EventLoop loop(opts);
  std::vector<double> seen;
  loop.call_soon([&] {
    seen.push_back(loop.pass_time());
    clock->t = 2.0;  // time passes during the run phase: pass_time() does not see it
    seen.push_back(loop.pass_time());
    seen.push_back(loop.time());
  });
  loop.run_once();
  clock->t = 3.0;  // before the next poll: that iteration's pass_time()
  loop.call_soon([&] { seen.push_back(loop.pass_time()); });
  loop.run_once();
  EXPECT_EQ(seen, (std::vector<double>{1.0, 1.0, 2.0, 3.0}));
}

TEST(EventLoop, PassTimeIsTimeWithAVirtualClock) {
  auto clock = std::make_shared<corio::testing::VirtualClock>(5.0);
  corio::RunOptions opts;
  opts.clock = clock;
  EventLoop loop(opts);
  std::vector<double> seen;
  loop.call_soon([&] {
    clock->advance(1.5);  // a test moving time by hand sees it at once
    seen.push_back(loop.pass_time());
  });
  loop.run_once();
  EXPECT_EQ(seen, (std::vector<double>{6.5}));
}

// ---- handles -------------------------------------------------------------------

TEST(Handle, CancelledCallbackNeverRunsEvenWithinTheSameBatch) {
  EventLoop loop;
  Log log;
  corio::Handle second;
  loop.call_soon([&] {
    log.push_back("first");
    second.cancel();
  });
  second = loop.call_soon([&] { log.push_back("second"); });
  loop.call_soon([&] { log.push_back("third"); });
  EXPECT_FALSE(second.cancelled());
  loop.run_once();
  EXPECT_EQ(log, (Log{"first", "third"}));
  EXPECT_TRUE(second.cancelled());
}

TEST(Handle, CancelledTimerNeverRunsAndVirtualTimeSkipsIt) {
  EventLoop loop(virtual_time());
  bool ran = false;
  auto far = loop.call_later(100s, [&] { ran = true; });
  loop.call_later(1s, [&] { loop.stop(); });
  far.cancel();
  EXPECT_TRUE(far.cancelled());
  loop.run_forever();
  EXPECT_FALSE(ran);
  EXPECT_EQ(loop.time(), 1.0);
  // Nothing left: a timer further out proves the heap holds nothing before it.
  loop.call_later(5s, [&] { loop.stop(); });
  loop.run_forever();
  EXPECT_FALSE(ran);
  EXPECT_EQ(loop.time(), 6.0);
}

TEST(Handle, CancelAfterRunIsHarmless) {
  EventLoop loop(virtual_time());
  int runs = 0;
  auto h = loop.call_soon([&] { ++runs; });
  auto t = loop.call_later(1s, [&] { ++runs; });
  loop.call_later(2s, [&] { loop.stop(); });
  loop.run_forever();
  EXPECT_EQ(runs, 2);
  h.cancel();
  t.cancel();
  h.cancel();
  EXPECT_TRUE(h.cancelled());
  EXPECT_TRUE(t.cancelled());
  EXPECT_EQ(runs, 2);
}

TEST(Handle, CancelReleasesCapturedStateAtOnce) {
  EventLoop loop;
  auto state = std::make_shared<int>(1);
  auto h = loop.call_soon([state] { (void)state; });
  auto t = loop.call_later(1h, [state] { (void)state; });
  EXPECT_EQ(state.use_count(), 3);
  h.cancel();
  t.cancel();
  EXPECT_EQ(state.use_count(), 1);
}

TEST(Handle, EmptyHandleIsFalseAndCancelIsANoOp) {
  corio::Handle h;
  EXPECT_FALSE(h);
  EXPECT_FALSE(h.cancelled());
  h.cancel();
}

// A callback that cancels its own handle must not destroy the closure it is
// running in (asyncio keeps the callback alive until it returns).
bool g_closure_destroyed = false;
bool g_destroyed_during_call = false;
corio::Handle* g_self_handle = nullptr;
struct DestroyFlag {
  bool armed = true;
  DestroyFlag() = default;
  DestroyFlag(DestroyFlag&& o) noexcept { o.armed = false; }
  DestroyFlag(const DestroyFlag& o) = default;
  ~DestroyFlag() {
    if (armed) g_closure_destroyed = true;
  }
};

TEST(Handle, CancellingItsOwnHandleInsideTheCallbackKeepsTheClosureAlive) {
  EventLoop loop;
  g_closure_destroyed = false;
  g_destroyed_during_call = false;
  corio::Handle h = loop.call_soon([flag = DestroyFlag{}] {
    (void)flag;
    g_self_handle->cancel();
    // Globals only from here on: the captures are gone if the bug is present.
    g_destroyed_during_call = g_closure_destroyed;
  });
  g_self_handle = &h;
  loop.run_once();
  g_self_handle = nullptr;
  EXPECT_FALSE(g_destroyed_during_call)
      << "Handle::cancel() from inside the callback destroyed the running std::function";
  EXPECT_TRUE(h.cancelled());
}

TEST(Handle, SelfCancelledClosureIsReleasedOnceTheCallbackReturns) {
  // asyncio drops the callback at cancel(); the running call keeps it alive
  // only until it returns. The handle outliving the call must not keep it.
  EventLoop loop;
  g_closure_destroyed = false;
  corio::Handle h = loop.call_soon([flag = DestroyFlag{}] {
    (void)flag;
    g_self_handle->cancel();
  });
  g_self_handle = &h;
  loop.run_once();
  g_self_handle = nullptr;
  EXPECT_TRUE(g_closure_destroyed) << "the cancelled callback's captures outlive the call";
}
// The timer heap under churn: random deadlines (many equal), a third
// cancelled, some from inside other timers' callbacks. Every surviving timer
// fires once, at its deadline, in (deadline, scheduling order) order.
struct Churn {
  EventLoop* loop;
  std::vector<corio::TimerHandle> handles;
  std::vector<double> deadline;
  std::vector<int> fired;  // ids in firing order
  std::vector<double> fired_at;
  std::vector<bool> cancelled;
  std::vector<bool> done;
};

TEST(Timers, HeapChurnKeepsOrderAndSkipsCancelled) {
  EventLoop loop(virtual_time());
  Churn c{&loop, {}, {}, {}, {}, {}, {}};
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> ms(0, 200);  // few distinct deadlines: many ties
  constexpr int kTimers = 20'000;
  for (int id = 0; id < kTimers; ++id) {
    const double when = ms(rng) / 100.0;
    c.deadline.push_back(when);
    c.cancelled.push_back(false);
    c.done.push_back(false);
    c.handles.push_back(loop.call_at(when, [&c, id] {
      c.fired.push_back(id);
      c.fired_at.push_back(c.loop->time());
      c.done[static_cast<std::size_t>(id)] = true;
      // Some callbacks cancel a timer that has not fired yet.
      const auto victim = static_cast<std::size_t>(id * 7 % kTimers);
      if (id % 5 == 0 && !c.done[victim] && !c.cancelled[victim]) {
        c.handles[victim].cancel();
        c.cancelled[victim] = true;
      }
    }));
  }
  for (int id = 0; id < kTimers; id += 3) {
    c.handles[static_cast<std::size_t>(id)].cancel();
    c.cancelled[static_cast<std::size_t>(id)] = true;
  }
  loop.call_at(3.0, [&loop] { loop.stop(); });
  loop.run_forever();

  std::vector<int> expected;
  for (int id = 0; id < kTimers; ++id) {
    if (!c.cancelled[static_cast<std::size_t>(id)]) expected.push_back(id);
  }
  std::stable_sort(expected.begin(), expected.end(), [&c](int a, int b) {
    return c.deadline[static_cast<std::size_t>(a)] < c.deadline[static_cast<std::size_t>(b)];
  });
  EXPECT_EQ(c.fired, expected);
  bool at_deadline = true;
  for (std::size_t i = 0; i < c.fired.size(); ++i) {
    at_deadline = at_deadline && c.fired_at[i] == c.deadline[static_cast<std::size_t>(c.fired[i])];
  }
  EXPECT_TRUE(at_deadline);
}

}  // namespace
