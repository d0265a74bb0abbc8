// EventLoop: callback ordering, stop/run/close, exception handling, the
// running-loop queries. Timers and handles: timer_test.cpp; threads and fds:
// loop_io_test.cpp.
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/test_support.hpp"

using namespace std::chrono_literals;
using corio::Coro;
using corio::EventLoop;
using corio_test::Reports;
using corio_test::virtual_time;
using Log = std::vector<std::string>;

namespace {

// ---- ready queue ordering ----------------------------------------------------

TEST(EventLoop, CallSoonRunsInFifoOrder) {
  EventLoop loop;
  Log log;
  for (int i = 0; i < 5; ++i) loop.call_soon([&log, i] { log.push_back(std::to_string(i)); });
  loop.call_soon([&loop] { loop.stop(); });
  loop.run_forever();
  EXPECT_EQ(log, (Log{"0", "1", "2", "3", "4"}));
}

TEST(EventLoop, WorkScheduledByACallbackRunsInTheNextIteration) {
  EventLoop loop;
  Log log;
  loop.call_soon([&] {
    log.push_back("a");
    loop.call_soon([&] { log.push_back("c"); });
  });
  loop.call_soon([&] { log.push_back("b"); });
  loop.run_once();
  EXPECT_EQ(log, (Log{"a", "b"}));
  loop.run_once();
  EXPECT_EQ(log, (Log{"a", "b", "c"}));
}

TEST(EventLoop, AlreadyReadyCallbacksRunBeforeTimersExpiringInTheSameIteration) {
  EventLoop loop(virtual_time());
  Log log;
  loop.call_at(loop.time(), [&] { log.push_back("timer"); });  // due now, scheduled first
  loop.call_soon([&] { log.push_back("soon"); });
  loop.run_once();
  EXPECT_EQ(log, (Log{"soon", "timer"}));
}

// ---- stop / run_forever / run_until_complete ---------------------------------------

TEST(EventLoop, StopEndsRunForeverAfterTheCurrentBatch) {
  EventLoop loop;
  Log log;
  loop.call_soon([&] {
    log.push_back("a");
    loop.stop();
    loop.call_soon([&] { log.push_back("next-run"); });
  });
  loop.call_soon([&] { log.push_back("b"); });  // same batch: still runs
  loop.run_forever();
  EXPECT_EQ(log, (Log{"a", "b"}));
  EXPECT_FALSE(loop.is_running());
  loop.call_soon([&] { loop.stop(); });
  loop.run_forever();  // picks up where it left off
  EXPECT_EQ(log, (Log{"a", "b", "next-run"}));
}

TEST(EventLoop, StopBeforeRunForeverRunsOneIteration) {
  EventLoop loop;
  Log log;
  loop.call_soon([&] {
    log.push_back("a");
    loop.call_soon([&] { log.push_back("b"); });
  });
  loop.stop();
  loop.run_forever();
  EXPECT_EQ(log, (Log{"a"}));
}

Coro<int> add_later(int a, int b) {
  co_await corio::sleep(1s);
  co_return a + b;
}
Coro<void> throw_later() {
  co_await corio::sleep(1s);
  throw std::runtime_error("late failure");
}

TEST(EventLoop, RunUntilCompleteWithCoroTaskAndFuture) {
  EventLoop loop(virtual_time());
  EXPECT_EQ(loop.run_until_complete(add_later(2, 3)), 5);
  EXPECT_EQ(loop.time(), 1.0);

  auto task = loop.create_task(add_later(4, 5));
  EXPECT_EQ(loop.run_until_complete(task), 9);
  EXPECT_TRUE(task.done());
  EXPECT_EQ(task.result(), 9);

  auto fut = loop.create_future<std::string>();
  loop.call_later(3s, [fut]() mutable { fut.set_result("done"); });
  EXPECT_EQ(loop.run_until_complete(fut), "done");
  EXPECT_EQ(loop.time(), 5.0);

  auto ready = loop.create_future<int>();
  ready.set_result(7);
  EXPECT_EQ(loop.run_until_complete(ready), 7);  // already done: no iteration
  EXPECT_FALSE(loop.is_running());
}

TEST(EventLoop, RunUntilCompleteRethrowsTheException) {
  EventLoop loop(virtual_time());
  EXPECT_THROW(loop.run_until_complete(throw_later()), std::runtime_error);
  auto fut = loop.create_future<void>();
  loop.call_soon([fut]() mutable { fut.cancel("gone"); });
  try {
    loop.run_until_complete(fut);
    ADD_FAILURE() << "expected CancelledError";
  } catch (const corio::CancelledError& e) {
    EXPECT_EQ(e.message(), "gone");
  }
}

TEST(EventLoop, RunUntilCompleteThrowsIfTheLoopStopsFirst) {
  EventLoop loop(virtual_time());
  auto fut = loop.create_future<int>();
  loop.call_soon([&] { loop.stop(); });
  EXPECT_THROW(loop.run_until_complete(fut), corio::RuntimeError);
  EXPECT_FALSE(fut.done());
  loop.call_soon([fut]() mutable { fut.set_result(1); });
  EXPECT_EQ(loop.run_until_complete(fut), 1);  // usable afterwards
}

// ---- state and close ---------------------------------------------------------

TEST(EventLoop, IsRunningAndIsClosed) {
  EventLoop loop;
  EXPECT_FALSE(loop.is_running());
  EXPECT_FALSE(loop.is_closed());
  bool running_inside = false;
  loop.call_soon([&] {
    running_inside = loop.is_running();
    loop.stop();
  });
  loop.run_forever();
  EXPECT_TRUE(running_inside);
  EXPECT_FALSE(loop.is_running());
  loop.close();
  EXPECT_TRUE(loop.is_closed());
  loop.close();  // twice is fine
  EXPECT_TRUE(loop.is_closed());
}

TEST(EventLoop, CloseDropsQueuedWorkAndTheClosedLoopRefusesMore) {
  EventLoop loop;
  auto state = std::make_shared<int>(0);
  bool ran = false;
  loop.call_soon([state, &ran] { ran = true; });
  loop.call_later(1s, [state, &ran] { ran = true; });
  EXPECT_EQ(state.use_count(), 3);
  loop.close();
  EXPECT_FALSE(ran);
  EXPECT_EQ(state.use_count(), 1);  // the callbacks' captures were released
  EXPECT_THROW(loop.call_soon([] {}), corio::RuntimeError);
  EXPECT_THROW(loop.call_later(1s, [] {}), corio::RuntimeError);
  EXPECT_THROW(loop.call_soon_threadsafe([] {}), corio::RuntimeError);
  EXPECT_THROW(loop.run_forever(), corio::RuntimeError);
  EXPECT_THROW(loop.run_until_complete(add_later(1, 2)), corio::RuntimeError);
  EXPECT_FALSE(loop.remove_reader(0));
}

TEST(EventLoop, CloseWhileRunningThrows) {
  EventLoop loop;
  bool threw = false;
  loop.call_soon([&] {
    try {
      loop.close();
    } catch (const corio::RuntimeError&) {
      threw = true;
    }
    loop.stop();
  });
  loop.run_forever();
  EXPECT_TRUE(threw);
  EXPECT_FALSE(loop.is_closed());
}

// ---- exceptions in callbacks -------------------------------------------------------

TEST(EventLoop, ExceptionInACallbackGoesToTheHandlerAndTheLoopContinues) {
  EventLoop loop;
  Reports reports;
  reports.install(loop);
  Log log;
  loop.call_soon([] { throw std::runtime_error("boom"); });
  loop.call_soon([&] { log.push_back("after"); });
  loop.call_soon([&] {
    loop.call_soon([&] {
      log.push_back("next iteration");
      loop.stop();
    });
  });
  loop.run_forever();
  EXPECT_EQ(log, (Log{"after", "next iteration"}));
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports.messages[0], "Exception in callback");
  EXPECT_EQ(corio_test::what_of(reports.exceptions[0]), "boom");
}

