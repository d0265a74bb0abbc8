// Section 5: cancellation with cleanup, and a task that swallows it
// (examples/cancellation.cpp).
#include "demo.hpp"

namespace corio_cli::demo {

namespace {

// Stands for a connection, a lock, a temporary file: released by its
// destructor however the coroutine ends (the `finally` block).
class Resource {
 public:
  Resource(Demo& demo, bool& released) : demo_(demo), released_(released) {
    demo_.out("worker: acquired resource");
  }
  Resource(const Resource&) = delete;
  Resource& operator=(const Resource&) = delete;
  ~Resource() {
    demo_.out("cleanup: releasing resource");
    released_ = true;
  }

 private:
  Demo& demo_;
  bool& released_;
};

corio::Coro<> worker(Demo& demo, bool& released, Seconds step_time) {
  Resource resource(demo, released);
  try {
    for (int step = 1;; ++step) {
      demo.out("worker: step {}", step);
      co_await corio::sleep(step_time);  // where the CancelledError arrives
    }
  } catch (const corio::CancelledError& e) {
    demo.out("worker: CancelledError(\"{}\"), cleaning up and rethrowing", e.message());
    throw;
  }
}

corio::Coro<int> stubborn(Demo& demo, Seconds long_wait, Seconds finish) {
  demo.out("stubborn: co_await sleep({} s)", demo.text(long_wait));
  try {
    co_await corio::sleep(long_wait);
  } catch (const corio::CancelledError&) {
    demo.out("stubborn: caught CancelledError, finishing anyway");
  }
  co_await corio::sleep(finish);  // not interrupted: the request was consumed
  co_return 42;
}

}  // namespace

corio::Coro<> cancel_section(Demo& demo) {
  demo.explain("Cancellation is cooperative: task.cancel() makes the task's current await throw");
  demo.explain("CancelledError; destructors run as it unwinds, they are the `finally` blocks.");

  demo.part(fmt::format("a worker (a step every {} s) cancelled after {} s", demo.secs(0.15),
                        demo.secs(0.2)));
  bool released = false;
  corio::Task<> task = corio::create_task(worker(demo, released, demo.t(0.15)));
  co_await corio::sleep(demo.t(0.2));
  demo.out("main: task.cancel(\"shutting down\")");
  task.cancel("shutting down");
  try {
    co_await task;
  } catch (const corio::CancelledError&) {  // not a std::exception: caught by name
    demo.out("main: co_await task threw CancelledError");
  }
  demo.out("main: task.cancelled() = {}, task.cancelling() = {}", task.cancelled(),
           task.cancelling());
  demo.expect(task.cancelled() && released,
              "the worker should end cancelled, its resource released");
  demo.elapsed_line("cancelled mid-sleep, not at the end of the step");

  demo.part("a task that catches CancelledError and carries on (allowed, as in asyncio)");
  corio::Task<int> t = corio::create_task(stubborn(demo, demo.t(1.0), demo.t(0.05)));
  co_await corio::sleep(demo.t(0.05));  // let it reach its long sleep
  demo.out("main: t.cancel()");
  t.cancel();
  const int value = co_await t;
  demo.out("main: t returned {}; cancelled() = {}, cancelling() = {}", value, t.cancelled(),
           t.cancelling());
  const int left = t.uncancel();
  demo.out("main: t.uncancel() -> cancelling() = {}", left);
  demo.expect(value == 42 && !t.cancelled() && left == 0,
              "the stubborn task should return 42, not cancelled, cancelling() back to 0");
  demo.elapsed_line("its long sleep was cut short, the rest of its work was not");
}

}  // namespace corio_cli::demo
