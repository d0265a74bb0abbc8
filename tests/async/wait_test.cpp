// wait(): done/pending split in the given order for each ReturnWhen, with and
// without a timeout; never throws for the tasks, never cancels them.
#include "async/async_support.hpp"

namespace corio_async_test {
namespace {

using corio::Coro;
using corio::ReturnWhen;
using corio::Task;

// The values the tasks were created with, to identify them in done/pending.
std::vector<int> ids(const std::vector<Task<int>>& tasks, const std::vector<Task<int>>& all) {
  std::vector<int> out;
  for (const Task<int>& t : tasks) {
    for (std::size_t i = 0; i < all.size(); ++i) {
      if (t == all[i]) out.push_back(static_cast<int>(i));
    }
  }
  return out;
}

std::vector<Task<int>> start(std::vector<double> delays) {
  std::vector<Task<int>> out;
  for (std::size_t i = 0; i < delays.size(); ++i) {
    out.push_back(corio::create_task(value_after(delays[i], static_cast<int>(i))));
  }
  return out;
}

Coro<void> all_completed() {
  std::vector<Task<int>> tasks = start({0.3, 0.1, 0.2});
  auto r = co_await corio::wait(tasks);  // all_completed is the default
  EXPECT_DOUBLE_EQ(now(), 0.3);
  EXPECT_EQ(ids(r.done, tasks), (std::vector<int>{0, 1, 2}));
  EXPECT_TRUE(r.pending.empty());
  auto r2 = co_await corio::wait(tasks, ReturnWhen::all_completed);
  EXPECT_EQ(r2.done.size(), 3u);
}

TEST(Wait, AllCompleted) { run_vt(all_completed()); }

Coro<void> first_completed() {
  std::vector<Task<int>> tasks = start({0.3, 0.1, 0.2});
  auto r = co_await corio::wait(tasks, ReturnWhen::first_completed);
  EXPECT_DOUBLE_EQ(now(), 0.1);
  EXPECT_EQ(ids(r.done, tasks), (std::vector<int>{1}));
  EXPECT_EQ(ids(r.pending, tasks), (std::vector<int>{0, 2}));
  // Not cancelled: they finish.
  EXPECT_EQ(co_await tasks[0], 0);
  EXPECT_EQ(co_await tasks[2], 2);
}

TEST(Wait, FirstCompletedLeavesTheOthersRunning) { run_vt(first_completed()); }

Coro<void> first_completed_same_instant() {
  std::vector<Task<int>> tasks = start({0.2, 0.1, 0.1});
  auto r = co_await corio::wait(tasks, ReturnWhen::first_completed);
  EXPECT_EQ(ids(r.done, tasks), (std::vector<int>{1, 2}));
  EXPECT_EQ(ids(r.pending, tasks), (std::vector<int>{0}));
}

TEST(Wait, FirstCompletedTakesEveryTaskDoneAtThatInstant) {
  run_vt(first_completed_same_instant());
}

// Returns v one loop iteration after its sleep ends.
Coro<int> value_after_then_yield(double secs, int v) {
  co_await corio::sleep(Secs(secs));
  co_await corio::sleep(0s);
  co_return v;
}

// asyncio's waiter resumes through the loop: task 1, finishing one iteration
// after task 0 (woken by the same timer pass, after it), is done by the time
// the waiter runs, so it is in `done` too.
Coro<void> first_completed_through_the_loop() {
  std::vector<Task<int>> tasks;
  tasks.push_back(corio::create_task(value_after(0.1, 0)));
  tasks.push_back(corio::create_task(value_after_then_yield(0.1, 1)));
  tasks.push_back(corio::create_task(value_after(0.2, 2)));
  auto r = co_await corio::wait(tasks, ReturnWhen::first_completed);
  EXPECT_DOUBLE_EQ(now(), 0.1);
  EXPECT_EQ(ids(r.done, tasks), (std::vector<int>{0, 1}));
  EXPECT_EQ(ids(r.pending, tasks), (std::vector<int>{2}));
}

TEST(Wait, FirstCompletedHoldsEveryTaskDoneWhenTheWaiterRuns) {
  run_vt(first_completed_through_the_loop());
}

// With a task done already, the waiter still goes through the loop: a task
// whose step was queued before the wait finishes first.
Coro<int> ready_value(int v) { co_return v; }

Coro<void> done_already_through_the_loop() {
  std::vector<Task<int>> tasks = start({0, 5});
  co_await corio::sleep(0.1s);
  tasks.push_back(corio::create_task(ready_value(2)));
  auto r = co_await corio::wait(tasks, ReturnWhen::first_completed);
  EXPECT_EQ(ids(r.done, tasks), (std::vector<int>{0, 2}));
  EXPECT_EQ(ids(r.pending, tasks), (std::vector<int>{1}));
}

TEST(Wait, FirstCompletedWithADoneTaskStillResumesThroughTheLoop) {
  run_vt(done_already_through_the_loop());
}

Coro<void> first_exception() {
  std::vector<Task<int>> tasks;
  tasks.push_back(corio::create_task(value_after(0.1, 0)));
  tasks.push_back(corio::create_task(fail_after(0.2, "b")));
  tasks.push_back(corio::create_task(value_after(0.5, 2)));
  auto r = co_await corio::wait(tasks, ReturnWhen::first_exception);  // does not throw
  EXPECT_DOUBLE_EQ(now(), 0.2);
  EXPECT_EQ(ids(r.done, tasks), (std::vector<int>{0, 1}));
  EXPECT_EQ(ids(r.pending, tasks), (std::vector<int>{2}));
  EXPECT_EQ(what_of(tasks[1].exception()), "b");
  EXPECT_EQ(co_await tasks[2], 2);
}

TEST(Wait, FirstExceptionReturnsAtTheFirstFailureWithoutThrowing) { run_vt(first_exception()); }

Coro<void> first_exception_ignores_cancelled() {
  std::vector<Task<int>> tasks = start({1.0, 0.3});
  Task<void> canceller = corio::create_task(cancel_after(0.1, tasks[0]));
  auto r = co_await corio::wait(tasks, ReturnWhen::first_exception);
  // The cancelled task is not an exception: wait goes on until all are done.
  EXPECT_DOUBLE_EQ(now(), 0.3);
  EXPECT_EQ(ids(r.done, tasks), (std::vector<int>{0, 1}));
  EXPECT_TRUE(tasks[0].cancelled());
  co_await canceller;
}

TEST(Wait, FirstExceptionIgnoresCancelledTasks) { run_vt(first_exception_ignores_cancelled()); }

Coro<void> first_exception_already_failed() {
  std::vector<Task<int>> tasks;
  tasks.push_back(corio::create_task(value_after(1, 0)));
  tasks.push_back(corio::create_task(fail_after(0, "early")));
  co_await corio::sleep(0.1s);
  auto r = co_await corio::wait(tasks, ReturnWhen::first_exception);
  EXPECT_DOUBLE_EQ(now(), 0.1);
  EXPECT_EQ(ids(r.done, tasks), (std::vector<int>{1}));
  EXPECT_EQ(what_of(tasks[1].exception()), "early");
}

TEST(Wait, FirstExceptionWithAnAlreadyFailedTaskReturnsAtOnce) {
  run_vt(first_exception_already_failed());
}

Coro<void> failures_do_not_throw() {
  std::vector<Task<int>> tasks;
  tasks.push_back(corio::create_task(fail_after(0.1, "x")));
  tasks.push_back(corio::create_task(value_after(0.2, 1)));
  auto r = co_await corio::wait(tasks, ReturnWhen::all_completed);
  EXPECT_EQ(r.done.size(), 2u);
  EXPECT_EQ(what_of(tasks[0].exception()), "x");
}

TEST(Wait, AllCompletedWithFailuresDoesNotThrow) { run_vt(failures_do_not_throw()); }

Coro<void> with_timeout() {
  std::vector<Task<int>> tasks = start({0.3, 0.1, 0.2});
  auto r = co_await corio::wait(tasks, ReturnWhen::all_completed, Secs(0.15));
  EXPECT_DOUBLE_EQ(now(), 0.15);
  EXPECT_EQ(ids(r.done, tasks), (std::vector<int>{1}));
  EXPECT_EQ(ids(r.pending, tasks), (std::vector<int>{0, 2}));
  for (const Task<int>& t : r.pending) EXPECT_FALSE(t.cancelled());
  // The timeout's timer is gone with the wait: nothing fires into this task later.
  auto r2 = co_await corio::wait(r.pending);
  EXPECT_DOUBLE_EQ(now(), 0.3);
  EXPECT_EQ(r2.done.size(), 2u);
  co_await corio::sleep(1s);
}

TEST(Wait, TimeoutReturnsWithThePendingTasksUncancelled) { run_vt(with_timeout()); }

Coro<void> timeout_nothing_done() {
  std::vector<Task<int>> tasks = start({5, 6});
  auto r = co_await corio::wait(tasks, ReturnWhen::first_completed, 1s);
  EXPECT_DOUBLE_EQ(now(), 1.0);
  EXPECT_TRUE(r.done.empty());
  EXPECT_EQ(r.pending.size(), 2u);
  auto z = co_await corio::wait(tasks, ReturnWhen::first_exception, 0s);
  EXPECT_DOUBLE_EQ(now(), 1.0);
  EXPECT_EQ(z.pending.size(), 2u);
}

TEST(Wait, TimeoutWithNothingDone) { run_vt(timeout_nothing_done()); }

Coro<void> timeout_not_reached() {
  std::vector<Task<int>> tasks = start({0.1, 0.2});
  auto r = co_await corio::wait(tasks, ReturnWhen::all_completed, 5s);
  EXPECT_DOUBLE_EQ(now(), 0.2);
  EXPECT_EQ(r.done.size(), 2u);
  co_await corio::sleep(10s);  // the 5 s deadline must not fire into this task
  EXPECT_EQ(cancelling(), 0);
}

TEST(Wait, TimeoutNotReached) { run_vt(timeout_not_reached()); }

Coro<void> empty_is_value_error() {
  // Lazy, like every combinator: the error comes at the await.
  auto c = corio::wait(std::vector<Task<int>>{});
  EXPECT_THROW(co_await std::move(c), corio::ValueError);
}

TEST(Wait, EmptyVectorIsValueError) { run_vt(empty_is_value_error()); }

Coro<void> waiter(std::vector<Task<int>> tasks, Log* log) {
  try {
    co_await corio::wait(std::move(tasks));
    log->add("waiter:returned");
  } catch (const corio::CancelledError&) {
    log->add("waiter:cancelled");
    throw;
  }
}

Coro<void> cancelling_the_waiter(Log* log) {
  std::vector<Task<int>> tasks = start({2, 3});
  Task<void> w = corio::create_task(waiter(tasks, log));
  co_await corio::sleep(1s);
  w.cancel();
  EXPECT_THROW(co_await w, corio::CancelledError);
  EXPECT_DOUBLE_EQ(now(), 1.0);
  for (const Task<int>& t : tasks) EXPECT_FALSE(t.done());
  auto r = co_await corio::wait(tasks);
  for (const Task<int>& t : r.done) EXPECT_FALSE(t.cancelled());
}

TEST(Wait, CancellingTheWaiterDoesNotCancelTheTasks) {
  Log log;
  run_vt(cancelling_the_waiter(&log));
  EXPECT_EQ(log.events, (std::vector<std::string>{"waiter:cancelled"}));
}

Coro<void> cancelled_waiter_with_timeout(Log* log) {
  std::vector<Task<int>> tasks = start({20, 30});
  Task<void> w = corio::create_task([](std::vector<Task<int>> ts, Log* l) -> Coro<void> {
    try {
      co_await corio::wait(std::move(ts), ReturnWhen::all_completed, 5s);
    } catch (const corio::CancelledError&) {
      l->add("waiter:cancelled");
      throw;
    }
  }(tasks, log));
  co_await corio::sleep(1s);
  w.cancel();
  EXPECT_THROW(co_await w, corio::CancelledError);
  co_await corio::sleep(10s);  // past the abandoned 5 s deadline: its timer left with the waiter
  for (const Task<int>& t : tasks) EXPECT_FALSE(t.done());
}

TEST(Wait, CancelledWaiterLeavesNoTimerBehind) {
  Log log;
  run_vt(cancelled_waiter_with_timeout(&log));
  EXPECT_EQ(log.events, (std::vector<std::string>{"waiter:cancelled"}));
  expect_times(log.times, {1});
}

Coro<void> already_done() {
  std::vector<Task<int>> tasks = start({0, 5});
  co_await corio::sleep(0.1s);
  auto r = co_await corio::wait(tasks, ReturnWhen::first_completed);
  EXPECT_DOUBLE_EQ(now(), 0.1);
  EXPECT_EQ(ids(r.done, tasks), (std::vector<int>{0}));
  EXPECT_EQ(ids(r.pending, tasks), (std::vector<int>{1}));
}

TEST(Wait, FirstCompletedWithADoneTaskReturnsAtOnce) { run_vt(already_done()); }

Coro<void> void_tasks() {
  std::vector<Task<void>> tasks;
  tasks.push_back(corio::create_task(sleep_s(0.2)));
  tasks.push_back(corio::create_task(sleep_s(0.1)));
  corio::WaitResult<void> r = co_await corio::wait(tasks, ReturnWhen::first_completed);
  EXPECT_EQ(r.done.size(), 1u);
  EXPECT_TRUE(r.done[0] == tasks[1]);
}

TEST(Wait, VoidTasks) { run_vt(void_tasks()); }

}  // namespace
}  // namespace corio_async_test
