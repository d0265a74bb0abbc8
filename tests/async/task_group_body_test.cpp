// task_group(body): asyncio.TaskGroup's whole semantics (CPython's
// test_taskgroups.py, translated): a failing child cancels the body and the
// siblings; the body's own error is thrown together with the children's;
// the owner's cancelling() count is left as it was; outside cancellations
// keep their message; nesting and timeouts compose. Virtual time.
#include "async/async_support.hpp"

namespace corio_async_test {
namespace {

using corio::Coro;
using corio::ExceptionGroup;
using corio::Task;
using corio::TaskGroup;

std::vector<std::string> whats(const ExceptionGroup& g) {
  std::vector<std::string> out;
  for (const std::exception_ptr& e : g.exceptions()) out.push_back(what_of(e));
  return out;
}

Coro<int> throws_at_once(std::string msg) {
  throw std::runtime_error(msg);
  co_return 0;
}

// ---- a child fails -----------------------------------------------------------------

Coro<void> child_failure_cancels_body(Log* log) {
  try {
    co_await corio::task_group([log](TaskGroup& tg) -> Coro<void> {
      tg.create_task(fail_after(0.1, "boom"));
      tg.create_task(logged(log, "sibling", 5, 1));
      Cleanup body(log, "body");
      co_await corio::sleep(10s);  // cancelled by the failure, at 0.1
      log->add("body:done");
    });
    ADD_FAILURE() << "the child's error must propagate";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "boom");  // one error: thrown as itself
    log->add("caught");
  }
  // The group withdrew the cancellation it made: nothing is left pending.
  EXPECT_EQ(cancelling(), 0);
  const double t0 = now();
  co_await corio::sleep(1s);
  EXPECT_DOUBLE_EQ(now() - t0, 1.0);
}

TEST(TaskGroupBody, AFailingChildCancelsTheBodyAtOnce) {
  Log log;
  Reports reports;
  run_vt([](Log* log, Reports* r) -> Coro<void> {
    r->install();
    co_await child_failure_cancels_body(log);
  }(&log, &reports));
  EXPECT_EQ(log.events, (std::vector<std::string>{"sibling:start", "sibling:cleanup",
                                                  "body:cleanup", "caught"}));
  expect_times(log.times, {0, 0.1, 0.1, 0.1});
  EXPECT_EQ(reports.size(), 0u) << reports.joined();  // nothing "never retrieved"
}

Coro<int> body_result() {
  co_return co_await corio::task_group([](TaskGroup& tg) -> Coro<int> {
    Task<int> a = tg.create_task(value_after(0.2, 20));
    Task<int> b = tg.create_task(value_after(0.1, 22));
    co_return co_await a + co_await b;
  });
}

TEST(TaskGroupBody, TheBodysResultIsTheGroupsResult) { EXPECT_EQ(run_vt(body_result()), 42); }

Coro<void> several_children_fail() {
  try {
    co_await corio::task_group([](TaskGroup& tg) -> Coro<void> {
      tg.create_task(fail_after(0.1, "first"));
      tg.create_task(fails_when_cancelled(5, "second"));  // fails while cancelled
      co_await corio::sleep(10s);
    });
    ADD_FAILURE();
  } catch (const ExceptionGroup& g) {
    EXPECT_EQ(whats(g), (std::vector<std::string>{"first", "second"}));
    EXPECT_DOUBLE_EQ(now(), 0.1);
  }
  EXPECT_EQ(cancelling(), 0);
}

TEST(TaskGroupBody, AChildThatFailsWhileCancelledJoinsTheExceptionGroup) {
  run_vt(several_children_fail());
}

// ---- the body fails ----------------------------------------------------------------

Coro<void> body_error_with_child_errors(Log* log) {
  try {
    co_await corio::task_group([log](TaskGroup& tg) -> Coro<void> {
      tg.create_task(fails_when_cancelled(5, "child"));
      tg.create_task(slow_cleanup(log, "slow", 5, 0.5));
      co_await corio::sleep(1s);
      throw std::invalid_argument("body");
    });
    ADD_FAILURE();
  } catch (const ExceptionGroup& g) {
    // The children's errors first, the body's last (asyncio's order), and
    // only once every child is done.
    EXPECT_EQ(whats(g), (std::vector<std::string>{"child", "body"}));
    log->add("caught");
  }
}

TEST(TaskGroupBody, ABodyErrorCancelsTheChildrenWaitsAndGroupsEveryError) {
  Log log;
  run_vt(body_error_with_child_errors(&log));
  EXPECT_EQ(log.events, (std::vector<std::string>{"slow:cleaned", "caught"}));
  expect_times(log.times, {1.5, 1.5});
}

Coro<void> body_error_alone() {
  bool sibling_unwound = false;
  try {
    co_await corio::task_group([&sibling_unwound](TaskGroup& tg) -> Coro<void> {
      tg.create_task(
          [](bool* unwound) -> Coro<void> {
            struct Flag {
              bool* f;
              ~Flag() { *f = true; }
            } flag{unwound};
            co_await corio::sleep(10s);
          },
          &sibling_unwound);
      co_await corio::sleep(1s);
      throw std::invalid_argument("body");
    });
    ADD_FAILURE();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "body");
    EXPECT_TRUE(sibling_unwound);
  }
}

