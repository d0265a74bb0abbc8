// Deadlock detection (OnDeadlock): when every task is suspended and nothing
// can wake them, the loop reports the wait-for graph once through the
// exception handler (cycles named with both await chains, lost wake-ups with
// what each task waits on), or raise mode fails run()'s main task with a
// DeadlockError. Virtual time, no watchdog timer: a timer would be something
// that can wake a task. The report's handler resolves the deadlock (cancels a
// task, sets the event) so that the program ends.
#include <fmt/format.h>

#include "core/test_support.hpp"
#include "sync/idle_action.hpp"
#include "sync/sync_support.hpp"
#include <corio/queue.hpp>

namespace corio_sync_test {
namespace {

using corio_test::mark;

constexpr const char* kHeadline = "deadlock: every task is suspended and nothing can wake them";

// The deadlock reports a run got, and what the handler does on the first.
struct DeadlockReports {
  std::vector<std::string> texts;
  std::vector<std::string> culprits;  // the context's task, "" for none
  std::function<void(const corio::ExceptionContext&)> resolve;

  void install() {
    corio::get_running_loop().set_exception_handler(
        [this](corio::EventLoop&, const corio::ExceptionContext& c) {
          if (!corio_testing::starts_with(c.message, kHeadline)) {
            ADD_FAILURE() << "unexpected report: " << c.message;
            return;
          }
          texts.push_back(c.message);
          culprits.push_back(c.task ? c.task->get_name() : "");
          if (resolve) resolve(c);
        });
  }
};

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

std::string at_line(unsigned line) { return fmt::format("deadlock_test.cpp', line {}, in ", line); }

unsigned g_first_line = 0, g_second_line = 0;

// Takes `first`, lets the other task take its own, then wants `second`.
Coro<void> lock_both(corio::Lock* first, corio::Lock* second, unsigned* line) {
  auto held = co_await first->scoped_lock();
  co_await corio::sleep(1s);
  auto both = co_await mark(line, second->scoped_lock());
}

Coro<void> ignore_cancel(Task<void> t) {
  try {
    co_await t;
  } catch (const corio::CancelledError&) {
  }
}

Coro<void> lock_cycle_main(DeadlockReports* reports, corio::Lock* a, corio::Lock* b) {
  reports->install();
  Task<void> left = corio::create_task(lock_both(a, b, &g_first_line), "left");
  Task<void> right = corio::create_task(lock_both(b, a, &g_second_line), "right");
  reports->resolve = [left](const corio::ExceptionContext&) mutable { left.cancel(); };
  co_await ignore_cancel(left);
  co_await right;
}

TEST(Deadlock, LockCycleIsReportedOnceWithBothTasksLocksAndLines) {
  DeadlockReports reports;
  corio::Lock a, b;
  corio::run(lock_cycle_main(&reports, &a, &b), virtual_time());
  ASSERT_EQ(reports.texts.size(), 1u);
  const std::string& text = reports.texts[0];
  EXPECT_TRUE(contains(text, "(3 tasks)")) << text;
  EXPECT_TRUE(contains(text,
                       "cycle: Task(name='left', id=2) -> Task(name='right', id=3) -> "
                       "Task(name='left', id=2)\n"))
      << text;
  EXPECT_TRUE(contains(text, fmt::format("* Task(name='left', id=2) awaiting lock {} (1 waiting) "
                                         "held by Task(name='right', id=3)",
                                         static_cast<const void*>(&b))))
      << text;
  EXPECT_TRUE(contains(text, fmt::format("* Task(name='right', id=3) awaiting lock {} (1 waiting) "
                                         "held by Task(name='left', id=2)",
                                         static_cast<const void*>(&a))))
      << text;
  EXPECT_TRUE(contains(text, at_line(g_first_line))) << text;
  EXPECT_TRUE(contains(text, "lock_both")) << text;
  EXPECT_TRUE(contains(text, at_line(g_second_line))) << text;
  EXPECT_NE(g_first_line, 0u);
  EXPECT_EQ(reports.culprits[0], "left");
  // Resolved by the handler: both locks are free again.
  EXPECT_FALSE(a.locked());
  EXPECT_FALSE(b.locked());
}

Coro<void> await_slot(Task<void>* other, unsigned* line) {
  co_await corio::sleep(0s);  // the other task exists by now
  co_await mark(line, *other);
}

Coro<void> task_cycle_main(DeadlockReports* reports) {
  reports->install();
  Task<void> slots[2];
  slots[0] = corio::create_task(await_slot(&slots[1], &g_first_line), "alpha");
  slots[1] = corio::create_task(await_slot(&slots[0], &g_second_line), "beta");
  reports->resolve = [alpha = slots[0]](const corio::ExceptionContext&) mutable { alpha.cancel(); };
  co_await ignore_cancel(slots[0]);
  co_await ignore_cancel(slots[1]);
}

TEST(Deadlock, TasksAwaitingEachOtherAreACycle) {
  DeadlockReports reports;
  corio::run(task_cycle_main(&reports), virtual_time());
  ASSERT_EQ(reports.texts.size(), 1u);
  const std::string& text = reports.texts[0];
  EXPECT_TRUE(contains(text,
                       "cycle: Task(name='alpha', id=2) -> Task(name='beta', id=3) -> "
                       "Task(name='alpha', id=2)\n"))
      << text;
  EXPECT_TRUE(contains(text, "awaiting task on Task(name='beta', id=3)")) << text;
  EXPECT_TRUE(contains(text, "awaiting task on Task(name='alpha', id=2)")) << text;
  EXPECT_TRUE(contains(text, at_line(g_first_line))) << text;
  EXPECT_TRUE(contains(text, at_line(g_second_line))) << text;
  // The main task waits on alpha, outside the cycle.
  EXPECT_TRUE(contains(text, "* Task(name='Task-1', id=1) awaiting task on Task(name='alpha'"))
      << text;
}

Coro<int> get_one(corio::Queue<int>* q) { co_return co_await q->get(); }

Coro<void> lost_main(DeadlockReports* reports, corio::Event* ev, corio::Queue<int>* q) {
  reports->install();
  reports->resolve = [ev, q](const corio::ExceptionContext&) {
    ev->set();
    q->put_nowait(1);
  };
  Task<void> waiter = corio::create_task(event_wait(ev), "waiter");
  Task<int> getter = corio::create_task(get_one(q), "getter");
  co_await waiter;
  EXPECT_EQ(co_await getter, 1);
}

TEST(Deadlock, LostWakeUpsNameWhatEachTaskWaitsOn) {
  DeadlockReports reports;
  corio::Event ev;
  corio::Queue<int> q;
  corio::run(lost_main(&reports, &ev, &q), virtual_time());
  ASSERT_EQ(reports.texts.size(), 1u);
  const std::string& text = reports.texts[0];
  EXPECT_TRUE(contains(text, "no cycle: each waits for something no task is left to do"));
  EXPECT_TRUE(
      contains(text, fmt::format("* Task(name='waiter', id=2) awaiting event {} (1 waiting)",
                                 static_cast<const void*>(&ev))))
      << text;
  EXPECT_TRUE(contains(text, "* Task(name='getter', id=3) awaiting queue get 0x")) << text;
  EXPECT_TRUE(contains(text, "sync_support.hpp', line ")) << text;
  // g++ names the coroutine qualified with its parameters, clang bare.
  EXPECT_TRUE(contains(text, "in corio_sync_test::event_wait(") || contains(text, "in event_wait\n"))
      << text;
  EXPECT_EQ(reports.culprits[0], "");
}

// Raise mode: no report; main is cancelled (its frames unwind, the guards
// release the locks) and run() throws the report as a DeadlockError.
Coro<void> raise_main(Reports* reports, corio::Lock* a, corio::Lock* b) {
  reports->install();
  Task<void> other = corio::create_task(lock_both(b, a, &g_second_line), "other");
  co_await lock_both(a, b, &g_first_line);
  co_await other;
}

TEST(Deadlock, RaiseModeFailsMainWithDeadlockError) {
  Reports reports;
  corio::Lock a, b;
  corio::RunOptions opts = virtual_time();
  opts.on_deadlock = corio::OnDeadlock::raise;
  std::string what;
  try {
    corio::run(raise_main(&reports, &a, &b), opts);
    ADD_FAILURE() << "run() returned";
  } catch (const corio::DeadlockError& e) {
    what = e.what();
  }
  EXPECT_TRUE(corio_testing::starts_with(what, kHeadline)) << what;
  EXPECT_TRUE(contains(what,
                       "cycle: Task(name='Task-1', id=1) -> Task(name='other', id=2) -> "
                       "Task(name='Task-1', id=1)"))
      << what;
  EXPECT_EQ(reports.size(), 0u) << reports.joined();
  EXPECT_FALSE(a.locked());
  EXPECT_FALSE(b.locked());
}

// run_until_complete of a plain Future: the Future fails with the error.
TEST(Deadlock, RaiseModeFailsAPlainFutureRunUntilComplete) {
  corio::RunOptions opts = virtual_time();
  opts.on_deadlock = corio::OnDeadlock::raise;
  corio::EventLoop loop(opts);
  corio::Event ev;
  Task<void> waiter = loop.create_task(event_wait(&ev), "waiter");
  corio::Future<int> never = loop.create_future<int>();
  EXPECT_THROW(loop.run_until_complete(never), corio::DeadlockError);
  EXPECT_FALSE(waiter.done());
  ev.set();
  loop.run_until_complete(waiter);
}

// Ignore mode: nothing is reported; the loop blocks as before (here until a
// cross-thread post the test makes once the loop is blocked).
TEST(Deadlock, IgnoreModeStaysSilent) {
  auto clock = std::make_shared<ActOnIdle>();
  corio::EventLoop loop(act_on_idle(clock, corio::OnDeadlock::ignore));
  Reports reports;
  reports.install(loop);
  corio::Event ev;
  clock->action = [&loop, &ev] { loop.call_soon_threadsafe([&ev] { ev.set(); }); };
  loop.run_until_complete(loop.create_task(event_wait(&ev)));
  EXPECT_TRUE(clock->acted);
  EXPECT_EQ(reports.size(), 0u) << reports.joined();
}

}  // namespace
}  // namespace corio_sync_test
