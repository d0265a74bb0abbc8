// wait_for(), timeout(), timeout_at(): TimeoutError on expiry with the inner
// work cancelled (its cleanup run), outer cancellations kept as
// CancelledError, nesting, and no cancellation left behind. Virtual time.
#include "async/async_support.hpp"

namespace corio_async_test {
namespace {

using corio::Coro;
using corio::Task;

// What a wrapped await ended with.
// After a timeout block, the task must have no cancellation left: its
// count is back where it was and the next await is not interrupted.
Coro<void> expect_no_pending_cancel(int cancelling_at_entry) {
  EXPECT_EQ(cancelling(), cancelling_at_entry);
  const double t0 = now();
  co_await corio::sleep(1s);
  EXPECT_DOUBLE_EQ(now() - t0, 1.0);
}

// ---- in time ------------------------------------------------------------------

Coro<void> completes_in_time() {
  EXPECT_EQ(co_await corio::wait_for(value_after(0.5, 7), 1s), 7);
  EXPECT_DOUBLE_EQ(now(), 0.5);
  EXPECT_EQ(co_await corio::timeout(1s, value_after(0.5, 8)), 8);
  EXPECT_EQ(co_await corio::timeout_at(now() + 1, value_after(0.5, 9)), 9);
  co_await corio::wait_for(sleep_s(0.2), 1s);  // void
  EXPECT_DOUBLE_EQ(now(), 1.7);
  // The deadlines (1.0, 1.5, 2.0, 2.2) pass without touching this task.
  co_await expect_no_pending_cancel(0);
  co_await corio::sleep(2s);
}

TEST(Timeout, CompletesNormallyInTimeAndLeavesNothingBehind) { run_vt(completes_in_time()); }

Coro<void> inner_exception_passes() {
  try {
    co_await corio::wait_for(fail_after(0.3, "inner"), 1s);
    ADD_FAILURE();
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "inner");
    EXPECT_EQ(dynamic_cast<const corio::TimeoutError*>(&e), nullptr);
  }
  co_await expect_no_pending_cancel(0);
}

TEST(Timeout, InnerExceptionPassesThroughUnchanged) { run_vt(inner_exception_passes()); }

Coro<std::unique_ptr<int>> boxed_after(double secs, int v) {
  co_await corio::sleep(Secs(secs));
  co_return std::make_unique<int>(v);
}

Coro<void> move_only() {
  std::unique_ptr<int> p = co_await corio::wait_for(boxed_after(0.1, 4), 1s);
  EXPECT_EQ(*p, 4);
}

TEST(Timeout, MoveOnlyResult) { run_vt(move_only()); }

// ---- expiry ---------------------------------------------------------------------

Coro<void> times_out(Log* log) {
  try {
    co_await corio::wait_for(logged(log, "work", 10, 1), 1s);
    ADD_FAILURE() << "no TimeoutError";
  } catch (const corio::TimeoutError&) {
    log->add("timeout");
  }
  co_await expect_no_pending_cancel(0);
}

TEST(Timeout, WaitForRaisesTimeoutErrorAfterTheInnerCleanupRan) {
  Log log;
  run_vt(times_out(&log));
  EXPECT_EQ(log.events, (std::vector<std::string>{"work:start", "work:cleanup", "timeout"}));
  expect_times(log.times, {0, 1, 1});
}

Coro<void> timeout_wrapper_and_timeout_at(Log* log) {
  EXPECT_EQ(co_await outcome_of(corio::timeout(2s, logged(log, "a", 10, 1))), End::timeout);
  EXPECT_DOUBLE_EQ(now(), 2.0);
  EXPECT_EQ(co_await outcome_of(corio::timeout_at(5.0, logged(log, "b", 10, 1))), End::timeout);
  EXPECT_DOUBLE_EQ(now(), 5.0);
  co_await expect_no_pending_cancel(0);
}

TEST(Timeout, TimeoutAndTimeoutAtExpire) {
  Log log;
  run_vt(timeout_wrapper_and_timeout_at(&log));
  EXPECT_EQ(log.events, (std::vector<std::string>{"a:start", "a:cleanup", "b:start", "b:cleanup"}));
}

Coro<void> zero_and_past_deadlines() {
  co_await corio::sleep(3s);
  EXPECT_EQ(co_await outcome_of(corio::wait_for(sleep_s(1), 0s)), End::timeout);
  EXPECT_EQ(co_await outcome_of(corio::wait_for(sleep_s(1), -1s)), End::timeout);
  EXPECT_EQ(co_await outcome_of(corio::timeout_at(now() - 2, sleep_s(1))), End::timeout);
  EXPECT_DOUBLE_EQ(now(), 3.0);  // expired at once, without sleeping
  // A body that completes without suspending beats an expired deadline.
  bool started = false;
  EXPECT_EQ(co_await corio::timeout_at(now() - 2, mark_started(&started, 5)), 5);
  co_await expect_no_pending_cancel(0);
}

TEST(Timeout, ZeroNegativeAndPastDeadlines) { run_vt(zero_and_past_deadlines()); }

Coro<void> wait_for_a_task() {
  Task<int> t = corio::create_task(value_after(5, 1));
  EXPECT_EQ(co_await outcome_of(corio::wait_for(t, 1s)), End::timeout);
  EXPECT_DOUBLE_EQ(now(), 1.0);
  EXPECT_TRUE(t.done());
  EXPECT_TRUE(t.cancelled());  // the inner work is cancelled, and finished cancelling
  co_await expect_no_pending_cancel(0);
}

TEST(Timeout, WaitForATaskCancelsTheTask) { run_vt(wait_for_a_task()); }

Coro<void> wait_for_a_future() {
  corio::Future<int> f = corio::get_running_loop().create_future<int>();
  EXPECT_EQ(co_await outcome_of(corio::wait_for(f, 1s)), End::timeout);
  EXPECT_TRUE(f.cancelled());
  co_await expect_no_pending_cancel(0);
}

TEST(Timeout, WaitForAFutureCancelsTheFuture) { run_vt(wait_for_a_future()); }

Coro<int> swallow_and_return(double cleanup_secs) {
  bool cancelled = false;
  try {
    co_await corio::sleep(10s);
  } catch (const corio::CancelledError&) {
    cancelled = true;
  }
  if (cancelled) co_await corio::sleep(Secs(cleanup_secs));
  co_return 42;
}

Coro<void> expired_but_work_completed() {
  // The work swallows the deadline's cancellation and completes: its value
  // comes back (asyncio.timeout does the same), and the deadline's request is
  // withdrawn.
  EXPECT_EQ(co_await corio::wait_for(swallow_and_return(0.5), 1s), 42);
  EXPECT_DOUBLE_EQ(now(), 1.5);
  co_await expect_no_pending_cancel(0);
}

TEST(Timeout, ExpiredWhileTheWorkCompletedLeavesNoPendingCancellation) {
  run_vt(expired_but_work_completed());
}

Coro<void> set_at_deadline() {
  // A result arrives in the very iteration the deadline passes. Either
  // outcome is fine; the task must not keep a cancellation request.
  auto& loop = corio::get_running_loop();
  for (int round = 0; round < 3; ++round) {
    corio::Future<int> f = loop.create_future<int>();
    const double when = now() + 1;
    loop.call_at(when, [f]() mutable {
      if (!f.done()) f.set_result(1);
    });
    const End e = co_await outcome_of(corio::timeout_at(when, f));
    EXPECT_TRUE(e == End::value || e == End::timeout);
    EXPECT_DOUBLE_EQ(now(), when);
    co_await expect_no_pending_cancel(0);
  }
}

TEST(Timeout, ResultArrivingAtTheDeadlineLeavesNoPendingCancellation) { run_vt(set_at_deadline()); }

Coro<void> entry_count_is_kept() {
  // This task swallowed an earlier cancellation: cancelling() is 1 on entry.
  corio::current_task()->cancel();
  try {
    co_await corio::sleep(1s);
  } catch (const corio::CancelledError&) {
  }
  EXPECT_EQ(cancelling(), 1);
  // The timeout is still recognised as its own (count back to the entry value).
  EXPECT_EQ(co_await outcome_of(corio::wait_for(sleep_s(10), 1s)), End::timeout);
  co_await expect_no_pending_cancel(1);
  EXPECT_EQ(co_await corio::wait_for(swallow_and_return(0), 1s), 42);
  co_await expect_no_pending_cancel(1);
}

TEST(Timeout, CancellingCountReturnsToItsEntryValue) { run_vt(entry_count_is_kept()); }

Coro<int> convert_cancel() {
  try {
    co_await corio::sleep(10s);
  } catch (const corio::CancelledError&) {
    throw std::logic_error("converted");
  }
  co_return 0;
}

Coro<void> converted() {
  // The inner work turns the deadline's cancellation into its own error: that
  // error propagates (not TimeoutError), and the request is withdrawn.
  try {
    co_await corio::wait_for(convert_cancel(), 1s);
    ADD_FAILURE();
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "converted");
  }
  co_await expect_no_pending_cancel(0);
}

