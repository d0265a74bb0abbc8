// Async stack traces in the loop's reports: "Task exception was never
// retrieved" names the co_awaits the exception left through, "Task was
// destroyed but it is pending!" the chain the task was suspended in, and
// run_main's uncaught-exception message the chain main's exception took.
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "core/test_support.hpp"

namespace corio_test {
namespace {

using corio::Coro;
using corio::EventLoop;
using corio::Task;
using namespace std::chrono_literals;

unsigned g_throw_line = 0, g_mid_line = 0, g_top_line = 0;

Coro<void> thrower() {
  co_await mark(&g_throw_line, corio::sleep(1s));
  throw std::runtime_error("deep failure");
}
Coro<void> mid() { co_await mark(&g_mid_line, thrower()); }
Coro<void> top() { co_await mark(&g_top_line, mid()); }

// "File '...traceback_test.cpp', line N, in ...fn..." is in `m`, after `from`.
std::size_t frame_at(const std::string& m, unsigned line, const char* fn, std::size_t from = 0) {
  const std::size_t at =
      m.find("traceback_test.cpp', line " + std::to_string(line) + ", in ", from);
  if (at == std::string::npos) return at;
  const std::size_t eol = m.find('\n', at);
  return m.substr(at, eol - at).find(fn) == std::string::npos ? std::string::npos : at;
}

TEST(Traceback, NeverRetrievedReportNamesTheAwaitsTheExceptionLeftThrough) {
  EventLoop loop(corio_testing::virtual_time());
  Reports reports;
  reports.install(loop);
  {
    Task<void> t = loop.create_task(top(), "failing");
    while (!t.done()) loop.run_once();
  }
  ASSERT_EQ(reports.size(), 1u);
  const std::string& m = reports.messages[0];
  EXPECT_TRUE(starts_with(m, "Task exception was never retrieved <Task name='failing'>")) << m;
  EXPECT_NE(m.find("+ Raised through (innermost first"), std::string::npos) << m;
  const std::size_t a = frame_at(m, g_throw_line, "thrower");
  const std::size_t b = frame_at(m, g_mid_line, "mid", a == std::string::npos ? 0 : a);
  const std::size_t c = frame_at(m, g_top_line, "top", b == std::string::npos ? 0 : b);
  EXPECT_TRUE(a != std::string::npos && b != std::string::npos && c != std::string::npos) << m;
}

Coro<void> catches_and_throws_another() {
  try {
    co_await mid();
  } catch (const std::runtime_error&) {
  }
  throw std::logic_error("second");
}

TEST(Traceback, AnotherExceptionStartsTheTraceWhereItLeft) {
  EventLoop loop(corio_testing::virtual_time());
  Reports reports;
  reports.install(loop);
  {
    Task<void> t = loop.create_task(catches_and_throws_another());
    while (!t.done()) loop.run_once();
  }
  ASSERT_EQ(reports.size(), 1u);
  const std::string& m = reports.messages[0];
  EXPECT_EQ(m.find("in " + std::string("thrower")), std::string::npos) << m;
  EXPECT_NE(m.find("catches_and_throws_another"), std::string::npos) << m;
}

Coro<void> parked() { co_await mark(&g_throw_line, corio::sleep(1h)); }
Coro<void> parks() { co_await mark(&g_mid_line, parked()); }

TEST(Traceback, DestroyedPendingReportShowsTheChainItWasSuspendedIn) {
  EventLoop loop(corio_testing::virtual_time());
  Reports reports;
  reports.install(loop);
  loop.create_task(parks(), "parked");
  loop.run_once();
  loop.close();
  ASSERT_EQ(reports.size(), 1u);
  const std::string& m = reports.messages[0];
  EXPECT_TRUE(starts_with(m, "Task was destroyed but it is pending! <Task name='parked'>")) << m;
  EXPECT_NE(m.find("\n+ Call stack (awaiting sleep):\n|   File '"), std::string::npos) << m;
  const std::size_t a = frame_at(m, g_throw_line, "parked");
  EXPECT_NE(a, std::string::npos) << m;
  EXPECT_NE(frame_at(m, g_mid_line, "parks", a == std::string::npos ? 0 : a), std::string::npos)
      << m;
}

Coro<int> main_fails() {
  co_await top();
  co_return 0;
}

TEST(Traceback, RunMainPrintsTheChainOfTheUncaughtException) {
  ::testing::internal::CaptureStderr();
  const int status = corio::run_main(main_fails(), corio_testing::virtual_time());
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(status, 1);
  EXPECT_NE(err.find("uncaught exception: std::runtime_error: deep failure"), std::string::npos)
      << err;
  EXPECT_NE(frame_at(err, g_throw_line, "thrower"), std::string::npos) << err;
  EXPECT_NE(err.find("main_fails"), std::string::npos) << err;
}

}  // namespace
}  // namespace corio_test
