// as_completed(): items in completion order, each a Future<T> carrying a value,
// an exception or a cancellation; TimeoutError for the items not filled in time.
#include "async/async_support.hpp"

namespace corio_async_test {
namespace {

using corio::Coro;
using corio::Task;

std::vector<Task<int>> start(std::vector<double> delays) {
  std::vector<Task<int>> out;
  for (std::size_t i = 0; i < delays.size(); ++i) {
    out.push_back(corio::create_task(value_after(delays[i], static_cast<int>(i + 1))));
  }
  return out;
}

Coro<void> completion_order() {
  std::vector<int> values;
  std::vector<double> times;
  for (auto next : corio::as_completed(start({0.3, 0.1, 0.2}))) {
    static_assert(std::is_convertible_v<decltype(next), corio::Future<int>>);
    values.push_back(co_await next);
    times.push_back(now());
  }
  EXPECT_EQ(values, (std::vector<int>{2, 3, 1}));
  expect_times(times, {0.1, 0.2, 0.3});
}

TEST(AsCompleted, YieldsResultsInCompletionOrder) { run_vt(completion_order()); }

Coro<void> exceptions_per_item() {
  std::vector<Task<int>> tasks;
  tasks.push_back(corio::create_task(value_after(0.3, 1)));
  tasks.push_back(corio::create_task(fail_after(0.1, "bad")));
  tasks.push_back(corio::create_task(value_after(0.5, 3)));
  Task<void> canceller = corio::create_task(cancel_after(0.4, tasks[2]));
  std::vector<std::string> seen;
  for (auto next : corio::as_completed(tasks)) {
    try {
      seen.push_back(std::to_string(co_await next));
    } catch (const std::runtime_error& e) {
      seen.push_back(std::string("error:") + e.what());
    } catch (const corio::CancelledError&) {
      seen.push_back("cancelled");
    }
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"error:bad", "1", "cancelled"}));
  // Only the item carried the cancellation: this task was not cancelled.
  EXPECT_EQ(cancelling(), 0);
  co_await canceller;
}

TEST(AsCompleted, DeliversExceptionsAndCancellationPerItem) {
  Reports reports;
  run_vt([](Reports* r) -> Coro<void> {
    r->install();
    co_await exceptions_per_item();
  }(&reports));
  EXPECT_EQ(reports.size(), 0u) << reports.joined();
}

Coro<void> with_timeout() {
  std::vector<Task<int>> tasks = start({0.1, 0.5, 0.3});
  std::vector<std::string> seen;
  std::vector<double> times;
  for (auto next : corio::as_completed(tasks, Secs(0.2))) {
    try {
      seen.push_back(std::to_string(co_await next));
    } catch (const corio::TimeoutError&) {
      seen.push_back("timeout");
    }
    times.push_back(now());
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"1", "timeout", "timeout"}));
  expect_times(times, {0.1, 0.2, 0.2});
  // The tasks themselves were not cancelled.
  EXPECT_EQ(co_await tasks[1], 2);
  EXPECT_EQ(co_await tasks[2], 3);
}

TEST(AsCompleted, TimeoutFailsTheUnfilledItemsAndLeavesTheTasksRunning) { run_vt(with_timeout()); }

Coro<void> timeout_not_reached() {
  std::vector<int> values;
  {
    auto items = corio::as_completed(start({0.1, 0.2}), Secs(1));
    for (auto next : items) values.push_back(co_await next);
  }
  EXPECT_EQ(values, (std::vector<int>{1, 2}));
  co_await corio::sleep(2s);  // the 1 s timer was cancelled with the object
  EXPECT_EQ(cancelling(), 0);
}

TEST(AsCompleted, TimeoutNotReached) { run_vt(timeout_not_reached()); }