TEST(Timeout, InnerErrorRaisedOnCancellationPropagatesAndNothingIsLeftPending) {
  run_vt(converted());
}

// ---- laziness -----------------------------------------------------------------------

Coro<void> lazy() {
  bool started = false;
  auto c = corio::wait_for(mark_started(&started, 3), 1s);
  co_await corio::sleep(5s);
  EXPECT_FALSE(started);
  // The deadline counts from the await, not from the call.
  EXPECT_EQ(co_await corio::wait_for(value_after(0.5, 1), 1s), 1);
  auto slow = corio::timeout(1s, value_after(0.5, 2));
  co_await corio::sleep(5s);
  EXPECT_EQ(co_await std::move(slow), 2);
  EXPECT_EQ(co_await std::move(c), 3);
  EXPECT_TRUE(started);
}

TEST(Timeout, IsLazyAndTheDeadlineStartsAtTheAwait) { run_vt(lazy()); }

Coro<void> as_a_task() {
  Task<int> t = corio::create_task(corio::wait_for(value_after(5, 1), 1s));
  EXPECT_EQ(co_await outcome_of(std::move(t)), End::timeout);
  EXPECT_DOUBLE_EQ(now(), 1.0);
  EXPECT_EQ(cancelling(), 0);  // the timeout belonged to the other task
}

