// Task<T>: results, names, the task registry, stepping order, and reports of
// lost exceptions and destroyed pending tasks. Cancellation is in
// cancel_test.cpp, the big scale tests in stress_test.cpp.
#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/test_support.hpp"

using namespace std::chrono_literals;
using corio::Coro;
using corio::EventLoop;
using corio::Task;
using corio::TaskRef;
using corio_test::Reports;
using corio_test::starts_with;
using corio_test::virtual_time;
using Log = std::vector<std::string>;

namespace {

// ---- results ----------------------------------------------------------------------------

Coro<int> answer() {
  co_await corio::sleep(1ms);
  co_return 42;
}
Coro<std::string> text() {
  co_await corio::sleep(0s);
  co_return std::string(64, 'q');  // longer than the small-string buffer
}
Coro<void> nothing(int* touched) {
  co_await corio::sleep(0s);
  *touched = 1;
}
Coro<std::unique_ptr<int>> boxed(int v) {
  co_await corio::sleep(0s);
  co_return std::make_unique<int>(v);
}

Coro<bool> results_main() {
  int touched = 0;
  auto ti = corio::create_task(answer());
  auto ts = corio::create_task(text());
  auto tv = corio::create_task(nothing(&touched));
  auto tu = corio::create_task(boxed(5));
  const int i = co_await ti;
  const std::string s = co_await ts;
  co_await tv;
  std::unique_ptr<int> u = co_await std::move(tu);
  // Awaiting again / result() on a done task returns at once.
  const int i2 = co_await ti;
  co_return i == 42 && i2 == 42 && ti.result() == 42 && s == std::string(64, 'q') &&
      ts.result() == s&& touched == 1 && u&&* u == 5;
}

TEST(Task, ResultsOfEveryKind) { EXPECT_TRUE(corio::run(results_main(), virtual_time())); }

TEST(Task, RunReturnsMainsResult) {
  EXPECT_EQ(corio::run(answer(), virtual_time()), 42);
  EXPECT_EQ(corio::run(text(), virtual_time()), std::string(64, 'q'));
  auto u = corio::run(boxed(9), virtual_time());
  ASSERT_TRUE(u);
  EXPECT_EQ(*u, 9);
  int touched = 0;
  corio::run(nothing(&touched), virtual_time());
  EXPECT_EQ(touched, 1);
}

Coro<std::string> rvalue_await_main() {
  // The temporary task is the only handle: its value may be moved out.
  co_return co_await corio::create_task(text());
}

TEST(Task, AwaitingATemporaryTask) {
  EXPECT_EQ(corio::run(rvalue_await_main(), virtual_time()), std::string(64, 'q'));
}

Coro<int> throws_now() {
  throw std::runtime_error("immediate");
  co_return 0;
}

TEST(Task, ExceptionBeforeTheFirstSuspension) {
  EXPECT_THROW(corio::run(throws_now(), virtual_time()), std::runtime_error);
}

// ---- stepping order -------------------------------------------------------------------------

Coro<void> ticker(Log* log, std::string name, int n) {
  for (int i = 0; i < n; ++i) {
    log->push_back(name + std::to_string(i));
    co_await corio::sleep(0s);
  }
}

TEST(Task, FirstStepRunsOnTheNextIteration) {
  EventLoop loop;
  Log log;
  auto t = loop.create_task(ticker(&log, "t", 1));
  EXPECT_TRUE(log.empty());  // creating does not run
  loop.run_once();
  EXPECT_EQ(log, (Log{"t0"}));
  EXPECT_FALSE(t.done());
  loop.run_once();
  EXPECT_TRUE(t.done());
}

TEST(Task, SleepZeroYieldsExactlyOnce) {
  EventLoop loop;
  Log log;
  auto a = loop.create_task(ticker(&log, "a", 3));
  auto b = loop.create_task(ticker(&log, "b", 3));
  loop.run_until_complete(b);
  EXPECT_EQ(log, (Log{"a0", "b0", "a1", "b1", "a2", "b2"}));
}

Coro<void> interleave_with_call_soon(Log* log) {
  log->push_back("t1");
  corio::get_running_loop().call_soon([log] { log->push_back("cb"); });
  co_await corio::sleep(0s);
  log->push_back("t2");
}

TEST(Task, SleepZeroLetsEarlierCallbacksRunFirst) {
  EventLoop loop;
  Log log;
  loop.run_until_complete(interleave_with_call_soon(&log));
  EXPECT_EQ(log, (Log{"t1", "cb", "t2"}));
}

Coro<void> sleeper(Log* log, std::string name, double seconds) {
  co_await corio::sleep(std::chrono::duration<double>(seconds));
  log->push_back(name + "@" + std::to_string(corio::get_running_loop().time()));
}

TEST(Task, SleepsWakeInDeadlineOrderThenCreationOrder) {
  EventLoop loop(virtual_time());
  Log log;
  auto c = loop.create_task(sleeper(&log, "c", 2));
  auto a = loop.create_task(sleeper(&log, "a", 1));
  auto b = loop.create_task(sleeper(&log, "b", 1));
  auto z = loop.create_task(sleeper(&log, "z", 0.5));
  loop.run_until_complete(c);
  EXPECT_EQ(log, (Log{"z@0.500000", "a@1.000000", "b@1.000000", "c@2.000000"}));
}

// ---- names, current_task, all_tasks --------------------------------------------------------

Coro<std::string> own_name() {
  co_await corio::sleep(0s);
  co_return corio::current_task()->get_name();
}

TEST(Task, NamesDefaultToTaskNAndCanBeSet) {
  EventLoop loop;
  auto t1 = loop.create_task(own_name());
  auto t2 = loop.create_task(own_name(), "worker");
  auto t3 = loop.create_task(own_name());
  EXPECT_TRUE(starts_with(t1.get_name(), "Task-"));
  EXPECT_EQ(t2.get_name(), "worker");
  // Consecutive ids.
  const int n1 = std::stoi(t1.get_name().substr(5));
  EXPECT_EQ(t3.get_name(), "Task-" + std::to_string(n1 + 2));
  t3.set_name("renamed");
  EXPECT_EQ(t3.get_name(), "renamed");
  EXPECT_EQ(loop.run_until_complete(t2), "worker");
  EXPECT_EQ(loop.run_until_complete(t3), "renamed");
  EXPECT_EQ(loop.run_until_complete(t1), t1.get_name());
}

Coro<bool> current_task_is(Task<bool>* self) {
  co_await corio::sleep(0s);
  auto cur = corio::current_task();
  co_return cur.has_value() && *cur == TaskRef(*self);
}

TEST(Task, CurrentTask) {
  EXPECT_FALSE(corio::current_task().has_value());
  EventLoop loop;
  Task<bool> t;
  t = loop.create_task(current_task_is(&t));
  bool in_callback_none = false;
  loop.call_soon([&] { in_callback_none = !corio::current_task().has_value(); });
  EXPECT_TRUE(loop.run_until_complete(t));
  EXPECT_TRUE(in_callback_none);
  EXPECT_FALSE(corio::current_task().has_value());
}

Coro<void> park(corio::Future<void> gate) { co_await gate; }

Coro<bool> all_tasks_main() {
  auto& loop = corio::get_running_loop();
  auto gate = loop.create_future<void>();
  auto me = *corio::current_task();
  auto a = corio::create_task(park(gate), "a");
  auto b = corio::create_task(park(gate), "b");
  auto tasks = corio::all_tasks();
  bool ok = tasks.size() == 3 && std::count(tasks.begin(), tasks.end(), me) == 1 &&
            std::count(tasks.begin(), tasks.end(), TaskRef(a)) == 1 &&
            std::count(tasks.begin(), tasks.end(), TaskRef(b)) == 1;
  co_await corio::sleep(0s);
  // What each task waits on is visible.
  ok = ok && std::string(TaskRef(a).waiting_on()) == "future" &&
       std::string(me.waiting_on()).empty();
  gate.set_result();
  co_await a;
  co_await b;
  tasks = corio::all_tasks();
  ok = ok && tasks.size() == 1 && tasks[0] == me;  // done tasks leave the registry
  co_return ok;
}

TEST(Task, AllTasksListsThePendingTasksOfTheRunningLoop) {
  EXPECT_THROW(corio::all_tasks(), corio::RuntimeError);
  EXPECT_TRUE(corio::run(all_tasks_main(), virtual_time()));
}

Coro<void> await_self(Task<void>* self) {
  co_await corio::sleep(0s);
  co_await *self;
}

TEST(Task, ATaskCannotAwaitItself) {
  EventLoop loop;
  Task<void> t;
  t = loop.create_task(await_self(&t));
  EXPECT_THROW(loop.run_until_complete(t), corio::RuntimeError);
}

TEST(Task, CreateTaskOutsideALoopThrows) {
  EXPECT_THROW((void)corio::create_task(answer()), corio::RuntimeError);
  EventLoop loop;
  EXPECT_THROW(loop.create_task(Coro<int>{}), corio::ValueError);
}

// ---- exception propagation -----------------------------------------------------------------

Coro<int> level3() {
  co_await corio::sleep(1s);
  throw std::out_of_range("deep");
}
Coro<int> level2(int* unwound) {
  struct Guard {
    int* n;
    ~Guard() { ++*n; }
  } g{unwound};
  co_return 1 + co_await level3();
}
Coro<int> level1(int* unwound) {
  struct Guard {
    int* n;
    ~Guard() { ++*n; }
  } g{unwound};
  co_return 1 + co_await level2(unwound);
}
Coro<std::string> catch_at_top(int* unwound) {
  try {
    co_await level1(unwound);
  } catch (const std::out_of_range& e) {
    co_return e.what();
  }
  co_return "nothing";
}

TEST(Task, ExceptionPropagatesThroughThreeNestedCoros) {
  int unwound = 0;
  EXPECT_EQ(corio::run(catch_at_top(&unwound), virtual_time()), "deep");
  EXPECT_EQ(unwound, 2);
  unwound = 0;
  EventLoop loop(virtual_time());
  auto t = loop.create_task(level1(&unwound));
  EXPECT_THROW(loop.run_until_complete(t), std::out_of_range);
  EXPECT_TRUE(t.done());
  EXPECT_FALSE(t.cancelled());
  EXPECT_EQ(unwound, 2);
}

// ---- reports ---------------------------------------------------------------------------------

Coro<void> fail_soon() {
  co_await corio::sleep(0s);
  throw std::runtime_error("lost");
}

Coro<void> unretrieved_main(Reports* reports) {
  reports->install(corio::get_running_loop());
  {
    auto t = corio::create_task(fail_soon());
    while (!t.done()) co_await corio::sleep(0s);
    if (reports->size() != 0) co_return;  // not while a handle is alive
  }                                       // the last handle drops here
}

TEST(TaskReports, UnretrievedExceptionIsReportedWhenTheLastHandleDrops) {
  Reports reports;
  corio::run(unretrieved_main(&reports), virtual_time());
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_TRUE(starts_with(reports.messages[0], "Task exception was never retrieved"))
      << reports.messages[0];
  EXPECT_EQ(corio_test::what_of(reports.exceptions[0]), "lost");
}

Coro<void> fire_and_forget_main(Reports* reports) {
  reports->install(corio::get_running_loop());
  (void)corio::create_task(fail_soon());
  for (int i = 0; i < 4; ++i) co_await corio::sleep(0s);
}

TEST(TaskReports, FireAndForgetFailureIsReportedWhenItFinishes) {
  Reports reports;
  corio::run(fire_and_forget_main(&reports), virtual_time());
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_TRUE(starts_with(reports.messages[0], "Task exception was never retrieved"));
}

Coro<void> retrieved_main(Reports* reports) {
  reports->install(corio::get_running_loop());
  auto a = corio::create_task(fail_soon());
  auto b = corio::create_task(fail_soon());
  auto c = corio::create_task(fail_soon());
  try {
    co_await a;
  } catch (const std::runtime_error&) {
  }
  while (!b.done() || !c.done()) co_await corio::sleep(0s);
  (void)b.exception();
  try {
    c.result();
  } catch (const std::runtime_error&) {
  }
}

TEST(TaskReports, RetrievedExceptionsAreNotReported) {
  Reports reports;
  corio::run(retrieved_main(&reports), virtual_time());
  EXPECT_EQ(reports.size(), 0u);
}

// asyncio: Future.cancel() on a done future clears its traceback log first,
// so cancelling a task (or future) that already failed is handling its error.
Coro<void> cancel_after_failure_main(Reports* reports, bool* cancel_result) {
  reports->install(corio::get_running_loop());
  {
    auto t = corio::create_task(fail_soon());
    while (!t.done()) co_await corio::sleep(0s);
    *cancel_result = t.cancel();
    auto f = corio::get_running_loop().create_future<int>();
    f.set_exception(std::make_exception_ptr(std::runtime_error("future")));
    EXPECT_FALSE(f.cancel());
    EXPECT_FALSE(f.cancelled());
  }  // the last handles drop here
  co_await corio::sleep(0s);
}

TEST(TaskReports, CancelOnAFailedTaskCountsAsRetrievingIt) {
  Reports reports;
  bool cancel_result = true;
  corio::run(cancel_after_failure_main(&reports, &cancel_result), virtual_time());
  EXPECT_FALSE(cancel_result);
  EXPECT_EQ(reports.size(), 0u) << reports.messages[0];
}

// A cancel() while the task runs does not count: the failure that follows
// is still reported (asyncio's set_exception sets the flag again).
Coro<void> throw_after_cancel() {
  try {
    co_await corio::sleep(1h);
  } catch (const corio::CancelledError&) {
  }
  throw std::runtime_error("after cancel");
}

Coro<void> cancel_before_failure_main(Reports* reports) {
  reports->install(corio::get_running_loop());
  {
    auto t = corio::create_task(throw_after_cancel());
    co_await corio::sleep(0s);
    EXPECT_TRUE(t.cancel());
    while (!t.done()) co_await corio::sleep(0s);
  }
  co_await corio::sleep(0s);
}

TEST(TaskReports, CancelBeforeTheFailureDoesNotHideIt) {
  Reports reports;
  corio::run(cancel_before_failure_main(&reports), virtual_time());
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(corio_test::what_of(reports.exceptions[0]), "after cancel");
}

Coro<void> sleep_forever(int* cleaned) {
  struct Cleanup {
    int* n;
    ~Cleanup() { ++*n; }
  } c{cleaned};
  co_await corio::sleep(1h);
}

TEST(TaskReports, CloseReportsAndDestroysPendingTasks) {
  EventLoop loop;
  Reports reports;
  reports.install(loop);
  int cleaned = 0;
  auto started = loop.create_task(sleep_forever(&cleaned), "sleeper");
  loop.run_once();  // it is now suspended in sleep()
  auto never_started = loop.create_task(sleep_forever(&cleaned), "unstarted");
  loop.close();
  ASSERT_EQ(reports.size(), 2u);
  for (const auto& m : reports.messages)
    EXPECT_TRUE(starts_with(m, "Task was destroyed but it is pending! <Task name=")) << m;
  EXPECT_EQ(reports.task_names, (std::vector<std::string>{"sleeper", "unstarted"}));
  EXPECT_EQ(cleaned, 1);  // the started frame unwound its locals
  EXPECT_TRUE(started.done());
  EXPECT_TRUE(never_started.done());
}

Coro<void> leave_work_behind(int* cleaned) {
  (void)corio::create_task(sleep_forever(cleaned));
  (void)corio::create_task(sleep_forever(cleaned));
  co_await corio::sleep(1s);
}

TEST(TaskReports, RunCancelsLeftoverTasksAndTheirCleanupRuns) {
  int cleaned = 0;
  corio::run(leave_work_behind(&cleaned), virtual_time());
  EXPECT_EQ(cleaned, 2);
}

TEST(TaskReports, UnretrievedExceptionAfterCloseGoesToStderr) {
  ::testing::internal::CaptureStderr();
  {
    Task<void> kept;
    {
      EventLoop loop;
      kept = loop.create_task(fail_soon());
      loop.run_once();
      loop.run_once();
      EXPECT_TRUE(kept.done());
    }
  }  // loop gone first, then the handle
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("Task exception was never retrieved"), std::string::npos) << err;
  EXPECT_NE(err.find("lost"), std::string::npos) << err;
}

}  // namespace