Coro<void> done_tasks_first() {
  std::vector<Task<int>> tasks = start({0.5, 0, 0.2, 0});
  co_await corio::sleep(0.1s);
  std::vector<int> values;
  for (auto next : corio::as_completed(tasks)) values.push_back(co_await next);
  EXPECT_EQ(values, (std::vector<int>{2, 4, 3, 1}));  // the done ones in given order
}

TEST(AsCompleted, TasksAlreadyDoneComeFirstInTheGivenOrder) { run_vt(done_tasks_first()); }

Coro<void> empty_and_size() {
  auto none = corio::as_completed(std::vector<Task<int>>{});
  EXPECT_EQ(none.size(), 0u);
  EXPECT_TRUE(none.begin() == none.end());
  auto three = corio::as_completed(start({0.1, 0.1, 0.1}));
  EXPECT_EQ(three.size(), 3u);
  for (const auto& next : three) (void)co_await next;  // as when the items were Futures
}

TEST(AsCompleted, EmptyAndSize) { run_vt(empty_and_size()); }

Coro<std::unique_ptr<int>> boxed(double secs, int v) {
  co_await corio::sleep(Secs(secs));
  co_return std::make_unique<int>(v);
}

Coro<void> move_only() {
  std::vector<Task<std::unique_ptr<int>>> tasks;
  tasks.push_back(corio::create_task(boxed(0.2, 1)));
  tasks.push_back(corio::create_task(boxed(0.1, 2)));
  std::vector<int> values;
  for (auto next : corio::as_completed(tasks)) values.push_back(*co_await next);
  EXPECT_EQ(values, (std::vector<int>{2, 1}));
}

TEST(AsCompleted, MoveOnlyResults) { run_vt(move_only()); }

// Items converted to Futures take their turns in conversion order.
Coro<void> converted_to_futures() {
  auto items = corio::as_completed(start({0.2, 0.1}));
  std::vector<corio::Future<int>> v(items.begin(), items.end());
  EXPECT_EQ(co_await v[1], 1);  // the second to arrive
  EXPECT_EQ(co_await v[0], 2);
  EXPECT_DOUBLE_EQ(now(), 0.2);
}

TEST(AsCompleted, ItemsConvertedToFuturesFillInConversionOrder) { run_vt(converted_to_futures()); }

// asyncio 3.13: whichever item is awaited first gets the earliest result.
Coro<void> out_of_order_awaits() {
  auto items = corio::as_completed(start({0.2, 0.1, 0.3}));
  auto it = items.begin();
  const auto& first = it[0];
  const auto& last = it[2];
  EXPECT_EQ(co_await last, 2);  // the earliest, at 0.1
  EXPECT_DOUBLE_EQ(now(), 0.1);
  EXPECT_EQ(co_await it[1], 1);
  EXPECT_EQ(co_await first, 3);
  EXPECT_DOUBLE_EQ(now(), 0.3);
}

TEST(AsCompleted, ItemsCanBeAwaitedInAnyOrder) { run_vt(out_of_order_awaits()); }

// Two tasks awaiting items: the one that started waiting first gets the
// earliest result, whatever the items' positions.
Coro<void> await_item(corio::AsCompleted<int>::Item item, double delay, int* out) {
  co_await corio::sleep(Secs(delay));
  *out = co_await item;
}

Coro<void> concurrent_awaiters() {
  auto items = corio::as_completed(start({0.3, 0.2}));
  int early = 0, late = 0;
  Task<void> a = corio::create_task(await_item(items.begin()[0], 0.1, &late));
  Task<void> b = corio::create_task(await_item(items.begin()[1], 0.05, &early));
  co_await a;
  co_await b;
  EXPECT_EQ(early, 2);  // b, on the second item, waited first (0.05): the 0.2 result
  EXPECT_EQ(late, 1);
}

TEST(AsCompleted, TheFirstAwaiterGetsTheEarliestResult) { run_vt(concurrent_awaiters()); }

