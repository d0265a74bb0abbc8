// The stall detector, on real time of necessity (a watchdog thread and a
// signal): each stall is at least 5x its threshold, each quiet stretch at
// least 5x the threshold it must stay quiet under, and the assertions count
// only the reports that name the tasks the test stalls on purpose.
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/test_support.hpp"

// Not static and not inlined: the native stack names it (the test binary
// exports its symbols; tests/CMakeLists.txt).
[[gnu::noinline]] void corio_stall_test_busy_wait(std::chrono::milliseconds how_long) {
  const auto until = std::chrono::steady_clock::now() + how_long;
  while (std::chrono::steady_clock::now() < until) {
  }
}

namespace {

using corio::Coro;
using corio::EventLoop;
using namespace std::chrono_literals;

corio::RunOptions stall_options(std::chrono::milliseconds threshold,
                                std::chrono::milliseconds interval = 1000ms) {
  corio::RunOptions opts;
  opts.stall.enabled = true;
  opts.stall.threshold = threshold;
  opts.stall.report_interval = interval;
  return opts;
}

Coro<void> hog(std::chrono::milliseconds how_long) {
  co_await corio::sleep(0s);
  corio_stall_test_busy_wait(how_long);
  co_await corio::sleep(0s);
}

Coro<void> hogs(EventLoop* loop, int count, std::chrono::milliseconds how_long) {
  for (int i = 0; i < count; ++i)
    co_await loop->create_task(hog(how_long), "hog-" + std::to_string(i));
}

std::size_t reports_naming(const corio_testing::Reports& r, const std::string& part) {
  std::size_t n = 0;
  for (const std::string& m : r.messages) n += m.find(part) != std::string::npos;
  return n;
}

TEST(StallDetector, IsOffByDefault) {
  EventLoop loop;
  EXPECT_FALSE(loop.stall_detector().enabled);
  EXPECT_EQ(loop.stats().stalls, 0u);
}

TEST(StallDetector, ReportsABusyStepWithItsTaskAndNativeStack) {
  EventLoop loop(stall_options(100ms));
  corio_testing::Reports reports;
  reports.install(loop);
  // 10x the threshold: under a loaded CI the watchdog's signal can come late,
  // and the native stack must be taken inside the busy wait. Not 20x: a step
  // that long is the watchdog's own "has not ended" report, to stderr.
  loop.run_until_complete(hogs(&loop, 1, 1000ms));
  ASSERT_EQ(reports_naming(reports, "hog-0"), 1u) << reports.joined();
  std::string report;
  for (const std::string& m : reports.messages)
    if (m.find("hog-0") != std::string::npos) report = m;
  EXPECT_TRUE(corio_testing::starts_with(report, "Stall: executing <Task name='hog-0'>")) << report;
  EXPECT_NE(report.find("threshold 0.100"), std::string::npos) << report;
  // Taken inside the step: where in it the signal lands (in the busy wait,
  // or in the clock's vDSO, which the unwinder may step over to the caller)
  // is chance, the step's own frame is not (as the watchdog test below).
  EXPECT_NE(report.find("Native stack of the loop thread"), std::string::npos) << report;
  EXPECT_NE(report.find("TaskBase::step"), std::string::npos) << report;
  // Where the step ended: hog's second co_await.
  EXPECT_NE(report.find("stall_test.cpp"), std::string::npos) << report;
  EXPECT_GE(loop.stats().stalls, 1u);
}

// The stalled step is the task's last: it is gone by the time the step is
// over, so the report names it by the id the signal handler noted.
Coro<void> last_step_hog(std::chrono::milliseconds how_long) {
  co_await corio::sleep(0s);
  corio_stall_test_busy_wait(how_long);
}

Coro<void> awaits_last_step_hog(EventLoop* loop, std::uint64_t* id) {
  corio::Task<void> t = loop->create_task(last_step_hog(1000ms), "gone");  // 10x: as above
  *id = corio::TaskRef(t).id();
  co_await t;
}

TEST(StallDetector, ATaskDoneInItsStalledStepIsNamedByItsId) {
  EventLoop loop(stall_options(100ms));
  corio_testing::Reports reports;
  reports.install(loop);
  std::uint64_t id = 0;
  loop.run_until_complete(awaits_last_step_hog(&loop, &id));
  const std::string expected = "Stall: executing Task id=" + std::to_string(id) + " (done by the end of the step)";
  ASSERT_EQ(reports_naming(reports, expected), 1u) << reports.joined();
  // The native stack is taken inside the step; which frame the signal lands
  // in (the busy wait, or the clock's vDSO the unwinder may step over) is
  // chance, the step's own frame is not (as above).
  EXPECT_EQ(reports_naming(reports, "Native stack of the loop thread"), 1u) << reports.joined();
  EXPECT_EQ(reports_naming(reports, "TaskBase::step"), 1u) << reports.joined();
}

Coro<void> sleep_for(std::chrono::milliseconds d) { co_await corio::sleep(d); }

TEST(StallDetector, AnIdleLoopIsNotStalled) {
  EventLoop loop(stall_options(100ms));
  corio_testing::Reports reports;
  reports.install(loop);
  loop.run_until_complete(sleep_for(500ms));
  EXPECT_EQ(reports.size(), 0u) << reports.joined();
  EXPECT_EQ(loop.stats().stalls, 0u);
}

TEST(StallDetector, ALoopThatIsNotRunningIsNotStalled) {
  EventLoop loop(stall_options(20ms));
  corio_testing::Reports reports;
  reports.install(loop);
  loop.run_until_complete(sleep_for(1ms));
  corio_stall_test_busy_wait(150ms);  // the thread is busy, the loop is not running
  loop.run_until_complete(sleep_for(1ms));
  EXPECT_EQ(loop.stats().stalls, 0u) << reports.joined();
}

// Three stalls within one report interval: one report; the next report,
// past the interval, says how many were left out.
TEST(StallDetector, RateLimitCountsSuppressedStalls) {
  EventLoop loop(stall_options(20ms, 2000ms));
  corio_testing::Reports reports;
  reports.install(loop);
  loop.run_until_complete(hogs(&loop, 3, 100ms));
  EXPECT_EQ(reports_naming(reports, "Stall:"), 1u) << reports.joined();
  EXPECT_GE(loop.stats().stalls, 3u);
  loop.run_until_complete(sleep_for(2100ms));
  loop.run_until_complete(loop.create_task(hog(100ms), "late"));
  ASSERT_EQ(reports_naming(reports, "late"), 1u) << reports.joined();
  EXPECT_NE(reports.messages.back().find("2 more stalls not reported"), std::string::npos)
      << reports.joined();
}

// A step that goes on long past its stall is reported by the watchdog (the
// loop thread cannot), to stderr, by task id, with the native stack.
TEST(StallDetector, TheWatchdogReportsAStepThatDoesNotEnd) {
  EventLoop loop(stall_options(10ms));  // reported by the watchdog after 200 ms
  corio_testing::Reports reports;
  reports.install(loop);
  corio::Task<void> stuck = loop.create_task(hog(1000ms), "stuck");
  testing::internal::CaptureStderr();
  loop.run_until_complete(stuck);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("has not ended"), std::string::npos) << err;
  EXPECT_NE(err.find("Task id="), std::string::npos) << err;
  // The stack is the one the step runs on: where in the step the signal
  // lands (in the busy wait, or in the clock's vDSO, which the unwinder may
  // step over to the caller) is chance, the step's own frame is not.
  EXPECT_NE(err.find("Native stack of the loop thread"), std::string::npos) << err;
  EXPECT_NE(err.find("TaskBase::step"), std::string::npos) << err;
  EXPECT_EQ(reports_naming(reports, "stuck"), 0u) << "reported twice: " << reports.joined();
}