TEST(Timeout, AsATaskTimesOutThatTask) { run_vt(as_a_task()); }

// ---- outer cancellation -------------------------------------------------------------

Coro<void> run_and_record(End* out, Log* log, double timeout_secs) {
  *out = co_await outcome_of(corio::wait_for(logged(log, "work", 10, 1), Secs(timeout_secs)));
}

Coro<void> outer_cancel(Log* log) {
  End end = End::other;
  Task<void> t = corio::create_task(run_and_record(&end, log, 5));
  co_await corio::sleep(1s);
  t.cancel();
  co_await t;
  EXPECT_EQ(end, End::cancelled);  // not TimeoutError
  EXPECT_DOUBLE_EQ(now(), 1.0);
}

TEST(Timeout, OuterCancellationStaysCancelledError) {
  Log log;
  run_vt(outer_cancel(&log));
  EXPECT_EQ(log.events, (std::vector<std::string>{"work:start", "work:cleanup"}));
}

Coro<void> outer_cancel_at_deadline(Log* log) {
  End end = End::other;
  Task<void> t = corio::create_task(run_and_record(&end, log, 1));
  co_await corio::sleep(1s);  // same instant as t's deadline
  t.cancel();
  co_await t;
  EXPECT_EQ(end, End::cancelled);  // the outer request wins, as in asyncio
}

