// Future<T>: every state transition, its errors, done-callbacks, and awaiting
// a future from a task.
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/test_support.hpp"

using namespace std::chrono_literals;
using corio::CancelledError;
using corio::Coro;
using corio::EventLoop;
using corio::Future;
using corio::InvalidStateError;
using corio_test::Reports;
using corio_test::virtual_time;
using Log = std::vector<std::string>;

namespace {

std::exception_ptr make_error(const char* what) {
  return std::make_exception_ptr(std::runtime_error(what));
}

// ---- states ---------------------------------------------------------------------------

TEST(Future, DefaultHandleIsInvalid) {
  Future<int> f;
  EXPECT_FALSE(f.valid());
}

TEST(Future, NewFutureIsPending) {
  EventLoop loop;
  auto f = loop.create_future<int>();
  EXPECT_TRUE(f.valid());
  EXPECT_FALSE(f.done());
  EXPECT_FALSE(f.cancelled());
  EXPECT_THROW(f.result(), InvalidStateError);
  EXPECT_THROW(f.exception(), InvalidStateError);
}

TEST(Future, SetResult) {
  EventLoop loop;
  auto f = loop.create_future<std::string>();
  f.set_result("value");
  EXPECT_TRUE(f.done());
  EXPECT_FALSE(f.cancelled());
  EXPECT_EQ(f.result(), "value");
  EXPECT_EQ(f.result(), "value");  // copyable values are copied: readable twice
  EXPECT_EQ(f.exception(), nullptr);
}

TEST(Future, EveryTransitionOutOfFinishedFails) {
  EventLoop loop;
  auto f = loop.create_future<int>();
  f.set_result(1);
  EXPECT_THROW(f.set_result(2), InvalidStateError);
  EXPECT_THROW(f.set_exception(make_error("x")), InvalidStateError);
  EXPECT_FALSE(f.cancel());
  EXPECT_FALSE(f.cancelled());
  EXPECT_EQ(f.result(), 1);
}

TEST(Future, SetException) {
  EventLoop loop;
  auto f = loop.create_future<int>();
  auto e = make_error("broken");
  f.set_exception(e);
  EXPECT_TRUE(f.done());
  EXPECT_FALSE(f.cancelled());
  EXPECT_EQ(f.exception(), e);
  try {
    (void)f.result();
    ADD_FAILURE() << "result() should rethrow";
  } catch (const std::runtime_error& x) {
    EXPECT_STREQ(x.what(), "broken");
  }
  EXPECT_THROW(f.set_result(1), InvalidStateError);
  EXPECT_THROW(f.set_exception(make_error("y")), InvalidStateError);
  EXPECT_FALSE(f.cancel());
}

TEST(Future, SetExceptionNeedsAnException) {
  EventLoop loop;
  auto f = loop.create_future<int>();
  EXPECT_THROW(f.set_exception(nullptr), corio::ValueError);
  EXPECT_FALSE(f.done());
}

TEST(Future, CancelKeepsTheMessage) {
  EventLoop loop;
  auto f = loop.create_future<int>();
  EXPECT_TRUE(f.cancel("no longer needed"));
  EXPECT_TRUE(f.done());
  EXPECT_TRUE(f.cancelled());
  EXPECT_FALSE(f.cancel("again"));
  try {
    (void)f.result();
    ADD_FAILURE() << "result() should throw CancelledError";
  } catch (const CancelledError& e) {
    EXPECT_EQ(e.message(), "no longer needed");
  }
  try {
    (void)f.exception();  // asyncio: exception() of a cancelled future raises
    ADD_FAILURE() << "exception() should throw CancelledError";
  } catch (const CancelledError& e) {
    EXPECT_EQ(e.message(), "no longer needed");
  }
  EXPECT_THROW(f.set_result(1), InvalidStateError);
  EXPECT_THROW(f.set_exception(make_error("x")), InvalidStateError);
}

TEST(Future, CancelWithoutMessage) {
  EventLoop loop;
  auto f = loop.create_future<void>();
  EXPECT_TRUE(f.cancel());
  try {
    f.result();
    ADD_FAILURE();
  } catch (const CancelledError& e) {
    EXPECT_EQ(e.message(), "");
    EXPECT_STREQ(e.what(), "CancelledError");
  }
}

TEST(Future, VoidFuture) {
  EventLoop loop;
  auto f = loop.create_future<>();
  static_assert(std::is_same_v<decltype(f), Future<void>>);
  EXPECT_THROW(f.result(), InvalidStateError);
  f.set_result();
  EXPECT_TRUE(f.done());
  f.result();
  EXPECT_THROW(f.set_result(), InvalidStateError);
}

TEST(Future, MoveOnlyValueIsMovedOutOnce) {
  EventLoop loop;
  auto f = loop.create_future<std::unique_ptr<int>>();
  f.set_result(std::make_unique<int>(42));
  std::unique_ptr<int> v = f.result();
  ASSERT_TRUE(v);
  EXPECT_EQ(*v, 42);
  EXPECT_EQ(f.result(), nullptr);  // taken
}

TEST(Future, CopiesShareOneState) {
  EventLoop loop;
  auto a = loop.create_future<int>();
  Future<int> b = a;
  auto c = loop.create_future<int>();
  EXPECT_TRUE(a == b);
  EXPECT_FALSE(a == c);
  b.set_result(3);
  EXPECT_TRUE(a.done());
  EXPECT_EQ(a.result(), 3);
}

TEST(Future, CancelledErrorIsNotAStdException) {
  static_assert(!std::is_base_of_v<std::exception, CancelledError>);
  static_assert(std::is_base_of_v<std::exception, InvalidStateError>);
  static_assert(std::is_base_of_v<std::runtime_error, corio::TimeoutError>);
  bool caught_by_std = false, caught_by_name = false;
  try {
    try {
      throw CancelledError("x");
    } catch (const std::exception&) {
      caught_by_std = true;
    }
  } catch (const CancelledError&) {
    caught_by_name = true;
  }
  EXPECT_FALSE(caught_by_std);
  EXPECT_TRUE(caught_by_name);
}

// ---- done callbacks ----------------------------------------------------------------------

TEST(FutureCallbacks, RunOnTheLoopNeverInlineAndInOrder) {
  EventLoop loop;
  auto f = loop.create_future<int>();
  Log log;
  f.add_done_callback([&](Future<int> g) { log.push_back("1:" + std::to_string(g.result())); });
  f.add_done_callback([&](Future<int> g) { log.push_back("2:" + std::to_string(g.result())); });
  f.set_result(5);
  EXPECT_TRUE(log.empty());  // scheduled, not called
  loop.run_once();
  EXPECT_EQ(log, (Log{"1:5", "2:5"}));
}

TEST(FutureCallbacks, CallbackReceivesTheSameFuture) {
  EventLoop loop;
  auto f = loop.create_future<int>();
  bool same = false;
  f.add_done_callback([&](Future<int> g) { same = (g == f); });
  f.set_result(1);
  loop.run_once();
  EXPECT_TRUE(same);
}

TEST(FutureCallbacks, AddedToADoneFutureIsScheduledSoon) {
  EventLoop loop;
  auto f = loop.create_future<int>();
  f.set_result(1);
  int calls = 0;
  f.add_done_callback([&](Future<int>) { ++calls; });
  EXPECT_EQ(calls, 0);
  loop.run_once();
  EXPECT_EQ(calls, 1);
}

TEST(FutureCallbacks, FireOnExceptionAndOnCancel) {
  EventLoop loop;
  auto failed = loop.create_future<int>();
  auto cancelled = loop.create_future<int>();
  Log log;
  failed.add_done_callback(
      [&](Future<int> g) { log.push_back(corio_test::what_of(g.exception())); });
  cancelled.add_done_callback(
      [&](Future<int> g) { log.push_back(g.cancelled() ? "cancelled" : "?"); });
  failed.set_exception(make_error("err"));
  cancelled.cancel();
  loop.run_once();
  EXPECT_EQ(log, (Log{"err", "cancelled"}));
}

TEST(FutureCallbacks, RemoveDoneCallback) {
  EventLoop loop;
  auto f = loop.create_future<int>();
  Log log;
  auto id1 = f.add_done_callback([&](Future<int>) { log.push_back("one"); });
  auto id2 = f.add_done_callback([&](Future<int>) { log.push_back("two"); });
  EXPECT_NE(id1, id2);
  EXPECT_EQ(f.remove_done_callback(id1), 1u);
  EXPECT_EQ(f.remove_done_callback(id1), 0u);
  EXPECT_EQ(f.remove_done_callback(987654), 0u);
  f.set_result(1);
  EXPECT_EQ(f.remove_done_callback(id2), 0u);  // already scheduled: too late (asyncio)
  loop.run_once();
  EXPECT_EQ(log, (Log{"two"}));
}

TEST(FutureCallbacks, ExceptionInADoneCallbackGoesToTheHandler) {
  EventLoop loop;
  Reports reports;
  reports.install(loop);
  auto f = loop.create_future<int>();
  bool second = false;
  f.add_done_callback([](Future<int>) { throw std::runtime_error("cb failed"); });
  f.add_done_callback([&](Future<int>) { second = true; });
  f.set_result(1);
  loop.run_once();
  EXPECT_TRUE(second);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(corio_test::what_of(reports.exceptions[0]), "cb failed");
}

TEST(FutureCallbacks, PendingCallbacksAreReleasedWithTheFuture) {
  EventLoop loop;
  auto captured = std::make_shared<int>(0);
  {
    auto f = loop.create_future<int>();
    f.add_done_callback([captured](Future<int>) {});
    EXPECT_EQ(captured.use_count(), 2);
  }
  EXPECT_EQ(captured.use_count(), 1);
}

TEST(FutureCallbacks, ScheduledCallbacksAreDroppedOnClose) {
  EventLoop loop;
  auto captured = std::make_shared<int>(0);
  bool ran = false;
  {
    auto f = loop.create_future<int>();
    f.add_done_callback([captured, &ran](Future<int>) { ran = true; });
    f.set_result(1);
  }
  loop.close();
  EXPECT_FALSE(ran);
  EXPECT_EQ(captured.use_count(), 1);
}

TEST(FutureCallbacks, CompletingAFutureOfAClosedLoopReleasesItsCallbacks) {
  // asyncio refuses to schedule on a closed loop. Whatever corio does, the
  // callback must not run later and what it captured must not leak.
  auto captured = std::make_shared<int>(0);
  bool ran = false;
  {
    EventLoop loop;
    auto f = loop.create_future<int>();
    f.add_done_callback([captured, &ran](Future<int>) { ran = true; });
    loop.close();
    try {
      f.set_result(1);
    } catch (const corio::RuntimeError&) {
      // acceptable: "Event loop is closed"
    }
  }
  EXPECT_FALSE(ran);
  EXPECT_EQ(captured.use_count(), 1) << "the done-callback (and the future) leaked";
}

// ---- awaiting ------------------------------------------------------------------------------

Coro<int> await_future(Future<int> f, Log* log) {
  log->push_back("waiting");
  int v = co_await f;
  log->push_back("got " + std::to_string(v));
  co_return v;
}

TEST(FutureAwait, ResumesOnTheIterationAfterSetResult) {
  EventLoop loop;
  Log log;
  auto f = loop.create_future<int>();
  auto t = loop.create_task(await_future(f, &log));
  loop.run_once();
  EXPECT_EQ(log, (Log{"waiting"}));
  f.set_result(9);
  EXPECT_EQ(log, (Log{"waiting"}));  // not resumed inline
  loop.run_once();
  EXPECT_EQ(log, (Log{"waiting", "got 9"}));
  EXPECT_TRUE(t.done());
  EXPECT_EQ(t.result(), 9);
}

Coro<std::string> await_failure(Future<int> f) {
  try {
    co_await f;
  } catch (const std::runtime_error& e) {
    co_return std::string("caught ") + e.what();
  }
  co_return "no exception";
}

TEST(FutureAwait, ExceptionIsThrownAtTheAwait) {
  EventLoop loop;
  auto f = loop.create_future<int>();
  loop.call_soon([f]() mutable { f.set_exception(make_error("bad")); });
  EXPECT_EQ(loop.run_until_complete(await_failure(f)), "caught bad");
}

Coro<int> await_plain(Future<int> f) { co_return co_await f; }

TEST(FutureAwait, CancelledFutureCancelsTheAwaitingTaskIfUncaught) {
  EventLoop loop;
  auto f = loop.create_future<int>();
  auto t = loop.create_task(await_plain(f));
  loop.call_soon([f]() mutable { f.cancel("stop"); });
  try {
    loop.run_until_complete(t);
    ADD_FAILURE();
  } catch (const CancelledError& e) {
    EXPECT_EQ(e.message(), "stop");
  }
  EXPECT_TRUE(t.cancelled());
}

Coro<void> log_then_await(Future<int> f, Log* log, std::string name) {
  log->push_back(name + " before");
  co_await f;
  log->push_back(name + " after");
}

TEST(FutureAwait, AwaitingADoneFutureDoesNotYield) {
  EventLoop loop;
  Log log;
  auto done = loop.create_future<int>();
  done.set_result(0);
  auto a = loop.create_task(log_then_await(done, &log, "a"));
  auto b = loop.create_task(log_then_await(done, &log, "b"));
  loop.run_once();
  EXPECT_EQ(log, (Log{"a before", "a after", "b before", "b after"}));
}

TEST(FutureAwait, SeveralWaitersResumeInTheOrderTheyAwaited) {
  EventLoop loop;
  Log log;
  auto f = loop.create_future<int>();
  auto a = loop.create_task(log_then_await(f, &log, "a"));
  auto b = loop.create_task(log_then_await(f, &log, "b"));
  auto c = loop.create_task(log_then_await(f, &log, "c"));
  loop.run_once();
  f.set_result(1);
  loop.run_once();
  EXPECT_EQ(log, (Log{"a before", "b before", "c before", "a after", "b after", "c after"}));
}

Coro<std::string> await_rvalue(Future<std::string> f) { co_return co_await std::move(f); }

TEST(FutureAwait, StringValueSurvivesCopyAndMoveAwaits) {
  EventLoop loop;
  auto f = loop.create_future<std::string>();
  loop.call_soon([f]() mutable { f.set_result(std::string(100, 'x')); });
  // Another handle (f) still shares the state: the value must be copied.
  EXPECT_EQ(loop.run_until_complete(await_rvalue(f)), std::string(100, 'x'));
  EXPECT_EQ(f.result(), std::string(100, 'x'));
}

Coro<std::unique_ptr<int>> await_move_only(Future<std::unique_ptr<int>> f) {
  co_return co_await std::move(f);
}

TEST(FutureAwait, MoveOnlyValue) {
  EventLoop loop;
  auto f = loop.create_future<std::unique_ptr<int>>();
  loop.call_soon([f]() mutable { f.set_result(std::make_unique<int>(7)); });
  auto v = loop.run_until_complete(await_move_only(f));
  ASSERT_TRUE(v);
  EXPECT_EQ(*v, 7);
}

Coro<void> await_outside_task(Future<int> f) { co_await f; }

TEST(FutureAwait, AwaitingOutsideATaskIsARuntimeError) {
  EventLoop loop;
  auto f = loop.create_future<int>();
  // A Coro resumed by hand, not by a task: the awaiter refuses.
  auto coro = await_outside_task(f);
  auto h = coro.release();
  h.resume();
  ASSERT_TRUE(h.done());
  EXPECT_THROW(h.promise().take(), corio::RuntimeError);
  h.destroy();
}

Coro<int> wait_virtual(Future<int> f) { co_return co_await f; }

TEST(FutureAwait, CompletedByATimerUnderVirtualTime) {
  EventLoop loop(virtual_time());
  auto f = loop.create_future<int>();
  loop.call_later(30s, [f]() mutable { f.set_result(30); });
  EXPECT_EQ(loop.run_until_complete(wait_virtual(f)), 30);
  EXPECT_EQ(loop.time(), 30.0);
}

}  // namespace