Coro<void> busy_step(std::chrono::milliseconds how_long) {
  corio_stall_test_busy_wait(how_long);
  co_return;
}

// 60 first steps of 5 ms in one ready batch: the batch runs 300 ms, twice
// the threshold, and no step comes near it (a thirtieth: a step preempted on
// a loaded machine still passes).
Coro<void> many_short_steps(EventLoop* loop) {
  std::vector<corio::Task<void>> tasks;
  for (int i = 0; i < 60; ++i)
    tasks.push_back(loop->create_task(busy_step(5ms), "short-" + std::to_string(i)));
  for (corio::Task<void>& t : tasks) co_await t;
}

TEST(StallDetector, ShortTaskStepsOfALongBatchAreNoStall) {
  EventLoop loop(stall_options(150ms));
  corio_testing::Reports reports;
  reports.install(loop);
  loop.run_until_complete(many_short_steps(&loop));
  EXPECT_EQ(reports_naming(reports, "Stall:"), 0u) << reports.joined();
  EXPECT_EQ(loop.stats().stalls, 0u);
}

// Callbacks run with no task, so the watchdog cannot tell them apart: 30 of
// 10 ms in a row are one stall of 300 ms, and the report says so.
TEST(StallDetector, CallbacksInARowAreJudgedTogether) {
  EventLoop loop(stall_options(50ms));
  corio_testing::Reports reports;
  reports.install(loop);
  for (int i = 0; i < 30; ++i) loop.call_soon([] { corio_stall_test_busy_wait(10ms); });
  loop.run_until_complete(sleep_for(1ms));
  EXPECT_EQ(reports_naming(reports, "Stall: executing <Handle> (one callback or several in a row)"),
            1u)
      << reports.joined();
}

