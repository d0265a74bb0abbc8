// shield(): the awaiter can be cancelled (or time out) while the inner work
// runs on to completion, its result still available. Virtual time.
#include "async/async_support.hpp"

namespace corio_async_test {
namespace {

using corio::Coro;
using corio::Task;

Coro<void> passes_the_result() {
  Task<int> inner = corio::create_task(value_after(0.5, 5));
  EXPECT_EQ(co_await corio::shield(inner), 5);
  EXPECT_EQ(co_await corio::shield(value_after(0.5, 6)), 6);
  co_await corio::shield(sleep_s(0.1));  // void
  EXPECT_DOUBLE_EQ(now(), 1.1);
  // An inner that is done already: at once.
  EXPECT_EQ(co_await corio::shield(inner), 5);
  EXPECT_DOUBLE_EQ(now(), 1.1);
}

TEST(Shield, PassesTheResultThrough) { run_vt(passes_the_result()); }

Coro<void> passes_failures() {
  Task<int> bad = corio::create_task(fail_after(0.5, "inner failed"));
  try {
    co_await corio::shield(bad);
    ADD_FAILURE();
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "inner failed");
  }
  // The inner task cancelled directly: the awaiter gets CancelledError.
  Task<int> victim = corio::create_task(value_after(5, 1));
  Task<void> canceller = corio::create_task(cancel_after(1, victim));
  EXPECT_THROW(co_await corio::shield(victim), corio::CancelledError);
  EXPECT_TRUE(victim.cancelled());
  co_await canceller;
}

TEST(Shield, PassesFailuresAndCancellationOfTheInnerTask) { run_vt(passes_failures()); }

Coro<void> outer_cancel(Log* log) {
  Task<int> inner = corio::create_task(logged(log, "inner", 2, 5));
  Task<End> waiter = corio::create_task(outcome_of(corio::shield(inner), log));
  co_await corio::sleep(1s);
  waiter.cancel();
  EXPECT_EQ(co_await waiter, End::cancelled);
  EXPECT_DOUBLE_EQ(now(), 1.0);  // at once, not when the inner finishes
  EXPECT_FALSE(inner.done());
  EXPECT_EQ(co_await inner, 5);  // the inner ran on; its result is still there
  EXPECT_DOUBLE_EQ(now(), 2.0);
}

TEST(Shield, CancellingTheAwaiterDoesNotCancelTheInnerTask) {
  Log log;
  run_vt(outer_cancel(&log));
  EXPECT_EQ(log.events, (std::vector<std::string>{"inner:start", "awaiter:cancelled", "inner:done",
                                                  "inner:cleanup"}));
  expect_times(log.times, {0, 1, 2, 2});
}

Coro<void> outer_timeout(Log* log) {
  Task<int> inner = corio::create_task(logged(log, "inner", 3, 7));
  EXPECT_EQ(co_await outcome_of(corio::wait_for(corio::shield(inner), 1s), log), End::timeout);
  EXPECT_DOUBLE_EQ(now(), 1.0);
  EXPECT_FALSE(inner.cancelled());
  EXPECT_EQ(cancelling(), 0);
  EXPECT_EQ(co_await inner, 7);
  EXPECT_DOUBLE_EQ(now(), 3.0);
}

TEST(Shield, WaitForTimeoutDoesNotCancelTheInnerTask) {
  Log log;
  run_vt(outer_timeout(&log));
  EXPECT_EQ(log.events, (std::vector<std::string>{"inner:start", "awaiter:timeout", "inner:done",
                                                  "inner:cleanup"}));
}

Coro<int> count_when_done(int* done, double secs) {
  co_await corio::sleep(Secs(secs));
  ++*done;
  co_return 1;
}

Coro<void> shielded_coro_survives(int* done) {
  Task<End> waiter;
  {
    Log log;
    waiter = corio::create_task(outcome_of(corio::shield(count_when_done(done, 2)), &log));
    co_await corio::sleep(1s);
    waiter.cancel();
    EXPECT_EQ(co_await waiter, End::cancelled);
  }
  EXPECT_EQ(*done, 0);
  co_await corio::sleep(2s);
  EXPECT_EQ(*done, 1);  // the coroutine, made a task by shield, ran to the end
}

TEST(Shield, AShieldedCoroutineRunsToTheEndAfterTheAwaiterIsCancelled) {
  int done = 0;
  run_vt(shielded_coro_survives(&done));
  EXPECT_EQ(done, 1);
}

Coro<void> shield_a_future() {
  auto& loop = corio::get_running_loop();
  corio::Future<int> f = loop.create_future<int>();
  loop.call_later(2s, [f]() mutable { f.set_result(9); });
  Log log;
  EXPECT_EQ(co_await outcome_of(corio::wait_for(corio::shield(f), 1s), &log), End::timeout);
  EXPECT_FALSE(f.cancelled());
  EXPECT_EQ(co_await f, 9);
}

TEST(Shield, AFutureIsNotCancelledEither) { run_vt(shield_a_future()); }

Coro<void> repeated_shields() {
  // Several awaiters shield the same task; each can give up on its own.
  Task<int> inner = corio::create_task(value_after(3, 4));
  Log log;
  EXPECT_EQ(co_await outcome_of(corio::wait_for(corio::shield(inner), 1s), &log), End::timeout);
  EXPECT_EQ(co_await outcome_of(corio::wait_for(corio::shield(inner), 1s), &log), End::timeout);
  EXPECT_EQ(co_await corio::shield(inner), 4);
  EXPECT_DOUBLE_EQ(now(), 3.0);
}

TEST(Shield, RepeatedShieldsOfOneTask) { run_vt(repeated_shields()); }

// ---- laziness -----------------------------------------------------------------------

Coro<void> lazy() {
  bool started = false;
  auto c = corio::shield(mark_started(&started, 3));
  co_await corio::sleep(1s);
  EXPECT_FALSE(started) << "shield() started its coroutine before being awaited";
  EXPECT_EQ(co_await std::move(c), 3);
  EXPECT_TRUE(started);
  bool never = false;
  { auto dropped = corio::shield(mark_started(&never, 4)); }
  co_await corio::sleep(1s);
  EXPECT_FALSE(never) << "a shield() that is never awaited ran its coroutine";
}

TEST(Shield, IsLazyUntilAwaited) { run_vt(lazy()); }

TEST(Shield, CanBeBuiltOutsideTheLoop) {
  // Like every combinator, shield() returns a lazy Coro: building one needs
  // no running loop.
  int v = 0;
  EXPECT_NO_THROW({
    auto c = corio::shield(value_after(0.1, 5));
    v = corio::run(std::move(c), virtual_time());
  });
  EXPECT_EQ(v, 5);
}

}  // namespace
}  // namespace corio_async_test
