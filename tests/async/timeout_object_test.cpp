// The Timeout object (asyncio.Timeout: when, reschedule, expired), disabled
// timeouts (std::nullopt), wait_for's asyncio corners (a timeout <= 0; an
// error raised while being cancelled), and every kind of awaitable passed to
// the combinators. Virtual time. CPython's test_timeouts.py and
// test_waitfor.py, translated.
#include "async/async_support.hpp"

namespace corio_async_test {
namespace {

using corio::Coro;
using corio::Task;
using corio::Timeout;

// ---- the block form and the Timeout object ---------------------------------------------------

Coro<void> block_in_time() {
  const double t0 = now();
  int v = co_await corio::timeout(2s, [t0](Timeout& cm) -> Coro<int> {
    EXPECT_DOUBLE_EQ(*cm.when(), t0 + 2);
    co_await corio::sleep(1s);
    EXPECT_FALSE(cm.expired());
    co_return 5;
  });
  EXPECT_EQ(v, 5);
  EXPECT_EQ(cancelling(), 0);
}

TEST(TimeoutObject, ABlockThatFinishesInTimeGivesItsResult) { run_vt(block_in_time()); }

Coro<void> block_expires(Log* log) {
  try {
    co_await corio::timeout(1s, [log](Timeout& cm) -> Coro<void> {
      try {
        co_await corio::sleep(10s);
      } catch (const corio::CancelledError&) {
        EXPECT_TRUE(cm.expired());
        EXPECT_THROW(cm.reschedule(now() + 10), corio::RuntimeError);  // expiring: too late
        log->add("body:cancelled");
        throw;
      }
    });
    ADD_FAILURE();
  } catch (const corio::TimeoutError&) {
    log->add("timeout");
  }
  EXPECT_EQ(cancelling(), 0);
}

TEST(TimeoutObject, AnExpiredBlockRaisesTimeoutErrorAfterUnwinding) {
  Log log;
  run_vt(block_expires(&log));
  EXPECT_EQ(log.events, (std::vector<std::string>{"body:cancelled", "timeout"}));
  expect_times(log.times, {1, 1});
}

Coro<void> rescheduled_later() {
  co_await corio::timeout(1s, [](Timeout& cm) -> Coro<void> {
    co_await corio::sleep(0.5s);
    cm.reschedule(now() + 5);  // extended before it expired
    EXPECT_DOUBLE_EQ(*cm.when(), 5.5);
    co_await corio::sleep(3s);
  });
  EXPECT_DOUBLE_EQ(now(), 3.5);
}

TEST(TimeoutObject, RescheduleMovesTheDeadline) { run_vt(rescheduled_later()); }

Coro<void> rescheduled_to_none() {
  co_await corio::timeout(1s, [](Timeout& cm) -> Coro<void> {
    cm.reschedule(std::nullopt);
    EXPECT_FALSE(cm.when().has_value());
    co_await corio::sleep(50s);
  });
  EXPECT_DOUBLE_EQ(now(), 50);
}

TEST(TimeoutObject, RescheduleToNulloptDisablesIt) { run_vt(rescheduled_to_none()); }

Coro<void> rescheduled_to_past() {
  const double t0 = now();
  EXPECT_EQ(co_await outcome_of(corio::timeout(
                10s,
                [](Timeout& cm) -> Coro<void> {
                  co_await corio::sleep(1s);
                  cm.reschedule(now() - 1);  // already past: expires on the next iteration
                  co_await corio::sleep(10s);
                })),
            End::timeout);
  EXPECT_DOUBLE_EQ(now() - t0, 1);
}

TEST(TimeoutObject, ADeadlineInThePastExpiresAtTheNextAwait) { run_vt(rescheduled_to_past()); }

Coro<void> timeout_at_block() {
  const double when = now() + 3;
  EXPECT_EQ(co_await outcome_of(corio::timeout_at(when,
                                                  [when](Timeout& cm) -> Coro<void> {
                                                    EXPECT_DOUBLE_EQ(*cm.when(), when);
                                                    co_await corio::sleep(5s);
                                                  })),
            End::timeout);
  EXPECT_DOUBLE_EQ(now(), 3);
}

TEST(TimeoutObject, TimeoutAtTakesAnAbsoluteDeadline) { run_vt(timeout_at_block()); }

Coro<void> outer_cancel_inside_expired_block() {
  // An outside cancellation that arrives with the deadline stays CancelledError.
  Task<void> inner = corio::create_task(
      corio::timeout(1s, [](Timeout&) -> Coro<void> { co_await corio::sleep(10s); }));
  co_await corio::sleep(1s);  // the deadline fires in this same iteration
  inner.cancel();
  EXPECT_EQ(co_await outcome_of(inner), End::cancelled);
}

TEST(TimeoutObject, AnOutsideCancellationIsNotTurnedIntoTimeoutError) {
  run_vt(outer_cancel_inside_expired_block());
}

// ---- disabled timeouts --------------------------------------------------------------------

Coro<void> no_limit() {
  co_await corio::timeout(std::nullopt, corio::sleep(100s));
  co_await corio::timeout_at(std::nullopt, corio::sleep(100s));
  EXPECT_EQ(co_await corio::wait_for(value_after(100, 3), std::nullopt), 3);
  const std::optional<std::chrono::seconds> none;
  co_await corio::wait_for(corio::sleep(100s), none);
  co_await corio::timeout(none, [](Timeout& cm) -> Coro<void> {
    EXPECT_FALSE(cm.when().has_value());
    co_await corio::sleep(100s);
  });
  EXPECT_DOUBLE_EQ(now(), 500);
  const std::optional<std::chrono::seconds> some = 1s;
  EXPECT_EQ(co_await outcome_of(corio::wait_for(corio::sleep(100s), some)), End::timeout);
}

TEST(TimeoutObject, NulloptMeansNoLimit) { run_vt(no_limit()); }

// ---- wait_for with a timeout <= 0 ---------------------------------------------------------------

Coro<void> zero_timeout() {
  bool started = false;
  EXPECT_EQ(co_await outcome_of(corio::wait_for(mark_started(&started, 1), 0s)), End::timeout);
  EXPECT_EQ(co_await outcome_of(corio::wait_for(mark_started(&started, 1), -1s)), End::timeout);
  EXPECT_FALSE(started);  // an unstarted coroutine is never started
  EXPECT_EQ(co_await outcome_of(corio::wait_for(corio::sleep(0s), 0s)), End::timeout);

  Task<int> done = corio::create_task(value_after(0, 4));
  co_await corio::sleep(1s);
  EXPECT_EQ(co_await corio::wait_for(done, 0s), 4);  // a done task gives its result

  Task<int> pending = corio::create_task(value_after(10, 5));
  EXPECT_EQ(co_await outcome_of(corio::wait_for(pending, 0s)), End::timeout);
  EXPECT_TRUE(pending.cancelled());  // cancelled and waited for

  corio::Future<int> ready = corio::get_running_loop().create_future<int>();
  ready.set_result(6);
  EXPECT_EQ(co_await corio::wait_for(ready, 0s), 6);
  EXPECT_EQ(now(), 1);
}

TEST(WaitForCorners, ATimeoutOfZeroOrLessNeverStartsACoroutine) { run_vt(zero_timeout()); }

Coro<int> swallows_cancel() {
  try {
    co_await corio::sleep(10s);
  } catch (const corio::CancelledError&) {
  }
  co_return 9;
}

Coro<void> zero_timeout_swallowed() {
  Task<int> t = corio::create_task(swallows_cancel());
  co_await corio::sleep(0s);                      // let it start
  EXPECT_EQ(co_await corio::wait_for(t, 0s), 9);  // it swallowed the cancellation: its result
}

TEST(WaitForCorners, APendingTaskThatSwallowsTheCancellationGivesItsResult) {
  run_vt(zero_timeout_swallowed());
}

Coro<int> raises_when_cancelled() {
  return fails_when_cancelled<std::invalid_argument>(10, "cleanup failed");
}

Coro<void> error_during_cancel(Reports* reports) {
  reports->install();
  for (int round = 0; round < 2; ++round) {
    try {
      if (round == 0) {
        co_await corio::wait_for(raises_when_cancelled(), 1s);  // inline
      } else {
        co_await corio::wait_for(corio::create_task(raises_when_cancelled()), 1s);  // a task
      }
      ADD_FAILURE();
    } catch (const std::invalid_argument& e) {
      EXPECT_STREQ(e.what(), "cleanup failed");
    }
    EXPECT_EQ(cancelling(), 0);
  }
}

TEST(WaitForCorners, AnErrorRaisedWhileBeingCancelledPropagatesAndCountsAsRetrieved) {
  Reports reports;
  run_vt(error_during_cancel(&reports));
  EXPECT_EQ(reports.size(), 0u) << reports.joined();
}

// ---- any awaitable ------------------------------------------------------------------------

// A user's awaiter that can be neither copied nor moved: combinators keep an
// lvalue of it by reference.
class Pinned {
 public:
  Pinned() = default;
  Pinned(const Pinned&) = delete;
  bool await_ready() const noexcept { return true; }
  void await_suspend(std::coroutine_handle<>) noexcept {}
  int await_resume() const noexcept { return 1; }
};

// A user's type awaitable through operator co_await.
struct Later {
  double secs;
  auto operator co_await() const { return corio::sleep(Secs(secs)); }
};

Coro<void> every_awaitable() {
  EXPECT_EQ(co_await outcome_of(corio::wait_for(corio::sleep(10s), 20ms)), End::timeout);
  EXPECT_EQ(co_await outcome_of(corio::timeout(20ms, corio::sleep(10s))), End::timeout);

  corio::Lock lock;
  co_await lock.acquire();
  EXPECT_EQ(co_await outcome_of(corio::wait_for(lock.acquire(), 1s)), End::timeout);
  lock.release();
  EXPECT_FALSE(lock.locked());  // the timed-out waiter took nothing
  co_await corio::wait_for(lock.acquire(), 1s);
  EXPECT_TRUE(lock.locked());
  lock.release();

  corio::Event ev;
  EXPECT_EQ(co_await outcome_of(corio::wait_for(ev.wait(), 1s)), End::timeout);
  corio::Queue<int> q;
  EXPECT_EQ(co_await outcome_of(corio::timeout(1s, q.get())), End::timeout);
  q.put_nowait(8);
  EXPECT_EQ(co_await corio::wait_for(q.get(), 1s), 8);

  Pinned pinned;
  EXPECT_EQ(co_await corio::wait_for(pinned, 1s), 1);
  EXPECT_EQ(co_await corio::timeout(1s, pinned), 1);
  co_await corio::wait_for(Later{0.5}, 1s);
  co_await corio::shield(corio::sleep(0.5s));
  co_await corio::shield(Later{0.5});

  ev.set();
  q.put_nowait(9);
  auto [a, b, c, d] =
      co_await corio::gather(corio::sleep(1s), ev.wait(), q.get(), value_after(0.5, 2));
  (void)a;
  (void)b;
  EXPECT_EQ(c, 9);
  EXPECT_EQ(d, 2);
  EXPECT_NEAR(now(), 0.02 * 2 + 1 * 3 + 0.5 * 3 + 1, 1e-9);
}

TEST(AnyAwaitable, SleepLockEventQueueAndUserAwaitersPassToEveryCombinator) {
  run_vt(every_awaitable());
}

}  // namespace
}  // namespace corio_async_test
