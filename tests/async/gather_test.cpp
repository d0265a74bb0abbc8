// gather(): argument-order results, completion-order failures, return_exceptions,
// cancellation in both directions, laziness. All on virtual time.
#include <memory>
#include <tuple>
#include <type_traits>
#include <variant>

#include "async/async_support.hpp"

namespace corio_async_test {
namespace {

using corio::Coro;
using corio::Task;

// ---- results ------------------------------------------------------------------

Coro<void> tuple_in_argument_order(Log* log) {
  const double t0 = now();
  auto [a, b, c] = co_await corio::gather(logged(log, "1", 0.3, 10), logged(log, "2", 0.1, 20),
                                          logged(log, "3", 0.2, 30));
  EXPECT_EQ(a, 10);
  EXPECT_EQ(b, 20);
  EXPECT_EQ(c, 30);
  EXPECT_DOUBLE_EQ(now() - t0, 0.3);
}

TEST(Gather, TupleIsInArgumentOrderWhileChildrenFinishInTimeOrder) {
  Log log;
  run_vt(tuple_in_argument_order(&log));
  const std::vector<std::string> expected{"1:start",   "2:start",   "3:start",
                                          "2:done",    "2:cleanup", "3:done",
                                          "3:cleanup", "1:done",    "1:cleanup"};
  EXPECT_EQ(log.events, expected);
}

Coro<void> void_child() { co_await corio::sleep(0.1s); }

Coro<void> void_becomes_monostate() {
  auto r = co_await corio::gather(void_child(), value_after(0.2, 5));
  static_assert(std::is_same_v<decltype(r), std::tuple<std::monostate, int>>);
  EXPECT_EQ(std::get<1>(r), 5);
  std::vector<Coro<void>> v;
  v.push_back(void_child());
  v.push_back(void_child());
  auto rv = co_await corio::gather(std::move(v));
  static_assert(std::is_same_v<decltype(rv), std::vector<std::monostate>>);
  EXPECT_EQ(rv.size(), 2u);
}

TEST(Gather, VoidResultsBecomeMonostate) { run_vt(void_becomes_monostate()); }

Coro<void> vector_of_coros() {
  std::vector<Coro<int>> v;
  for (int i = 0; i < 5; ++i) v.push_back(value_after(0.1 * (5 - i), i));
  const double t0 = now();
  std::vector<int> r = co_await corio::gather(std::move(v));
  EXPECT_EQ(r, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_DOUBLE_EQ(now() - t0, 0.5);
}

TEST(Gather, VectorOfCorosInInputOrder) { run_vt(vector_of_coros()); }

Coro<std::string> text_after(double secs, std::string s) {
  co_await corio::sleep(Secs(secs));
  co_return s;
}

Coro<void> vector_of_tasks() {
  std::vector<Task<std::string>> tasks;
  tasks.push_back(corio::create_task(text_after(0.2, "a")));
  tasks.push_back(corio::create_task(text_after(0.1, "b")));
  std::vector<std::string> r = co_await corio::gather(tasks);
  EXPECT_EQ(r, (std::vector<std::string>{"a", "b"}));
  // The tasks still hold their results: gather copied them, not moved.
  EXPECT_EQ(tasks[0].result(), "a");
  EXPECT_EQ(tasks[1].result(), "b");
}

TEST(Gather, VectorOfTasksLeavesTheTasksResultsInPlace) { run_vt(vector_of_tasks()); }

Coro<void> mixed_awaitables() {
  corio::Future<int> fut = corio::get_running_loop().create_future<int>();
  corio::get_running_loop().call_later(0.3s, [fut]() mutable { fut.set_result(3); });
  Task<int> task = corio::create_task(value_after(0.1, 2));
  auto [a, b, c] = co_await corio::gather(value_after(0.2, 1), task, fut);
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 2);
  EXPECT_EQ(c, 3);
  EXPECT_DOUBLE_EQ(now(), 0.3);
}

TEST(Gather, AcceptsCorosTasksAndFuturesTogether) { run_vt(mixed_awaitables()); }

Coro<void> empty_vector() {
  const double t0 = now();
  std::vector<int> r = co_await corio::gather(std::vector<Coro<int>>{});
  EXPECT_TRUE(r.empty());
  auto ro = co_await corio::gather(corio::return_exceptions, std::vector<Task<int>>{});
  EXPECT_TRUE(ro.empty());
  EXPECT_DOUBLE_EQ(now(), t0);
}

TEST(Gather, EmptyVectorGivesEmptyResult) { run_vt(empty_vector()); }

Coro<std::unique_ptr<int>> boxed(int v) {
  co_await corio::sleep(0.1s);
  co_return std::make_unique<int>(v);
}

Coro<void> move_only_results() {
  auto [a, b] = co_await corio::gather(boxed(1), boxed(2));
  EXPECT_EQ(*a, 1);
  EXPECT_EQ(*b, 2);
  std::vector<Coro<std::unique_ptr<int>>> v;
  v.push_back(boxed(3));
  v.push_back(boxed(4));
  auto r = co_await corio::gather(std::move(v));
  CO_ASSERT(r.size() == 2u);
  EXPECT_EQ(*r[0], 3);
  EXPECT_EQ(*r[1], 4);
}

TEST(Gather, MoveOnlyResults) { run_vt(move_only_results()); }

Coro<void> same_task_twice() {
  Task<int> t = corio::create_task(value_after(0.1, 7));
  auto [a, b] = co_await corio::gather(t, t);
  EXPECT_EQ(a, 7);
  EXPECT_EQ(b, 7);
}

TEST(Gather, SameTaskTwice) { run_vt(same_task_twice()); }

Coro<void> nested() {
  auto [inner, c] = co_await corio::gather(corio::gather(value_after(0.2, 1), value_after(0.1, 2)),
                                           value_after(0.3, 3));
  EXPECT_EQ(inner, std::make_tuple(1, 2));
  EXPECT_EQ(c, 3);
  EXPECT_DOUBLE_EQ(now(), 0.3);
}

TEST(Gather, Nested) { run_vt(nested()); }

Coro<void> many_children() {
  std::vector<Coro<int>> v;
  for (int i = 0; i < 2000; ++i) v.push_back(value_after(0.001 * (i % 7), i));
  std::vector<int> r = co_await corio::gather(std::move(v));
  CO_ASSERT(r.size() == 2000u);
  for (int i = 0; i < 2000; ++i) EXPECT_EQ(r[static_cast<std::size_t>(i)], i);
}

TEST(Gather, TwoThousandChildren) { run_vt(many_children()); }

// ---- laziness -----------------------------------------------------------------------

Coro<void> lazy_until_awaited() {
  bool started = false;
  auto g = corio::gather(mark_started(&started, 1));
  co_await corio::sleep(1s);
  EXPECT_FALSE(started) << "gather() must not start its children before it is awaited";
  auto [v] = co_await std::move(g);
  EXPECT_TRUE(started);
  EXPECT_EQ(v, 1);
  // Never awaited: the children never run.
  bool never = false;
  { auto dropped = corio::gather(mark_started(&never, 2)); }
  co_await corio::sleep(1s);
  EXPECT_FALSE(never);
}

TEST(Gather, IsLazyUntilAwaited) { run_vt(lazy_until_awaited()); }

TEST(Gather, CanBeBuiltOutsideTheLoopAndRunAsMain) {
  // Building the Coro needs no running loop; the children start inside run().
  auto [a, b] = corio::run(corio::gather(value_after(0.2, 1), value_after(0.1, 2)), virtual_time());
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 2);
}

Coro<void> as_a_task() {
  Task<std::tuple<int, int>> t =
      corio::create_task(corio::gather(value_after(0.2, 1), value_after(0.1, 2)));
  co_await corio::sleep(0.15s);
  EXPECT_FALSE(t.done());
  auto r = co_await t;
  EXPECT_EQ(r, std::make_tuple(1, 2));
  EXPECT_DOUBLE_EQ(now(), 0.2);
}

TEST(Gather, CanBePassedToCreateTask) { run_vt(as_a_task()); }

// ---- failures without return_exceptions ---------------------------------------------

Coro<int> count_done(int* done, double secs, int v) {
  co_await corio::sleep(Secs(secs));
  ++*done;
  co_return v;
}

Coro<void> first_failure_propagates_at_once(int* done) {
  try {
    co_await corio::gather(count_done(done, 1.0, 1), fail_after(0.2, "first"),
                           fail_after(0.5, "second"), count_done(done, 0.7, 2));
    ADD_FAILURE() << "gather should have thrown";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "first");
    EXPECT_DOUBLE_EQ(now(), 0.2);
  }
  EXPECT_EQ(*done, 0);
  // The others were not cancelled: they run to completion.
  co_await corio::sleep(2s);
  EXPECT_EQ(*done, 2);
}

