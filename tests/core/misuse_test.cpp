// Misuse is an error, not undefined behaviour: a Coro awaited twice (or moved
// from, or handed to a task) throws asyncio's RuntimeError; create_task(fn,
// args...) keeps a capturing lambda alive for the task's whole life; and
// run_main gives main() Python's exit statuses.
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "core/test_support.hpp"

using namespace std::chrono_literals;
using corio::Coro;
using corio::Task;
using corio_test::virtual_time;

namespace {

Coro<int> seven() {
  co_await corio::sleep(1ms);
  co_return 7;
}

// The RuntimeError's text, or "" when none was thrown.
template <class C>
Coro<std::string> reuse_error(C& c) {
  try {
    (void)co_await std::move(c);
  } catch (const corio::RuntimeError& e) {
    co_return e.what();
  }
  co_return "";
}

Coro<void> awaited_twice() {
  Coro<int> c = seven();
  EXPECT_EQ(co_await c, 7);
  EXPECT_FALSE(c.valid());  // awaiting consumed it
  EXPECT_EQ(co_await reuse_error(c), "cannot reuse already awaited coroutine");
}

TEST(CoroMisuse, AwaitingTwiceIsRuntimeError) { corio::run(awaited_twice(), virtual_time()); }

Coro<void> moved_from() {
  Coro<int> c = seven();
  Coro<int> other = std::move(c);
  EXPECT_EQ(co_await reuse_error(c), "cannot reuse already awaited coroutine");
  EXPECT_EQ(co_await std::move(other), 7);
}

TEST(CoroMisuse, AwaitingAMovedFromCoroIsRuntimeError) { corio::run(moved_from(), virtual_time()); }

Coro<void> given_to_a_task() {
  Coro<int> c = seven();
  Task<int> t = corio::create_task(std::move(c));
  EXPECT_EQ(co_await reuse_error(c), "cannot reuse already awaited coroutine");
  EXPECT_EQ(co_await t, 7);
}

TEST(CoroMisuse, AwaitingACoroHandedToATaskIsRuntimeError) {
  corio::run(given_to_a_task(), virtual_time());
}

Coro<int> throws_logic_error() {
  throw std::logic_error("first");
  co_return 0;
}

Coro<void> failed_then_reused() {
  Coro<int> c = throws_logic_error();
  EXPECT_THROW((void)co_await c, std::logic_error);
  EXPECT_EQ(co_await reuse_error(c), "cannot reuse already awaited coroutine");
}

TEST(CoroMisuse, ACoroThatThrewCannotBeAwaitedAgainEither) {
  corio::run(failed_then_reused(), virtual_time());
}

// ---- create_task(fn, args...) -------------------------------------------------------------

// The closure and its string die before the task first runs: the task owns
// copies of both.
Task<std::string> start_greeter() {
  std::string name = "ada";
  auto greet = [name](std::string greeting, int times) -> Coro<std::string> {
    std::string out;
    for (int i = 0; i < times; ++i) {
      co_await corio::sleep(1s);  // suspends: a dangling closure would show here
      out += greeting + " " + name + ";";
    }
    co_return out;
  };
  return corio::create_task(greet, std::string("hi"), 2);
}

Coro<void> owned_captures() {
  Task<std::string> t = start_greeter();
  EXPECT_EQ(co_await t, "hi ada;hi ada;");
}

TEST(CreateTaskCallable, TheTaskOwnsTheCallableAndItsArguments) {
  corio::run(owned_captures(), virtual_time());
}

struct MoveOnlyCounter {
  std::unique_ptr<int> n = std::make_unique<int>(0);
  Coro<int> operator()() {
    co_await corio::sleep(1s);
    co_return ++*n;
  }
};

Coro<void> move_only_callable() {
  corio::EventLoop& loop = corio::get_running_loop();
  Task<int> t = loop.create_task(MoveOnlyCounter{});
  int done = 0;
  Task<void> v = loop.create_task(
      [](int* out) -> Coro<void> {
        co_await corio::sleep(2s);
        *out = 1;
      },
      &done);
  EXPECT_EQ(co_await t, 1);
  co_await v;
  EXPECT_EQ(done, 1);
}

TEST(CreateTaskCallable, MoveOnlyCallablesAndTheLoopsOwnForm) {
  corio::run(move_only_callable(), virtual_time());
}

// ---- run_main --------------------------------------------------------------------------------

Coro<int> returns(int v) {
  co_await corio::sleep(1ms);
  co_return v;
}
Coro<void> returns_nothing() { co_await corio::sleep(1ms); }
Coro<void> throws_runtime(std::string msg) {
  co_await corio::sleep(1ms);
  throw std::runtime_error(msg);
}

TEST(RunMain, AnIntResultIsTheExitStatus) {
  EXPECT_EQ(corio::run_main(returns(3)), 3);
  EXPECT_EQ(corio::run_main(returns(0)), 0);
  EXPECT_EQ(corio::run_main(returns_nothing()), 0);
}

TEST(RunMain, AnUncaughtExceptionIsPrintedWithItsTypeAndGivesOne) {
  testing::internal::CaptureStderr();
  const int status = corio::run_main(throws_runtime("disk full"));
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(status, 1);
  EXPECT_NE(err.find("std::runtime_error: disk full"), std::string::npos) << err;
}

Coro<void> times_out() {
  co_await corio::sleep(1ms);
  throw corio::TimeoutError();
}

TEST(RunMain, ATimeoutIsNamedOnce) {
  testing::internal::CaptureStderr();
  const int status = corio::run_main(times_out());
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(status, 1);
  EXPECT_NE(err.find("TimeoutError"), std::string::npos) << err;
  EXPECT_EQ(err.find("TimeoutError: TimeoutError"), std::string::npos) << err;
}

}  // namespace
