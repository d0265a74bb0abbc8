// The observer seam (detail/loop_observer.hpp), its contract item by item,
// with a recording observer in place of the debug layer's for each test.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "core/test_support.hpp"
#include <corio/detail/loop_observer.hpp>

namespace corio_test {
namespace {

using corio::Coro;
using namespace std::chrono_literals;

std::vector<std::string>* g_log = nullptr;
bool g_watching = true;

class Recorder final : public corio::detail::LoopObserver {
 public:
  bool watching() const noexcept override { return g_watching; }
  void running(bool on) noexcept override { note(on ? "run" : "stop"); }
  void step_begin() noexcept override { note("begin"); }
  void step_end(corio::detail::TaskBase* task) noexcept override {
    note(task ? "end task" : "end");
  }
  void blocking(bool on) noexcept override { note(on ? "block" : "unblock"); }
  void closing() noexcept override { note("closing"); }
  void set_stall_detector(corio::StallOptions opts) override {
    note(opts.enabled ? "stall on" : "stall off");
  }
  corio::StallOptions stall_detector() const override { return {}; }
  std::uint64_t stalls() const noexcept override { return 7; }

 private:
  static void note(const char* what) {
    if (g_log) g_log->push_back(what);
  }
};

// Installs the recorder for one test, and the debug layer's factory again after it.
struct Recording {
  std::vector<std::string> log;
  corio::detail::LoopObserverFactory saved = corio::detail::loop_observer_factory();
  explicit Recording(bool watching) {
    g_log = &log;
    g_watching = watching;
    corio::detail::set_loop_observer_factory(
        [](corio::EventLoop&, const corio::RunOptions&) -> std::unique_ptr<corio::detail::LoopObserver> {
          return std::make_unique<Recorder>();
        });
  }
  ~Recording() {
    corio::detail::set_loop_observer_factory(saved);
    g_log = nullptr;
  }
  std::size_t count(const std::string& what) const {
    return static_cast<std::size_t>(std::count(log.begin(), log.end(), what));
  }
};

Coro<void> two_steps() { co_await corio::sleep(0s); }

TEST(LoopObserver, HearsRunStepsBlockingAndCloseInOrder) {
  Recording rec(true);
  {
    corio::EventLoop loop;
    loop.run_until_complete(loop.create_task(two_steps()));
    loop.close();
  }
  ASSERT_FALSE(rec.log.empty());
  EXPECT_EQ(rec.log.front(), "run");                    // 3
  EXPECT_EQ(rec.log.back(), "closing");                  // 5
  EXPECT_EQ(rec.log[rec.log.size() - 2], "stop");        // 3
  EXPECT_GE(rec.count("begin"), 2u);                     // 4: one per batch
  EXPECT_EQ(rec.count("begin"), rec.count("end"));
  for (std::size_t i = 0; i + 1 < rec.log.size(); ++i) {
    if (rec.log[i] == "begin") {
      EXPECT_EQ(rec.log[i + 1], "end") << "at " << i;
    }
  }
}

TEST(LoopObserver, BlockingBracketsAPollThatWaits) {
  Recording rec(true);
  corio::EventLoop loop;
  loop.run_until_complete(loop.create_task([]() -> Coro<void> { co_await corio::sleep(1ms); }));
  const auto block = std::find(rec.log.begin(), rec.log.end(), "block");
  ASSERT_NE(block, rec.log.end());
  ASSERT_NE(block + 1, rec.log.end());
  EXPECT_EQ(*(block + 1), "unblock");
}

TEST(LoopObserver, DebugModeReportsEachStepWithItsTask) {
  Recording rec(true);
  corio::RunOptions opts;
  opts.debug = true;
  corio::EventLoop loop(opts);
  loop.run_until_complete(loop.create_task(two_steps()));
  EXPECT_GE(rec.count("end task"), 2u);  // 4: the step's task when the loop knows it
}

TEST(LoopObserver, NotWatchingMeansNoStepHooks) {
  Recording rec(false);
  corio::EventLoop loop;
  loop.run_until_complete(loop.create_task(two_steps()));
  EXPECT_EQ(rec.count("begin"), 0u);
  EXPECT_EQ(rec.count("block"), 0u);
  EXPECT_EQ(rec.count("run"), 1u);  // 3 holds whatever watching() says
}

TEST(LoopObserver, StallControlsAndCountGoToTheObserver) {
  Recording rec(false);
  corio::EventLoop loop;
  corio::StallOptions on;
  on.enabled = true;
  loop.set_stall_detector(on);
  EXPECT_EQ(rec.count("stall on"), 1u);
  EXPECT_EQ(loop.stats().stalls, 7u);
}

TEST(LoopObserver, WithoutAnObserverTheStallDetectorIsReportedMissing) {
  Recording rec(false);
  corio::detail::set_loop_observer_factory(nullptr);
  corio::EventLoop loop;
  corio::StallOptions on;
  on.enabled = true;
  EXPECT_THROW(loop.set_stall_detector(on), corio::RuntimeError);
  EXPECT_FALSE(loop.stall_detector().enabled);
  EXPECT_EQ(loop.stats().stalls, 0u);
  loop.run_until_complete(loop.create_task(two_steps()));  // runs unobserved
  EXPECT_TRUE(rec.log.empty());
}

}  // namespace
}  // namespace corio_test