TEST(TaskGroupBody, ABodyErrorAloneIsThrownAsItself) { run_vt(body_error_alone()); }

// ---- cancellation from outside -------------------------------------------------------

Coro<void> group_then_sleep(Log* log) {
  co_await corio::task_group([log](TaskGroup& tg) -> Coro<void> {
    tg.create_task(logged(log, "child", 10, 1));
    co_await corio::sleep(10s);
  });
}

Coro<void> outer_cancel(Log* log) {
  Task<void> t = corio::create_task(group_then_sleep(log));
  co_await corio::sleep(1s);
  t.cancel("stop now");
  try {
    co_await t;
    ADD_FAILURE();
  } catch (const corio::CancelledError& e) {
    EXPECT_EQ(e.message(), "stop now");
  }
  EXPECT_TRUE(t.cancelled());
  EXPECT_EQ(t.cancelling(), 1);  // the outside request is still counted
}

TEST(TaskGroupBody, ACancellationFromOutsideArrivesWithItsMessage) {
  Log log;
  run_vt(outer_cancel(&log));
  EXPECT_EQ(log.events, (std::vector<std::string>{"child:start", "child:cleanup"}));
}

Coro<void> errors_win_over_outside_cancel() {
  try {
    co_await corio::task_group([](TaskGroup& tg) -> Coro<void> {
      tg.create_task(fails_when_cancelled(10, "child"));
      co_await corio::sleep(10s);
    });
    ADD_FAILURE();
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "child");
  }
  // The outside cancellation is renewed: the next await is interrupted.
  EXPECT_EQ(cancelling(), 1);
  co_await corio::sleep(1s);
  ADD_FAILURE() << "not interrupted";
}

Coro<void> outside_cancel_with_child_error() {
  Task<void> t = corio::create_task(errors_win_over_outside_cancel());
  co_await corio::sleep(1s);
  t.cancel();
  EXPECT_EQ(co_await outcome_of(t), End::cancelled);
  EXPECT_DOUBLE_EQ(now(), 1.0);
}

TEST(TaskGroupBody, ChildErrorsWinOverAnOutsideCancellationWhichStaysPending) {
  run_vt(outside_cancel_with_child_error());
}

// ---- nesting and timeouts -------------------------------------------------------------

Coro<void> nested(Log* log) {
  try {
    co_await corio::task_group([log](TaskGroup& outer) -> Coro<void> {
      outer.create_task(logged(log, "outer-child", 10, 1));
      co_await corio::task_group([](TaskGroup& inner) -> Coro<void> {
        inner.create_task(fail_after(0.5, "deep"));
        co_await corio::sleep(10s);
      });
      log->add("not reached");
    });
    ADD_FAILURE();
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "deep");
    log->add("caught");
  }
  EXPECT_EQ(cancelling(), 0);
}

TEST(TaskGroupBody, NestedGroupsPropagateTheInnerFailureOutward) {
  Log log;
  run_vt(nested(&log));
  EXPECT_EQ(log.events,
            (std::vector<std::string>{"outer-child:start", "outer-child:cleanup", "caught"}));
  expect_times(log.times, {0, 0.5, 0.5});
}

