// Producers and consumers on a bounded queue, ended by shutdown() (Python 3.13).
//
//   async def producer(q, name, n):
//       for i in range(1, n + 1):
//           await q.put(f"{name}{i}")        # waits while the queue is full
//
//   async def consumer(q, name):
//       try:
//           while True:
//               item = await q.get()
//               await asyncio.sleep(0.1)     # process it
//               q.task_done()
//       except asyncio.QueueShutDown:
//           pass
//
//   async def main():
//       q = asyncio.Queue(maxsize=3)
//       consumers = [asyncio.create_task(consumer(q, c)) for c in ("x", "y")]
//       await asyncio.gather(producer(q, "A", 4), producer(q, "B", 4))
//       await q.join()                       # every item processed
//       q.shutdown()                         # consumers' get() raises QueueShutDown
//       await asyncio.gather(*consumers)
//
// The producers are fast and the consumers slow, so the queue fills up at 3
// items and each put() then waits for a consumer to take one: back-pressure.
// 8 items, 2 consumers, 0.1 s each: about 0.4 s in all.
#include <chrono>
#include <cstdio>
#include <string>

#include <corio/corio.hpp>

using namespace std::chrono_literals;

namespace app {

double now() { return corio::get_running_loop().time(); }

corio::Coro<> producer(corio::Queue<std::string>* q, std::string name, int n, double start) {
  for (int i = 1; i <= n; ++i) {
    std::string item = name + std::to_string(i);
    if (q->full())
      std::printf("%5.2f  %s: queue full, put(%s) waits\n", now() - start, name.c_str(),
                  item.c_str());
    co_await q->put(std::move(item));
  }
  std::printf("%5.2f  %s: all %d items put\n", now() - start, name.c_str(), n);
}

// Returns how many items it processed.
corio::Coro<int> consumer(corio::Queue<std::string>* q, std::string name, double start) {
  int done = 0;
  for (;;) {
    std::string item;
    try {
      item = co_await q->get();
    } catch (const corio::QueueShutDown&) {
      std::printf("%5.2f  %s: QueueShutDown, stops after %d items\n", now() - start, name.c_str(),
                  done);
      co_return done;
    }
    co_await corio::sleep(100ms);  // process the item
    std::printf("%5.2f  %s: processed %s\n", now() - start, name.c_str(), item.c_str());
    ++done;
    q->task_done();
  }
}

corio::Coro<int> main() {
  const double start = now();
  corio::Queue<std::string> q(3);  // maxsize 3
  corio::Task<int> x = corio::create_task(consumer(&q, "x", start));
  corio::Task<int> y = corio::create_task(consumer(&q, "y", start));

  co_await corio::gather(producer(&q, "A", 4, start), producer(&q, "B", 4, start));
  co_await q.join();  // every item put has been task_done()
  std::printf("%5.2f  main: join() returned, shutdown()\n", now() - start);
  q.shutdown();
  const int processed = co_await x + co_await y;
  std::printf("%5.2f  main: %d items processed\n", now() - start, processed);
  // The exit code says whether the story held (`corio demo` runs this program).
  co_return processed == 8 && q.qsize() == 0 ? 0 : 1;
}

}  // namespace app

int main() {
  return corio::run_main(app::main());  // asyncio.run(main())
}