TEST(Gather, FirstFailurePropagatesAtOnceAndTheOthersKeepRunning) {
  Reports reports;
  int done = 0;
  run_vt([](Reports* r, int* d) -> Coro<void> {
    r->install();
    co_await first_failure_propagates_at_once(d);
  }(&reports, &done));
  // "second" failed after gather had returned: dropped, as asyncio does, not
  // reported as never retrieved.
  EXPECT_EQ(reports.size(), 0u) << reports.joined();
}

Coro<void> failure_in_completion_order() {
  try {
    co_await corio::gather(fail_after(0.5, "first argument"), fail_after(0.1, "finishes first"));
    ADD_FAILURE();
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "finishes first");
  }
}

TEST(Gather, FirstFailureIsByCompletionNotArgumentOrder) { run_vt(failure_in_completion_order()); }

Coro<void> already_failed_task() {
  Task<int> bad = corio::create_task(fail_after(0, "early"));
  co_await corio::sleep(0.1s);
  CO_ASSERT(bad.done());
  const double t0 = now();
  EXPECT_THROW(co_await corio::gather(value_after(1, 1), bad), std::runtime_error);
  EXPECT_DOUBLE_EQ(now(), t0);
}

TEST(Gather, AlreadyFailedChildFailsAtOnce) { run_vt(already_failed_task()); }