double seconds_in(const std::string& report) {
  const std::string before = "took at least ";
  const std::size_t at = report.find(before);
  return at == std::string::npos ? -1 : std::atof(report.c_str() + at + before.size());
}

Coro<void> two_hogs_in_one_batch(EventLoop* loop) {
  corio::Task<void> first = loop->create_task(hog(200ms), "first");
  corio::Task<void> second = loop->create_task(hog(300ms), "second");
  co_await first;
  co_await second;
}

// The report comes after the batch, 500 ms in; the time it gives is the
// first step's, as the watchdog last saw it running.
TEST(StallDetector, AStallIsTimedByItsStepNotByItsBatch) {
  EventLoop loop(stall_options(50ms, 10000ms));  // the second stall is suppressed
  corio_testing::Reports reports;
  reports.install(loop);
  loop.run_until_complete(two_hogs_in_one_batch(&loop));
  ASSERT_EQ(reports_naming(reports, "<Task name='first'>"), 1u) << reports.joined();
  for (const std::string& m : reports.messages) {
    if (m.find("<Task name='first'>") == std::string::npos) continue;
    EXPECT_GE(seconds_in(m), 0.05) << m;
    EXPECT_LT(seconds_in(m), 0.3) << m;
  }
}

Coro<void> await_forever(corio::Future<void> never) { co_await never; }

// The watchdog is corio's own thread, not one that could post to the loop:
// a lost wake-up is still reported while the detector is on.
TEST(StallDetector, TheWatchdogDoesNotHideALostWakeUp) {
  EventLoop loop(stall_options(100ms));
  corio::Future<void> never = loop.create_future();
  std::vector<std::string> messages;
  loop.set_exception_handler([&](EventLoop&, const corio::ExceptionContext& c) {
    messages.push_back(c.message);
    if (!never.done()) never.set_result();
  });
  loop.run_until_complete(await_forever(never));
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_TRUE(corio_testing::starts_with(messages[0], "deadlock: every task is suspended"))
      << messages[0];
}

TEST(StallDetector, CorioStallMsTurnsItOnAndOff) {
  ASSERT_EQ(::setenv("CORIO_STALL_MS", "40", 1), 0);
  {
    EventLoop loop;
    EXPECT_TRUE(loop.stall_detector().enabled);
    EXPECT_EQ(loop.stall_detector().threshold, 40ms);
  }
  ASSERT_EQ(::setenv("CORIO_STALL_MS", "0", 1), 0);
  {
    EventLoop loop(stall_options(50ms));
    EXPECT_FALSE(loop.stall_detector().enabled);
    loop.set_stall_detector(stall_options(70ms).stall);  // an explicit call wins
    EXPECT_EQ(loop.stall_detector().threshold, 70ms);
    loop.set_stall_detector({});
    EXPECT_FALSE(loop.stall_detector().enabled);
  }
  ::unsetenv("CORIO_STALL_MS");
}

}  // namespace
