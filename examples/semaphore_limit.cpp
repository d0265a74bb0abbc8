// A Semaphore caps how many tasks do something at once.
//
//   sem = asyncio.Semaphore(5)
//
//   async def fetch(i):
//       async with sem:                      # at most 5 inside at a time
//           await asyncio.sleep(0.05)        # the request
//
//   async def main():
//       await asyncio.gather(*(fetch(i) for i in range(1, 101)))
//
// All 100 tasks start at once, 5 get a permit and the other 95 wait in line
// (FIFO). Each finished task hands its permit to the next, so the 100 run in
// 20 waves of 5: about 20 x 0.05 = 1 s, with never more than 5 running.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include <corio/corio.hpp>

using namespace std::chrono_literals;

namespace app {

struct Stats {
  int running = 0;
  int peak = 0;
  int finished = 0;
};

corio::Coro<> fetch(int i, corio::Semaphore* sem, Stats* stats) {
  auto permit = co_await sem->scoped_acquire();  // `async with sem:`
  stats->running += 1;
  stats->peak = std::max(stats->peak, stats->running);
  if (i % 20 == 0) std::printf("fetch %3d starts, %d running\n", i, stats->running);
  co_await corio::sleep(50ms);  // the request
  stats->running -= 1;
  stats->finished += 1;
}  // permit released: the longest waiter gets it

corio::Coro<int> main() {
  const double start = corio::get_running_loop().time();
  corio::Semaphore sem(5);
  Stats stats;
  std::vector<corio::Coro<>> fetches;
  for (int i = 1; i <= 100; ++i) fetches.push_back(fetch(i, &sem, &stats));
  co_await corio::gather(std::move(fetches));
  const double elapsed = corio::get_running_loop().time() - start;
  std::printf("%d finished, at most %d at once, elapsed %.2f s (100 / 5 x 0.05 s = 1.00 s)\n",
              stats.finished, stats.peak, elapsed);
  // The exit code says whether the story held (`corio demo` runs this program).
  // In waves of 5: never more at once, and 20 waves of 0.05 s at the least.
  co_return stats.finished == 100 && stats.peak == 5 && elapsed >= 0.95 ? 0 : 1;
}

}  // namespace app

int main() {
  return corio::run_main(app::main());  // asyncio.run(main())
}