Coro<void> cancelled_child_is_a_failure() {
  Task<int> a = corio::create_task(value_after(1, 1));
  Task<int> b = corio::create_task(value_after(2, 2));
  Task<void> canceller = corio::create_task(cancel_after(0.5, a));
  bool got_cancelled = false;
  try {
    co_await corio::gather(a, b);
  } catch (const corio::CancelledError&) {
    got_cancelled = true;
  }
  EXPECT_TRUE(got_cancelled);
  EXPECT_DOUBLE_EQ(now(), 0.5);
  // The gather was not cancelled: this task has no cancellation request, and
  // can go on awaiting; the sibling was not cancelled either.
  EXPECT_EQ(cancelling(), 0);
  EXPECT_TRUE(a.cancelled());
  EXPECT_FALSE(b.done());
  EXPECT_EQ(co_await b, 2);
  EXPECT_DOUBLE_EQ(now(), 2.0);
  co_await canceller;
}

TEST(Gather, CancelledChildCountsAsFailureButDoesNotCancelTheGather) {
  run_vt(cancelled_child_is_a_failure());
}

// ---- return_exceptions ----------------------------------------------------------

Coro<void> return_exceptions_tuple() {
  Task<int> doomed = corio::create_task(value_after(5, 0));
  Task<void> canceller = corio::create_task(cancel_after(0.1, doomed));
  const double t0 = now();
  auto [ok, bad, cancelled, nothing] = co_await corio::gather(
      corio::return_exceptions, value_after(0.3, 1), fail_after(0.1, "bad"), doomed, void_child());
  EXPECT_DOUBLE_EQ(now() - t0, 0.3);  // waits for all
  static_assert(std::is_same_v<decltype(ok), corio::Outcome<int>>);
  static_assert(std::is_same_v<decltype(nothing), corio::Outcome<std::monostate>>);
  CO_ASSERT(ok.has_value());
  EXPECT_TRUE(static_cast<bool>(ok));
  EXPECT_EQ(ok.value(), 1);
  EXPECT_EQ(ok.error(), nullptr);
  EXPECT_FALSE(bad.has_value());
  EXPECT_EQ(what_of(bad.error()), "bad");
  EXPECT_THROW((void)bad.value(), std::runtime_error);
  EXPECT_FALSE(cancelled.has_value());
  EXPECT_TRUE(is_cancelled_error(cancelled.error()));
  EXPECT_TRUE(nothing.has_value());
  co_await canceller;
}

TEST(Gather, ReturnExceptionsTupleWaitsForAllAndReportsEach) { run_vt(return_exceptions_tuple()); }

Coro<void> return_exceptions_vector() {
  std::vector<Coro<int>> v;
  v.push_back(fail_after(0.2, "x"));
  v.push_back(value_after(0.1, 2));
  v.push_back(fail_after(0.3, "y"));
  auto r = co_await corio::gather(corio::return_exceptions, std::move(v));
  static_assert(std::is_same_v<decltype(r), std::vector<corio::Outcome<int>>>);
  CO_ASSERT(r.size() == 3u);
  EXPECT_EQ(what_of(r[0].error()), "x");
  EXPECT_EQ(r[1].value(), 2);
  EXPECT_EQ(what_of(r[2].error()), "y");
  EXPECT_DOUBLE_EQ(now(), 0.3);
}

TEST(Gather, ReturnExceptionsVector) {
  Reports reports;
  run_vt([](Reports* r) -> Coro<void> {
    r->install();
    co_await return_exceptions_vector();
  }(&reports));
  EXPECT_EQ(reports.size(), 0u) << reports.joined();
}