// CPython's test_nested_groups_both_cancelled: the inner group's child and
// the outer group's child fail in the same loop turn. Both groups cancel
// the owner before it resumes, so the outer body sees one cancellation
// still requested (the outer group's) once the inner group withdrew its own.
Coro<void> nested_both_cancelled() {
  int cancelling_in_outer_body = -1;
  try {
    co_await corio::task_group([&](TaskGroup& outer) -> Coro<void> {
      try {
        co_await corio::task_group([&outer](TaskGroup& inner) -> Coro<void> {
          inner.create_task(fail_after(0, "inner"));
          outer.create_task(fail_after(0, "outer"));
          co_return;
        });
        ADD_FAILURE() << "the inner group's error must propagate";
      } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "inner");
      }
      cancelling_in_outer_body = cancelling();
    });
    ADD_FAILURE() << "the outer group's error must propagate";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "outer");
  }
  EXPECT_EQ(cancelling_in_outer_body, 1);
  EXPECT_EQ(cancelling(), 0);
}

TEST(TaskGroupBody, NestedGroupsFailingTogetherLeaveTheOuterCancellationPending) {
  run_vt(nested_both_cancelled());
}

Coro<void> group_in_timeout(Log* log) {
  try {
    co_await corio::timeout(1s, corio::task_group([log](TaskGroup& tg) -> Coro<void> {
                              tg.create_task(logged(log, "child", 10, 1));
                              co_await corio::sleep(10s);
                            }));
    ADD_FAILURE();
  } catch (const corio::TimeoutError&) {
    log->add("timeout");
  }
  EXPECT_EQ(cancelling(), 0);
}

TEST(TaskGroupBody, AGroupInsideATimeoutTimesOut) {
  Log log;
  run_vt(group_in_timeout(&log));
  EXPECT_EQ(log.events, (std::vector<std::string>{"child:start", "child:cleanup", "timeout"}));
  expect_times(log.times, {0, 1, 1});
}

Coro<void> failure_inside_timeout() {
  try {
    co_await corio::timeout(5s, corio::task_group([](TaskGroup& tg) -> Coro<void> {
                              tg.create_task(fail_after(0.1, "boom"));
                              co_await corio::sleep(10s);
                            }));
    ADD_FAILURE();
  } catch (const corio::TimeoutError&) {
    ADD_FAILURE() << "asyncio raises the child's error here, not TimeoutError";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "boom");
    EXPECT_DOUBLE_EQ(now(), 0.1);
  }
}

TEST(TaskGroupBody, AChildFailureInsideATimeoutIsNotATimeout) { run_vt(failure_inside_timeout()); }

// ---- creating children ------------------------------------------------------------------

Coro<void> late_children() {
  bool started = false;
  bool refused = false;
  try {
    co_await corio::task_group([&](TaskGroup& tg) -> Coro<void> {
      tg.create_task(throws_at_once("now"));
      co_await corio::sleep(0s);  // the child fails; the abort it causes is queued, not yet run
      Task<int> late = tg.create_task(mark_started(&started, 1));
      try {
        co_await corio::sleep(1s);
      } catch (const corio::CancelledError&) {
        try {
          tg.create_task(value_after(0, 1));
        } catch (const corio::RuntimeError& e) {
          refused = std::string(e.what()) == "TaskGroup is shutting down";
        }
        EXPECT_TRUE(late.cancelled());
        throw;
      }
    });
    ADD_FAILURE();
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "now");
  }
  EXPECT_FALSE(started);  // cancelled before it ran
  EXPECT_TRUE(refused);
}

TEST(TaskGroupBody, AChildCreatedWhileAbortingNeverRunsAndLaterOnesAreRefused) {
  run_vt(late_children());
}

Coro<void> finished_classic() {
  TaskGroup tg;
  tg.create_task(value_after(0.1, 1));
  co_await tg.wait();
  EXPECT_THROW(tg.create_task(value_after(0, 2)), corio::RuntimeError);
}

TEST(TaskGroupBody, CreateTaskOnAFinishedGroupIsRuntimeError) { run_vt(finished_classic()); }

Coro<void> owned_lambda_children() {
  int total = co_await corio::task_group([](TaskGroup& tg) -> Coro<int> {
    std::vector<Task<int>> tasks;
    for (int i = 1; i <= 3; ++i) {
      // Captured by value, owned by the task: safe across suspensions.
      tasks.push_back(tg.create_task([i]() -> Coro<int> {
        co_await corio::sleep(Secs(0.1 * i));
        co_return i * 10;
      }));
    }
    int sum = 0;
    for (Task<int>& t : tasks) sum += co_await t;
    co_return sum;
  });
  EXPECT_EQ(total, 60);
}

TEST(TaskGroupBody, CreateTaskTakesACallableThatItKeepsAlive) { run_vt(owned_lambda_children()); }

}  // namespace
}  // namespace corio_async_test