// Results that came in before the timeout are still handed out after it, to
// items awaited late; what finishes after the timeout is not.
Coro<void> late_awaits_after_timeout(std::vector<std::string>* seen) {
  std::vector<Task<int>> tasks = start({0.1, 0.3, 0.2});
  auto items = corio::as_completed(tasks, Secs(0.25));
  co_await corio::sleep(1s);
  for (auto next : items) {
    try {
      seen->push_back(std::to_string(co_await next));
    } catch (const corio::TimeoutError&) {
      seen->push_back("timeout");
    }
  }
  EXPECT_EQ(tasks[1].result(), 2);
}

TEST(AsCompleted, ResultsBeforeTheTimeoutOutliveIt) {
  std::vector<std::string> seen;
  run_vt(late_awaits_after_timeout(&seen));
  EXPECT_EQ(seen, (std::vector<std::string>{"1", "3", "timeout"}));
}

Coro<void> abandoned_early() {
  std::vector<Task<int>> tasks = start({0.1, 0.3, 0.5});
  for (auto next : corio::as_completed(tasks, Secs(0.4))) {
    EXPECT_EQ(co_await next, 1);
    break;  // the object (its callbacks, its timer) dies with tasks still running
  }
  co_await corio::sleep(1s);  // the tasks finish and the 0.4 s timer passes: no use of freed memory
  EXPECT_EQ(tasks[1].result(), 2);
  EXPECT_EQ(tasks[2].result(), 3);
}

TEST(AsCompleted, AbandonedIterationIsSafe) { run_vt(abandoned_early()); }

// An item whose awaiter gave up (wait_for timed out) is a cancelled future.
// The results that arrive later must go to the items still waiting (asyncio
// hands them to the next waiter), and must not crash the process.
Coro<void> item_cancelled_by_awaiter(std::vector<std::string>* seen) {
  std::vector<Task<int>> tasks = start({2, 0.5});
  int i = 0;
  for (auto next : corio::as_completed(tasks)) {
    try {
      const int v = i++ == 0 ? co_await corio::wait_for(next, 0.1s) : co_await next;
      seen->push_back(std::to_string(v));
    } catch (const corio::TimeoutError&) {
      seen->push_back("timeout");
    }
  }
}

TEST(AsCompleted, AnItemCancelledByItsAwaiterDoesNotBreakLaterCompletions) {
  // Run in a child process: the bug this guards against is a std::terminate.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        std::vector<std::string> seen;
        run_vt(item_cancelled_by_awaiter(&seen));
        std::exit(seen == std::vector<std::string>{"timeout", "2"} ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

Coro<void> timeout_after_cancelled_item(std::vector<std::string>* seen,
                                        std::vector<double>* times) {
  std::vector<Task<int>> tasks = start({5, 3, 4});
  int i = 0;
  for (auto next : corio::as_completed(tasks, 1s)) {
    try {
      const int v = i++ == 0 ? co_await corio::wait_for(next, 0.5s) : co_await next;
      seen->push_back(std::to_string(v));
    } catch (const corio::TimeoutError&) {
      seen->push_back("timeout");
    }
    times->push_back(now());
  }
}

TEST(AsCompleted, TimeoutStillFailsTheRestAfterAnItemWasCancelled) {
  std::vector<std::string> seen;
  std::vector<double> times;
  Reports reports;
  run_vt([](std::vector<std::string>* s, std::vector<double>* t, Reports* r) -> Coro<void> {
    r->install();
    co_await timeout_after_cancelled_item(s, t);
  }(&seen, &times, &reports));
  EXPECT_EQ(seen, (std::vector<std::string>{"timeout", "timeout", "timeout"}));
  expect_times(times, {0.5, 1, 1});
  EXPECT_EQ(reports.size(), 0u) << reports.joined();
}

TEST(AsCompleted, NeedsARunningLoop) {
  EXPECT_THROW((void)corio::as_completed(std::vector<Task<int>>{}), corio::RuntimeError);
}

}  // namespace
}  // namespace corio_async_test