// ---- cancelling the task that awaits gather --------------------------------------------

Coro<void> gather_slow_cleanups(Log* log, bool return_exceptions) {
  try {
    if (return_exceptions) {
      co_await corio::gather(corio::return_exceptions, slow_cleanup(log, "a", 10, 0.5),
                             slow_cleanup(log, "b", 10, 0.2));
    } else {
      co_await corio::gather(slow_cleanup(log, "a", 10, 0.5), slow_cleanup(log, "b", 10, 0.2));
    }
  } catch (const corio::CancelledError&) {
    log->add("parent:cancelled");
    throw;
  }
  log->add("parent:not cancelled");
}

Coro<void> cancel_the_awaiter(Log* log, bool return_exceptions) {
  Task<void> parent = corio::create_task(gather_slow_cleanups(log, return_exceptions));
  co_await corio::sleep(1s);
  EXPECT_TRUE(parent.cancel());
  EXPECT_THROW(co_await parent, corio::CancelledError);
  EXPECT_TRUE(parent.cancelled());
}

TEST(Gather, CancellingTheAwaiterCancelsChildrenAndWaitsForThem) {
  for (bool re : {false, true}) {
    Log log;
    run_vt(cancel_the_awaiter(&log, re));
    // The parent sees CancelledError only after the slowest cleanup.
    const std::vector<std::string> expected{"b:cleaned", "a:cleaned", "parent:cancelled"};
    EXPECT_EQ(log.events, expected) << "return_exceptions=" << re;
    expect_times(log.times, {1.2, 1.5, 1.5});
  }
}

Coro<int> swallow_cancel(Log* log) {
  try {
    co_await corio::sleep(10s);
  } catch (const corio::CancelledError&) {
    log->add("child:swallowed");
  }
  co_return 1;
}

Coro<void> gather_swallower(Log* log) {
  try {
    co_await corio::gather(swallow_cancel(log), value_after(10, 2));
    log->add("parent:returned");
  } catch (const corio::CancelledError&) {
    log->add("parent:cancelled");
  }
}

TEST(Gather, AwaiterIsCancelledEvenIfAChildSwallowsTheCancellation) {
  Log log;
  run_vt([](Log* l) -> Coro<void> {
    Task<void> parent = corio::create_task(gather_swallower(l));
    co_await corio::sleep(1s);
    parent.cancel();
    co_await parent;
  }(&log));
  EXPECT_EQ(log.events, (std::vector<std::string>{"child:swallowed", "parent:cancelled"}));
}

Coro<void> gather_with_message(Log* log) {
  try {
    co_await corio::gather(logged(log, "child", 10, 1));
  } catch (const corio::CancelledError& e) {
    log->add("parent:" + e.message());
    throw;
  }
}

TEST(Gather, CancellationMessageReachesTheAwaiter) {
  Log log;
  run_vt([](Log* l) -> Coro<void> {
    Task<void> parent = corio::create_task(gather_with_message(l));
    co_await corio::sleep(1s);
    parent.cancel("bye");
    EXPECT_THROW(co_await parent, corio::CancelledError);
  }(&log));
  EXPECT_EQ(log.events, (std::vector<std::string>{"child:start", "child:cleanup", "parent:bye"}));
}

TEST(Gather, ATaskCancelledBeforeItStartsNeverStartsTheChildren) {
  bool started = false;
  run_vt([](bool* flag) -> Coro<void> {
    Task<std::tuple<int>> t = corio::create_task(corio::gather(mark_started(flag, 1)));
    t.cancel();
    EXPECT_THROW(co_await t, corio::CancelledError);
    co_await corio::sleep(1s);
  }(&started));
  EXPECT_FALSE(started);
}

Coro<void> background_gather(Log* log) {
  co_await corio::gather(logged(log, "a", 10, 1), slow_cleanup(log, "b", 10, 0.5));
  log->add("background:returned");
}

TEST(Gather, StillRunningWhenMainReturnsIsCancelledAndUnwoundByRun) {
  Log log;
  Reports reports;
  run_vt([](Log* l, Reports* r) -> Coro<void> {
    r->install();
    corio::create_task(background_gather(l));
    co_await corio::sleep(1s);
  }(&log, &reports));
  EXPECT_EQ(log.events, (std::vector<std::string>{"a:start", "a:cleanup", "b:cleaned"}));
  EXPECT_EQ(reports.size(), 0u) << reports.joined();
}

}  // namespace
}  // namespace corio_async_test