TEST(Timeout, OuterCancellationAtTheDeadlineStaysCancelledError) {
  Log log;
  run_vt(outer_cancel_at_deadline(&log));
}

Coro<void> outer_cancel_of_waiting_task() {
  // The awaiting task of wait_for(task) is cancelled: the inner task is
  // cancelled too, and the awaiter sees CancelledError.
  Task<int> inner = corio::create_task(value_after(10, 1));
  Task<End> waiter = corio::create_task(outcome_of(corio::wait_for(inner, 5s)));
  co_await corio::sleep(1s);
  waiter.cancel();
  EXPECT_EQ(co_await waiter, End::cancelled);
  EXPECT_TRUE(inner.cancelled());
}

TEST(Timeout, OuterCancellationCancelsAnAwaitedTask) { run_vt(outer_cancel_of_waiting_task()); }

// ---- nesting --------------------------------------------------------------------------

// The inner level: a timeout around sleep(10); reports what it saw.
Coro<std::string> inner_level(double inner_secs, Log* log) {
  try {
    co_await corio::wait_for(sleep_s(10), Secs(inner_secs));
  } catch (const corio::TimeoutError&) {
    log->add("inner:timeout");
    co_return "inner timed out";
  } catch (const corio::CancelledError&) {
    log->add("inner:cancelled");
    throw;
  }
  co_return "inner finished";
}

Coro<void> nested(double outer_secs, double inner_secs, Log* log, std::string* result, End* end) {
  try {
    *result = co_await corio::wait_for(inner_level(inner_secs, log), Secs(outer_secs));
    *end = End::value;
  } catch (const corio::TimeoutError&) {
    log->add("outer:timeout");
    *end = End::timeout;
  }
  co_await expect_no_pending_cancel(0);
}

TEST(Timeout, NestedInnerShorterFiresAtTheInnerLevel) {
  Log log;
  std::string result;
  End end = End::other;
  run_vt(nested(5, 1, &log, &result, &end));
  EXPECT_EQ(end, End::value);
  EXPECT_EQ(result, "inner timed out");
  EXPECT_EQ(log.events, (std::vector<std::string>{"inner:timeout"}));
  expect_times(log.times, {1});
}

TEST(Timeout, NestedOuterShorterFiresAtTheOuterLevel) {
  Log log;
  std::string result;
  End end = End::other;
  run_vt(nested(1, 5, &log, &result, &end));
  EXPECT_EQ(end, End::timeout);
  EXPECT_EQ(log.events, (std::vector<std::string>{"inner:cancelled", "outer:timeout"}));
  expect_times(log.times, {1, 1});
}

TEST(Timeout, NestedSameDeadlineFiresAtTheOuterLevel) {
  // As asyncio: both request a cancellation; the inner one sees a count above
  // its entry value and lets CancelledError through to the outer one.
  Log log;
  std::string result;
  End end = End::other;
  run_vt(nested(1, 1, &log, &result, &end));
  EXPECT_EQ(end, End::timeout);
  EXPECT_EQ(log.events, (std::vector<std::string>{"inner:cancelled", "outer:timeout"}));
}

Coro<void> sequential_timeouts() {
  // Many timeouts in a row, half expiring: no request leaks from one to the next.
  for (int i = 0; i < 50; ++i) {
    const End e = co_await outcome_of(corio::wait_for(sleep_s(i % 2 ? 2 : 0.5), 1s));
    EXPECT_EQ(e, i % 2 ? End::timeout : End::value) << i;
  }
  co_await expect_no_pending_cancel(0);
}

TEST(Timeout, ManyInARow) { run_vt(sequential_timeouts()); }

}  // namespace
}  // namespace corio_async_test
