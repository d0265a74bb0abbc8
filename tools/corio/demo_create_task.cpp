// Section 2: create_task, start now and await later (examples/create_task.cpp).
#include "demo.hpp"

namespace corio_cli::demo {

namespace {

corio::Coro<int> compute(Demo& demo, int x, Seconds delay) {
  demo.out("compute({}) starts", x);
  co_await corio::sleep(delay);
  demo.out("compute({}) returns {}", x, x * x);
  co_return x* x;
}

}  // namespace

corio::Coro<> create_task_section(Demo& demo) {
  demo.explain(
      "create_task wraps a coroutine in a Task and schedules it at once: it runs while main()");
  demo.explain("goes on, and its result waits in the task until someone awaits it.");
  corio::Task<int> t1 = corio::create_task(compute(demo, 3, demo.t(0.1)));
  corio::Task<int> t2 = corio::create_task(compute(demo, 4, demo.t(0.1)));
  demo.out("tasks created, loop keeps running");  // before either task has taken a step
  const int r1 = co_await t1;  // both tasks run (and sleep) while main() waits here
  const int r2 = co_await t2;  // already done: no wait
  demo.out("{} {}", r1, r2);
  demo.expect(r1 == 9 && r2 == 16, "the results should be 9 16");
  demo.elapsed_line(fmt::format("two {} s computations, slept concurrently", demo.secs(0.1)));
}

}  // namespace corio_cli::demo
