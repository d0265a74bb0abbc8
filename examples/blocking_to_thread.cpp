// A blocking call freezes the loop; debug mode catches it; to_thread fixes it.
//
//   def fetch_sync():
//       time.sleep(0.5)                      # blocks the loop's only thread
//
//   async def main():
//       loop = asyncio.get_running_loop()
//       loop.slow_callback_duration = 0.1
//       ticker_task = asyncio.create_task(ticker())
//       await asyncio.sleep(0.15)
//       await asyncio.create_task(blocking())    # fetch_sync() inside the task
//       await asyncio.sleep(0.15)
//       await asyncio.to_thread(fetch_sync)      # the same work on a thread
//       ...
//
//   asyncio.run(main(), debug=True)
//
// While fetch_sync() runs inside a task, nothing else runs: the tick due at
// 0.20 s comes at 0.65 s, and debug mode reports the slow step through the
// exception handler:
//
//   Executing <Task name='blocking' created at .../blocking_to_thread.cpp:NN> took 0.501 seconds
//
// With to_thread the loop keeps running; the ticker ticks on time meanwhile
// and there is no report.
#include <chrono>
#include <cstdio>
#include <thread>

#include <corio/corio.hpp>

using namespace std::chrono_literals;

namespace app {

void fetch_sync() {
  std::this_thread::sleep_for(500ms);  // stands for requests.get(), a big file read, ...
}

double now() { return corio::get_running_loop().time(); }

// How many reports debug mode made (the handler may run until the loop closes:
// no pointer into main()'s frame).
int reports = 0;

corio::Coro<> ticker(double start, int* ticks) {
  for (;;) {
    co_await corio::sleep(100ms);
    std::printf("%5.2f  tick\n", now() - start);
    ++*ticks;
  }
}

corio::Coro<> blocking(double start) {
  std::printf("%5.2f  blocking: fetch_sync() in the task\n", now() - start);
  fetch_sync();  // the mistake: the loop's thread sleeps, no task can run
  std::printf("%5.2f  blocking: done\n", now() - start);
  co_return;
}

corio::Coro<> threaded(double start) {
  std::printf("%5.2f  threaded: co_await to_thread(fetch_sync)\n", now() - start);
  co_await corio::to_thread(fetch_sync);  // a pool thread sleeps, the loop runs on
  std::printf("%5.2f  threaded: done\n", now() - start);
}

corio::Coro<int> main() {
  corio::EventLoop& loop = corio::get_running_loop();
  const double start = loop.time();
  loop.slow_callback_duration = 0.1;  // report any step longer than 0.1 s
  loop.set_exception_handler([start](corio::EventLoop& l, const corio::ExceptionContext& ctx) {
    std::printf("%5.2f  debug: %s\n", l.time() - start, ctx.message.c_str());
    ++reports;
  });

  int ticks_seen = 0;
  corio::Task<> ticks = corio::create_task(ticker(start, &ticks_seen), "ticker");
  co_await corio::sleep(150ms);
  corio::Task<> first = corio::create_task(blocking(start), "blocking");
  co_await first;
  const int reported_blocking = reports;
  co_await corio::sleep(150ms);
  const int ticks_before = ticks_seen;
  corio::Task<> second = corio::create_task(threaded(start), "threaded");
  co_await second;
  const int ticks_meanwhile = ticks_seen - ticks_before;
  co_await corio::sleep(150ms);
  ticks.cancel();
  // The exit code says whether the story held (`corio demo` runs this program).
  // Debug mode named the blocking step, and nothing once the call was on a
  // thread; the ticker ran on meanwhile.
  co_return reported_blocking > 0 && reports == reported_blocking && ticks_meanwhile >= 2 ? 0 : 1;
}

}  // namespace app

int main() {
  corio::RunOptions opts;
  opts.debug = true;  // asyncio.run(main(), debug=True); or CORIO_DEBUG=1
  return corio::run_main(app::main(), opts);
}
