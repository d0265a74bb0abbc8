// Task cancellation: at each kind of await point, RAII cleanup, swallowing,
// cancel before start, cancelling()/uncancel(), messages.
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
using corio::Task;
using corio_test::virtual_time;
using Log = std::vector<std::string>;

namespace {

struct Cleanup {
  Log* log;
  std::string name;
  ~Cleanup() { log->push_back("cleanup " + name); }
};

// Records how an await ended: "value", "cancelled:<msg>", then rethrows.
Coro<int> sleep_logged(Log* log, std::chrono::seconds d) {
  Cleanup c{log, "sleep"};
  try {
    co_await corio::sleep(d);
  } catch (const CancelledError& e) {
    log->push_back("cancelled:" + e.message());
    throw;
  }
  co_return 1;
}

// Runs `task` one iteration, cancels it with `msg`, runs it to the end.
// Returns the loop time when it finished.
template <class T>
double cancel_after_first_step(EventLoop& loop, Task<T>& task, const std::string& msg) {
  loop.run_once();
  EXPECT_FALSE(task.done());
  EXPECT_TRUE(task.cancel(msg));
  try {
    loop.run_until_complete(task);
    ADD_FAILURE() << "the task should end cancelled";
  } catch (const CancelledError& e) {
    EXPECT_EQ(e.message(), msg);
  }
  EXPECT_TRUE(task.done());
  EXPECT_TRUE(task.cancelled());
  return loop.time();
}

TEST(Cancel, AtSleepThrowsCancelledErrorAndRemovesTheTimer) {
  EventLoop loop(virtual_time());
  Log log;
  auto t = loop.create_task(sleep_logged(&log, 1h));
  EXPECT_EQ(cancel_after_first_step(loop, t, "stop sleeping"), 0.0);  // no jump to the timer
  EXPECT_EQ(log, (Log{"cancelled:stop sleeping", "cleanup sleep"}));
}

Coro<int> await_future_logged(Future<int> f, Log* log) {
  Cleanup c{log, "future"};
  try {
    co_return co_await f;
  } catch (const CancelledError& e) {
    log->push_back("cancelled:" + e.message());
    throw;
  }
}

TEST(Cancel, AtFutureCancelsTheFutureToo) {
  EventLoop loop;
  Log log;
  auto f = loop.create_future<int>();
  auto t = loop.create_task(await_future_logged(f, &log));
  cancel_after_first_step(loop, t, "m");
  EXPECT_TRUE(f.cancelled());
  EXPECT_EQ(log, (Log{"cancelled:m", "cleanup future"}));
}

Coro<int> await_task_logged(Task<int> inner, Log* log) {
  Cleanup c{log, "outer"};
  try {
    co_return co_await inner;
  } catch (const CancelledError& e) {
    log->push_back("outer cancelled:" + e.message());
    throw;
  }
}

TEST(Cancel, AtAnotherTaskCancelsTheAwaitedTask) {
  EventLoop loop(virtual_time());
  Log log;
  auto inner = loop.create_task(sleep_logged(&log, 1h));
  auto outer = loop.create_task(await_task_logged(inner, &log));
  cancel_after_first_step(loop, outer, "both");
  EXPECT_TRUE(inner.cancelled());
  EXPECT_EQ(log, (Log{"cancelled:both", "cleanup sleep", "outer cancelled:both", "cleanup outer"}));
  EXPECT_EQ(loop.time(), 0.0);
}

Coro<int> nested_inner(Log* log) {
  Cleanup c{log, "inner"};
  co_await corio::sleep(1h);
  co_return 1;
}
Coro<int> nested_middle(Log* log) {
  Cleanup c{log, "middle"};
  co_return 1 + co_await nested_inner(log);
}
Coro<int> nested_outer(Log* log) {
  Cleanup c{log, "outer"};
  co_return 1 + co_await nested_middle(log);
}

TEST(Cancel, InsideNestedCorosUnwindsEveryLevel) {
  EventLoop loop(virtual_time());
  Log log;
  auto t = loop.create_task(nested_outer(&log));
  cancel_after_first_step(loop, t, "");
  EXPECT_EQ(log, (Log{"cleanup inner", "cleanup middle", "cleanup outer"}));
}

Coro<int> swallow(Log* log) {
  try {
    co_await corio::sleep(1h);
  } catch (const CancelledError&) {
    log->push_back("swallowed");
  }
  co_await corio::sleep(2s);  // a later await works normally
  log->push_back("carried on");
  co_return 7;
}

TEST(Cancel, SwallowedCancellationCompletesNormally) {
  EventLoop loop(virtual_time());
  Log log;
  auto t = loop.create_task(swallow(&log));
  loop.run_once();
  EXPECT_TRUE(t.cancel());
  EXPECT_EQ(loop.run_until_complete(t), 7);
  EXPECT_FALSE(t.cancelled());
  EXPECT_EQ(t.cancelling(), 1);  // the request is still counted (asyncio)
  EXPECT_EQ(log, (Log{"swallowed", "carried on"}));
  EXPECT_EQ(loop.time(), 2.0);
  EXPECT_FALSE(t.cancel());  // done: nothing to cancel
}

Coro<int> body_runs(bool* ran) {
  *ran = true;
  co_return 1;
}

TEST(Cancel, BeforeTheFirstStepTheBodyNeverRuns) {
  EventLoop loop;
  bool ran = false;
  auto t = loop.create_task(body_runs(&ran));
  EXPECT_TRUE(t.cancel("early"));
  try {
    loop.run_until_complete(t);
    ADD_FAILURE();
  } catch (const CancelledError& e) {
    EXPECT_EQ(e.message(), "early");
  }
  EXPECT_FALSE(ran);
  EXPECT_TRUE(t.cancelled());
}

TEST(Cancel, CancellingAndUncancelCount) {
  EventLoop loop(virtual_time());
  Log log;
  auto t = loop.create_task(sleep_logged(&log, 1h));
  loop.run_once();
  EXPECT_EQ(t.cancelling(), 0);
  EXPECT_TRUE(t.cancel());
  EXPECT_TRUE(t.cancel());
  EXPECT_EQ(t.cancelling(), 2);
  EXPECT_EQ(t.uncancel(), 1);
  EXPECT_EQ(t.cancelling(), 1);
  EXPECT_THROW(loop.run_until_complete(t), CancelledError);
  EXPECT_EQ(t.uncancel(), 0);
  EXPECT_EQ(t.uncancel(), 0);  // never below zero
}

// current_task() gives a TaskRef: the task can count and withdraw the requests
// made of it from inside, as asyncio code does with asyncio.current_task().
Coro<int> uncancel_self(std::vector<int>* counts) {
  corio::TaskRef self = *corio::current_task();
  try {
    co_await corio::sleep(1h);
  } catch (const CancelledError&) {
    counts->push_back(self.cancelling());
    counts->push_back(self.uncancel());
    counts->push_back(self.cancelling());
  }
  co_return self.uncancel();  // already at zero: stays there
}

TEST(Cancel, TaskRefCancellingAndUncancel) {
  EventLoop loop(virtual_time());
  std::vector<int> counts;
  auto t = loop.create_task(uncancel_self(&counts));
  loop.run_once();
  EXPECT_TRUE(t.cancel());
  EXPECT_EQ(loop.run_until_complete(t), 0);
  EXPECT_EQ(counts, (std::vector<int>{1, 0, 0}));
  EXPECT_FALSE(t.cancelled());
  corio::TaskRef ref(t);
  EXPECT_EQ(ref.cancelling(), 0);
}

TEST(Cancel, UncancelBeforeTheTaskRunsWithdrawsTheRequest) {
  EventLoop loop;
  bool ran = false;
  auto t = loop.create_task(body_runs(&ran));
  EXPECT_TRUE(t.cancel());
  EXPECT_EQ(t.uncancel(), 0);
  EXPECT_EQ(loop.run_until_complete(t), 1);
  EXPECT_TRUE(ran);
  EXPECT_FALSE(t.cancelled());
}

Coro<std::string> self_cancel() {
  auto ref = *corio::current_task();
  ref.cancel("by myself");
  try {
    co_await corio::sleep(0s);  // the next await throws
  } catch (const CancelledError& e) {
    co_return "caught " + e.message();
  }
  co_return "not cancelled";
}

TEST(Cancel, ATaskCanCancelItself) {
  EventLoop loop;
  EXPECT_EQ(loop.run_until_complete(self_cancel()), "caught by myself");
}

Coro<int> wait_on(Future<int> f) { co_return co_await f; }

TEST(Cancel, AfterTheAwaitedFutureCompletedStillThrows) {
  // asyncio: cancel() between the wake-up and the step wins over the result.
  EventLoop loop;
  auto f = loop.create_future<int>();
  auto t = loop.create_task(wait_on(f));
  loop.run_once();
  f.set_result(5);  // t is now queued to resume
  EXPECT_TRUE(t.cancel());
  EXPECT_THROW(loop.run_until_complete(t), CancelledError);
  EXPECT_TRUE(t.cancelled());
  EXPECT_EQ(f.result(), 5);  // the done future is untouched
}

Coro<int> swallow_then_return(Log* log) {
  try {
    co_await corio::sleep(1h);
  } catch (const CancelledError&) {
    log->push_back("inner swallowed");
  }
  co_return 3;
}

TEST(Cancel, AwaiterOfATaskThatSwallowsStillLearnsItWasCancelled) {
  // Documented corio choice (future_awaiter.hpp): the cancelled waiter throws
  // its own CancelledError even if the awaited task swallowed the request.
  EventLoop loop(virtual_time());
  Log log;
  auto inner = loop.create_task(swallow_then_return(&log));
  auto outer = loop.create_task(await_task_logged(inner, &log));
  cancel_after_first_step(loop, outer, "x");
  EXPECT_EQ(inner.result(), 3);
  EXPECT_FALSE(inner.cancelled());
  EXPECT_EQ(log, (Log{"inner swallowed", "outer cancelled:x", "cleanup outer"}));
}

Coro<void> cancel_other_then_wait(Task<int> victim, Log* log) {
  co_await corio::sleep(0s);
  victim.cancel("from a sibling");
  try {
    co_await victim;
  } catch (const CancelledError& e) {
    log->push_back("sibling saw:" + e.message());
  }
}

TEST(Cancel, CancelledTasksResultRethrowsToOtherAwaiters) {
  EventLoop loop(virtual_time());
  Log log;
  auto victim = loop.create_task(sleep_logged(&log, 1h));
  loop.run_until_complete(cancel_other_then_wait(victim, &log));
  EXPECT_EQ(log, (Log{"cancelled:from a sibling", "cleanup sleep", "sibling saw:from a sibling"}));
}

Coro<void> cleanup_awaits(Log* log) {
  std::exception_ptr cancelled;
  try {
    co_await corio::sleep(1h);
  } catch (const CancelledError&) {
    cancelled = std::current_exception();  // no co_await inside a handler
  }
  if (cancelled) {
    log->push_back("cleaning up");
    co_await corio::sleep(5s);  // asynchronous cleanup, then re-raise
    log->push_back("cleaned");
    std::rethrow_exception(cancelled);
  }
}

TEST(Cancel, CleanupMayAwaitBeforeRethrowing) {
  EventLoop loop(virtual_time());
  Log log;
  auto t = loop.create_task(cleanup_awaits(&log));
  EXPECT_EQ(cancel_after_first_step(loop, t, "bye"), 5.0);
  EXPECT_EQ(log, (Log{"cleaning up", "cleaned"}));
}

TEST(Cancel, ExceptionOfACancelledTaskThrowsCancelledError) {
  EventLoop loop;
  bool ran = false;
  auto t = loop.create_task(body_runs(&ran));
  t.cancel("msg");
  EXPECT_THROW(loop.run_until_complete(t), CancelledError);
  try {
    (void)t.exception();
    ADD_FAILURE();
  } catch (const CancelledError& e) {
    EXPECT_EQ(e.message(), "msg");
  }
}

Coro<std::string> sleep_outcome() {
  try {
    co_await corio::sleep(1h);
  } catch (const CancelledError&) {
    co_return "cancelled";
  }
  co_return "slept until " + std::to_string(corio::get_running_loop().time());
}

TEST(Cancel, UncancelAfterTheSleepWasCancelledStillDeliversCancellation) {
  // asyncio: cancel() cancels the sleep's future; uncancel() only lowers the
  // count, so the task still gets CancelledError at the sleep. The sleep must
  // never "complete" early as if the hour had passed.
  EventLoop loop(virtual_time());
  auto t = loop.create_task(sleep_outcome());
  loop.run_once();
  EXPECT_TRUE(t.cancel());
  EXPECT_EQ(t.uncancel(), 0);
  EXPECT_EQ(loop.run_until_complete(t), "cancelled");
}

TEST(Cancel, UncancelAfterTheFutureWasCancelledStillDeliversCancellation) {
  EventLoop loop;
  auto f = loop.create_future<int>();
  auto t = loop.create_task(wait_on(f));
  loop.run_once();
  EXPECT_TRUE(t.cancel());
  EXPECT_TRUE(f.cancelled());
  EXPECT_EQ(t.uncancel(), 0);
  EXPECT_THROW(loop.run_until_complete(t), CancelledError);
}

Coro<int> cancel_self_and_return() {
  corio::current_task()->cancel("self");
  co_return 1;  // no await point after the request
}

TEST(Cancel, CancelRequestedDuringTheLastStepCancelsTheTask) {
  // asyncio's Task.__step: "Task is cancelled right before coro stops" -- a
  // pending request at StopIteration cancels the task instead of setting
  // its result.
  EventLoop loop;
  auto t = loop.create_task(cancel_self_and_return());
  EXPECT_THROW(loop.run_until_complete(t), CancelledError);
  EXPECT_TRUE(t.cancelled());
}

Coro<int> negative_sleep(Log* log) {
  log->push_back("before");
  co_await corio::sleep(-5s);  // like sleep(0): one yield
  log->push_back("after");
  co_return 0;
}

TEST(Cancel, NegativeSleepYieldsOnceAndIsCancellable) {
  EventLoop loop;
  Log log;
  auto t = loop.create_task(negative_sleep(&log));
  auto other = loop.create_task(negative_sleep(&log));
  loop.run_until_complete(other);
  EXPECT_EQ(log, (Log{"before", "before", "after", "after"}));
  log.clear();
  auto c = loop.create_task(negative_sleep(&log));
  loop.run_once();
  c.cancel();
  EXPECT_THROW(loop.run_until_complete(c), CancelledError);
  EXPECT_EQ(log, (Log{"before"}));
}

}  // namespace
