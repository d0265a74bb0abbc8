// Section 8: a blocking call inside a task, caught by debug mode, then moved
// to a thread with to_thread (examples/blocking_to_thread.cpp).
#include <cstddef>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "demo.hpp"

namespace corio_cli::demo {

namespace {

// Stands for time.sleep(), requests.get(), a large file read: it holds the
// calling thread for the whole duration.
void blocking_io(Seconds duration) { std::this_thread::sleep_for(duration); }

// "created at /long/path/demo_threads.cpp:NN" -> "created at demo_threads.cpp:NN".
std::string shorten(std::string message) {
  const std::string tag = " created at ";
  const std::size_t from = message.find(tag);
  if (from == std::string::npos) return message;
  const std::size_t path = from + tag.size();
  const std::size_t slash = message.rfind('/', message.find(':', path));
  if (slash != std::string::npos && slash >= path) message.erase(path, slash + 1 - path);
  return message;
}

// Debug mode for one section, with a handler that narrates and counts the
// slow-step reports; the loop's previous settings come back at the end.
class DebugMode {
 public:
  DebugMode(Demo& demo, Seconds slow, std::vector<std::string>* reports)
      : loop_(corio::get_running_loop()),
        was_debug_(loop_.get_debug()),
        was_slow_(loop_.slow_callback_duration) {
    loop_.set_debug(true);
    loop_.slow_callback_duration = slow.count();
    loop_.set_exception_handler(
        [&demo, reports](corio::EventLoop&, const corio::ExceptionContext& ctx) {
          reports->push_back(ctx.message);
          demo.out("exception handler: {}", shorten(ctx.message));
        });
  }
  DebugMode(const DebugMode&) = delete;
  DebugMode& operator=(const DebugMode&) = delete;
  ~DebugMode() {
    loop_.set_exception_handler(nullptr);  // the default handler again
    loop_.slow_callback_duration = was_slow_;
    loop_.set_debug(was_debug_);
  }

 private:
  corio::EventLoop& loop_;
  bool was_debug_;
  double was_slow_;
};

struct Ticks {
  int count = 0;
  int late = 0;  // ticks more than half an interval behind
};

corio::Coro<> ticker(Demo& demo, Ticks* ticks, Seconds interval) {
  corio::EventLoop& loop = corio::get_running_loop();
  for (;;) {
    const double due = loop.time() + interval.count();
    co_await corio::sleep(interval);
    const double late = loop.time() - due;
    ++ticks->count;
    if (late > interval.count() / 2) {
      ++ticks->late;
      demo.out("ticker: tick, {} s late: the loop was blocked", demo.text(Seconds(late)));
    } else {
      demo.out("ticker: tick");
    }
  }
}

corio::Coro<> fetch_blocking(Demo& demo, Seconds duration) {
  demo.out("fetch: std::this_thread::sleep_for({} s), inside the task", demo.text(duration));
  blocking_io(duration);  // the loop's only thread sleeps: no other task can run
  demo.out("fetch: done");
  co_return;
}

corio::Coro<> fetch_threaded(Demo& demo, Ticks* ticks, Seconds duration, int* ticks_meanwhile) {
  demo.out("fetch: co_await corio::to_thread(blocking_io, {} s)", demo.text(duration));
  const int before = ticks->count;
  co_await corio::to_thread(blocking_io, duration);  // a pool thread sleeps instead
  *ticks_meanwhile = ticks->count - before;
  demo.out("fetch: done");
}

// Runs a ticker around one fetch: a little before, the fetch, a little after.
corio::Coro<> around_ticker(Demo& demo, Ticks* ticks, corio::Coro<> fetch, Seconds interval) {
  corio::Task<> tick = corio::create_task(ticker(demo, ticks, interval), "ticker");
  co_await corio::sleep(demo.t(0.15));
  corio::Task<> job = corio::create_task(std::move(fetch), "fetch");
  co_await job;
  co_await corio::sleep(demo.t(0.15));
  tick.cancel();
  try {
    co_await tick;
  } catch (const corio::CancelledError&) {
  }
}

}  // namespace

corio::Coro<> blocking_section(Demo& demo) {
  const Seconds block = demo.t(0.4);
  const Seconds slow = block / 5;
  const Seconds interval = demo.t(0.1);
  demo.explain("A blocking call inside a task freezes the whole loop: no other task runs until it");
  demo.explain("returns. Debug mode (loop.set_debug(true), or CORIO_DEBUG=1) hands every step");
  demo.explain(
      fmt::format("longer than loop.slow_callback_duration ({} s here) to the exception handler.",
                  demo.text(slow)));
  demo.explain(fmt::format("A ticker task ticks every {} s meanwhile.", demo.text(interval)));
  std::vector<std::string> reports;
  DebugMode debug(demo, slow, &reports);

  demo.part("the blocking call in a task");
  Ticks first;
  corio::Coro<> blocking = fetch_blocking(demo, block);
  co_await around_ticker(demo, &first, std::move(blocking), interval);
  const bool reported =
      reports.size() == 1 && reports[0].find("Executing <Task name='fetch'") != std::string::npos;
  demo.expect(reported, "debug mode should report the fetch task's slow step, once");
  demo.expect(first.late > 0, "the ticker should have stalled while the loop was blocked");
  demo.elapsed_line("the ticker stood still while the task blocked");

  demo.part("the fix: the same call on a thread with co_await corio::to_thread(...)");
  reports.clear();
  Ticks second;
  int meanwhile = 0;
  corio::Coro<> threaded = fetch_threaded(demo, &second, block, &meanwhile);
  co_await around_ticker(demo, &second, std::move(threaded), interval);
  demo.out("{} ticks while the thread blocked, {} reports", meanwhile, reports.size());
  demo.expect(reports.empty(), "debug mode should report nothing once the call is on a thread");
  demo.expect(meanwhile >= 2, "the ticker should keep ticking while the thread blocks");
  demo.elapsed_line("the loop kept running: the thread did the waiting");
}

}  // namespace corio_cli::demo