TEST(EventLoop, AThrowingExceptionHandlerDoesNotStopTheLoop) {
  EventLoop loop;
  loop.set_exception_handler(
      [](EventLoop&, const corio::ExceptionContext&) { throw std::logic_error("handler broke"); });
  bool after = false;
  loop.call_soon([] { throw std::runtime_error("boom"); });
  loop.call_soon([&] {
    after = true;
    loop.stop();
  });
  ::testing::internal::CaptureStderr();
  loop.run_forever();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(after);
  EXPECT_NE(err.find("boom"), std::string::npos) << err;
}

// ---- running loop queries ------------------------------------------------------------

Coro<bool> nested_run_throws() {
  try {
    corio::run(add_later(1, 1));
  } catch (const corio::RuntimeError&) {
    co_return true;
  }
  co_return false;
}
Coro<bool> nested_run_until_complete_throws() {
  EventLoop& loop = corio::get_running_loop();
  auto fut = loop.create_future<int>();
  fut.set_result(1);
  auto pending = loop.create_future<int>();
  try {
    (void)loop.run_until_complete(pending);
  } catch (const corio::RuntimeError&) {
    try {
      EventLoop other;
      other.run_forever();
    } catch (const corio::RuntimeError&) {
      co_return true;
    }
  }
  co_return false;
}

TEST(EventLoop, RunInsideARunningLoopThrowsRuntimeError) {
  EXPECT_TRUE(corio::run(nested_run_throws(), virtual_time()));
  EXPECT_TRUE(corio::run(nested_run_until_complete_throws(), virtual_time()));
}

TEST(EventLoop, GetRunningLoopOutsideALoopThrows) {
  EXPECT_THROW(corio::get_running_loop(), corio::RuntimeError);
  EventLoop loop;
  EventLoop* seen = nullptr;
  loop.call_soon([&] {
    seen = &corio::get_running_loop();
    loop.stop();
  });
  loop.run_forever();
  EXPECT_EQ(seen, &loop);
  EXPECT_THROW(corio::get_running_loop(), corio::RuntimeError);
}
}  // namespace
