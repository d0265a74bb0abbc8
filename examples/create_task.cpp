// create_task: start work now, collect the results later.
//
//   async def compute(x):
//       await asyncio.sleep(0.1)
//       return x * x
//
//   async def main():
//       t1 = asyncio.create_task(compute(3))
//       t2 = asyncio.create_task(compute(4))
//       print("tasks created, loop keeps running")
//       r1 = await t1
//       r2 = await t2
//       print(r1, r2)          # 9 16
//
// A coroutine object does nothing until it is awaited; create_task wraps it in
// a Task and schedules it on the loop at once, so both computations are
// already under way when main() prints. Awaiting t1 then t2 takes about
// 0.1 s in total, because they slept at the same time.
#include <chrono>
#include <cstdio>

#include <corio/corio.hpp>

using namespace std::chrono_literals;

namespace app {

corio::Coro<int> compute(int x) {
  co_await corio::sleep(0.1s);  // stands for some I/O
  co_return x* x;
}

corio::Coro<int> main() {
  const double start = corio::get_running_loop().time();

  corio::Task<int> t1 = corio::create_task(compute(3));
  corio::Task<int> t2 = corio::create_task(compute(4));
  // Neither task has run yet: they take their first step once main() suspends.
  std::printf("tasks created, loop keeps running\n");

  const int r1 = co_await t1;  // main() suspends here; both tasks sleep concurrently
  const int r2 = co_await t2;  // already done: returns at once
  std::printf("%d %d\n", r1, r2);

  const double elapsed = corio::get_running_loop().time() - start;
  std::printf("elapsed %.2f s (two 0.1 s computations, run concurrently)\n", elapsed);
  // The exit code says whether the story held (`corio demo` runs this program).
  co_return r1 == 9 && r2 == 16 ? 0 : 1;
}

}  // namespace app

int main() { return corio::run_main(app::main()); }
