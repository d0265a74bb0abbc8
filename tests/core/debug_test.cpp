// Debug mode: how it is switched on, the slow-callback report (with the
// task's name and creation site), creation sites in the never-retrieved and
// destroyed-pending reports, and the foreign-thread check. Slow steps are
// made on virtual time (the step moves the clock), so "fast" and "slow" are
// exact; one test blocks for real to show the report on the real clock.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "core/test_support.hpp"

namespace corio_test {
namespace {

using corio::Coro;
using corio::Task;
using namespace std::chrono_literals;

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// A loop on virtual time, in debug mode, reporting into `reports`.
struct DebugLoop {
  std::shared_ptr<corio::testing::VirtualClock> clock =
      std::make_shared<corio::testing::VirtualClock>();
  corio::EventLoop loop;
  Reports reports;

  explicit DebugLoop(bool debug = true) : loop(options(clock, debug)) { reports.install(loop); }
  static corio::RunOptions options(std::shared_ptr<corio::Clock> c, bool debug) {
    corio::RunOptions o;
    o.clock = std::move(c);
    o.debug = debug;
    return o;
  }
};

// Blocks the loop for `seconds` of virtual time inside one step.
Coro<void> block_for(corio::testing::VirtualClock* clock, double seconds) {
  co_await corio::sleep(0s);
  clock->advance(seconds);
  co_await corio::sleep(0s);
}

TEST(DebugMode, OffByDefaultOnWithRunOptionsOrSetDebug) {
  ::unsetenv("CORIO_DEBUG");
  corio::EventLoop plain;
  EXPECT_FALSE(plain.get_debug());
  plain.set_debug(true);
  EXPECT_TRUE(plain.get_debug());
  DebugLoop d;
  EXPECT_TRUE(d.loop.get_debug());
  EXPECT_DOUBLE_EQ(d.loop.slow_callback_duration, 0.1);
}

TEST(DebugMode, EnvironmentVariableTurnsItOn) {
  ::setenv("CORIO_DEBUG", "1", 1);
  corio::EventLoop on;
  ::setenv("CORIO_DEBUG", "0", 1);
  corio::EventLoop off;
  ::unsetenv("CORIO_DEBUG");
  EXPECT_TRUE(on.get_debug());
  EXPECT_FALSE(off.get_debug());
}

TEST(DebugMode, SlowTaskStepIsReportedWithNameAndDuration) {
  DebugLoop d;
  d.loop.run_until_complete(d.loop.create_task(block_for(d.clock.get(), 0.512), "blocker"));
  ASSERT_EQ(d.reports.size(), 1u);
  const std::string& m = d.reports.messages[0];
  EXPECT_TRUE(starts_with(m, "Executing <Task name='blocker'")) << m;
  EXPECT_TRUE(contains(m, "took 0.512 seconds")) << m;
  EXPECT_EQ(d.reports.task_names[0], "blocker");
  EXPECT_EQ(d.reports.exceptions[0], nullptr);
}

Coro<void> blocks_inside(corio::testing::VirtualClock* clock) { co_await block_for(clock, 0.3); }

TEST(DebugMode, SlowStepReportShowsTheAwaitChainTheStepStoppedAt) {
  DebugLoop d;
  d.loop.run_until_complete(d.loop.create_task(blocks_inside(d.clock.get()), "blocker"));
  ASSERT_EQ(d.reports.size(), 1u);
  const std::string& m = d.reports.messages[0];
  // The step ran from block_for's first sleep(0s) to its second one.
  const std::size_t stack = m.find("\n+ Call stack (awaiting sleep):\n|   File '");
  ASSERT_NE(stack, std::string::npos) << m;
  const std::size_t inner = m.find("debug_test.cpp', line ", stack);
  ASSERT_NE(inner, std::string::npos) << m;
  EXPECT_NE(m.find("block_for", inner), std::string::npos) << m;
  EXPECT_NE(m.find("blocks_inside", m.find("block_for", inner)), std::string::npos) << m;
}

TEST(DebugMode, StepsUnderTheThresholdAreNotReported) {
  DebugLoop d;
  d.loop.slow_callback_duration = 1.0;
  d.loop.run_until_complete(block_for(d.clock.get(), 0.999));
  EXPECT_EQ(d.reports.size(), 0u);
  d.loop.run_until_complete(block_for(d.clock.get(), 1.0));
  EXPECT_EQ(d.reports.size(), 1u);
}

TEST(DebugMode, SlowStepThatEndsTheTaskIsStillNamed) {
  DebugLoop d;
  corio::testing::VirtualClock* clock = d.clock.get();
  auto last_step = [](corio::testing::VirtualClock* c) -> Coro<int> {
    co_await corio::sleep(0s);
    c->advance(0.25);
    co_return 1;  // the task finishes (and its state may go) in this step
  };
  EXPECT_EQ(d.loop.run_until_complete(d.loop.create_task(last_step(clock), "finisher")), 1);
  ASSERT_EQ(d.reports.size(), 1u);
  EXPECT_EQ(d.reports.task_names[0], "finisher");
}

TEST(DebugMode, SlowPlainCallbackIsReported) {
  DebugLoop d;
  corio::testing::VirtualClock* clock = d.clock.get();
  d.loop.call_soon([clock] { clock->advance(0.3); });
  d.loop.call_soon([&d] { d.loop.stop(); });
  d.loop.run_forever();
  ASSERT_EQ(d.reports.size(), 1u);
  EXPECT_EQ(d.reports.messages[0], "Executing <Handle> took 0.300 seconds");
  EXPECT_EQ(d.reports.task_names[0], "");
}

TEST(DebugMode, NothingIsTimedWhenOff) {
  DebugLoop d(false);
  d.loop.run_until_complete(block_for(d.clock.get(), 5.0));
  EXPECT_EQ(d.reports.size(), 0u);
}

TEST(DebugMode, SetDebugTakesEffectFromTheNextBatch) {
  DebugLoop d(false);
  corio::testing::VirtualClock* clock = d.clock.get();
  auto turn_on = [](corio::EventLoop* loop, corio::testing::VirtualClock* c) -> Coro<void> {
    loop->set_debug(true);
    c->advance(1.0);  // this step began before debug mode: not timed
    co_await corio::sleep(0s);
    c->advance(1.0);  // timed
  };
  d.loop.run_until_complete(turn_on(&d.loop, clock));
  EXPECT_EQ(d.reports.size(), 1u);
}

// A real blocking call on the real clock: the report's duration is at least
// the time blocked (a lower bound, so no flakiness on a slow machine).
Coro<void> sleep_blocking() {
  std::this_thread::sleep_for(200ms);
  co_return;
}

TEST(DebugMode, RealBlockingCallIsCaught) {
  corio::RunOptions opts;
  opts.debug = true;
  corio::EventLoop loop(opts);
  loop.slow_callback_duration = 0.05;
  Reports reports;
  reports.install(loop);
  loop.run_until_complete(loop.create_task(sleep_blocking(), "sleeper"));
  ASSERT_GE(reports.size(), 1u);
  const std::string& m = reports.messages[0];
  EXPECT_TRUE(starts_with(m, "Executing <Task name='sleeper'")) << m;
  const double took = std::stod(m.substr(m.find("took ") + 5));
  EXPECT_GE(took, 0.199) << m;
}

// ---- creation sites ------------------------------------------------------------------

Coro<void> fail() {
  throw std::runtime_error("boom");
  co_return;
}

TEST(DebugMode, NeverRetrievedReportSaysWhereTheTaskWasCreated) {
  DebugLoop d;
  {
    const unsigned line = __LINE__ + 1;
    Task<void> t = d.loop.create_task(fail(), "failing");
    d.loop.run_until_complete(block_for(d.clock.get(), 0));
    ASSERT_TRUE(t.done());
    const std::string where = std::string(__FILE__) + ":" + std::to_string(line);
    t = {};  // the last reference: the report comes now
    ASSERT_EQ(d.reports.size(), 1u);
    const std::string& m = d.reports.messages[0];
    EXPECT_TRUE(starts_with(m, "Task exception was never retrieved")) << m;
    EXPECT_TRUE(contains(m, "<Task name='failing' created at " + where + ">")) << m;
  }
}

Coro<void> forever() { co_await corio::sleep(1000s); }

TEST(DebugMode, DestroyedPendingReportSaysWhereTheTaskWasCreated) {
  DebugLoop d;
  const unsigned line = __LINE__ + 1;
  d.loop.create_task(forever(), "stuck");
  d.loop.run_until_complete(block_for(d.clock.get(), 0));
  d.loop.close();
  ASSERT_EQ(d.reports.size(), 1u);
  const std::string& m = d.reports.messages[0];
  EXPECT_TRUE(starts_with(m, "Task was destroyed but it is pending!")) << m;
  EXPECT_TRUE(contains(m, std::string(__FILE__) + ":" + std::to_string(line))) << m;
}

TEST(DebugMode, NoCreationSiteWhenOff) {
  DebugLoop d(false);
  d.loop.create_task(forever(), "stuck");
  d.loop.run_until_complete(block_for(d.clock.get(), 0));
  d.loop.close();
  ASSERT_EQ(d.reports.size(), 1u);
  EXPECT_FALSE(contains(d.reports.messages[0], "created at")) << d.reports.messages[0];
}

// ---- the thread check -------------------------------------------------------------------

// From another thread while the loop runs: call_soon and create_task throw in
// debug mode; call_soon_threadsafe is the way, and works.
Coro<void> poke_from_thread(std::string* error, bool* threadsafe_ran) {
  corio::EventLoop& loop = corio::get_running_loop();
  corio::Future<void> done = loop.create_future();
  // Future handles are loop-affine: the thread only carries a pointer.
  corio::Future<void>* done_ptr = &done;
  // The hold tells the deadlock check that the thread will post.
  std::thread t([&loop, error, threadsafe_ran, done_ptr, hold = loop.hold_threadsafe()]() mutable {
    try {
      loop.call_soon([] {});
    } catch (const corio::RuntimeError& e) {
      *error = e.what();
    }
    hold.post_and_release([threadsafe_ran, done_ptr] {
      *threadsafe_ran = true;
      done_ptr->set_result();
    });
  });
  co_await done;
  t.join();
}

TEST(DebugMode, CallSoonFromAnotherThreadIsAnError) {
  corio::RunOptions opts;
  opts.debug = true;
  std::string error;
  bool threadsafe_ran = false;
  corio::run(poke_from_thread(&error, &threadsafe_ran), opts);
  EXPECT_TRUE(contains(error, "Non-thread-safe operation")) << error;
  EXPECT_TRUE(threadsafe_ran);
}

}  // namespace
}  // namespace corio_test
