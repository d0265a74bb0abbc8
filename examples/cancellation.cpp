// Cancellation is cooperative: task.cancel() makes the task's current (or
// next) co_await throw corio::CancelledError.
//
//   async def worker():
//       resource = acquire()
//       try:
//           while True:
//               await asyncio.sleep(0.15)
//       except asyncio.CancelledError:
//           print("worker: cancelled")
//           raise
//       finally:
//           resource.release()
//
// In C++ the `finally` is a destructor: the CancelledError unwinds the
// coroutine's frame like any exception, so RAII guards release what they hold.
// A handler that wants to react catches CancelledError by name (it is not a
// std::exception, so `catch (const std::exception&)` cannot swallow it by
// accident) and rethrows.
//
// Part 2 shows the other choice asyncio allows: a task that catches the
// CancelledError and carries on. It is then not cancelled() and returns its
// value; cancelling() still counts the request until uncancel() withdraws it.
#include <chrono>
#include <cstdio>
#include <string>

#include <corio/corio.hpp>

using namespace std::chrono_literals;

namespace app {

// Stands for a connection, a lock, a temporary file...
class Resource {
 public:
  Resource() { std::printf("worker: acquired resource\n"); }
  Resource(const Resource&) = delete;
  Resource& operator=(const Resource&) = delete;
  ~Resource() { std::printf("cleanup: releasing resource\n"); }
};

corio::Coro<> worker() {
  Resource resource;  // released however the coroutine ends
  try {
    for (int step = 1;; ++step) {
      std::printf("worker: step %d\n", step);
      co_await corio::sleep(0.15s);  // where the CancelledError arrives
    }
  } catch (const corio::CancelledError& e) {
    std::printf("worker: cancelled (\"%s\"), cleaning up\n", e.message().c_str());
    throw;  // let the task end cancelled; `resource` is released as this unwinds
  }
}

// Catches the cancellation and finishes its work anyway.
corio::Coro<int> stubborn() {
  try {
    co_await corio::sleep(1s);
  } catch (const corio::CancelledError&) {
    std::printf("stubborn: caught CancelledError, finishing anyway\n");
  }
  co_await corio::sleep(0.05s);  // not interrupted: the request was consumed above
  co_return 42;
}

const char* yes_no(bool b) { return b ? "true" : "false"; }

corio::Coro<int> main() {
  // Part 1: cancel a worker after 0.2 s (it is half-way through its second step).
  corio::Task<> task = corio::create_task(worker());
  co_await corio::sleep(0.2s);
  std::printf("main: cancelling the worker\n");
  task.cancel("shutting down");
  try {
    co_await task;
  } catch (const corio::CancelledError&) {
    std::printf("main: the worker ended with CancelledError\n");
  }
  std::printf("main: cancelled() = %s, cancelling() = %d\n\n", yes_no(task.cancelled()),
              task.cancelling());

  // Part 2: a task that swallows the cancellation.
  corio::Task<int> t = corio::create_task(stubborn());
  co_await corio::sleep(0.05s);  // let it start and reach its long sleep
  t.cancel();
  const int value = co_await t;
  std::printf("main: stubborn returned %d; cancelled() = %s, cancelling() = %d\n", value,
              yes_no(t.cancelled()), t.cancelling());
  const int left = t.uncancel();  // withdraw the request, as asyncio.timeout does
  std::printf("main: after uncancel(), cancelling() = %d\n", left);
  // The exit code says whether the story held (`corio demo` runs this program).
  co_return task.cancelled() && value == 42 && !t.cancelled() && left == 0 ? 0 : 1;
}

}  // namespace app

int main() { return corio::run_main(app::main()); }
