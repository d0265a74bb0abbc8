// gather: three coroutines on one thread.
//
// The C++ version of the asyncio classic:
//
//   async def say(seq, word, delay):
//       await asyncio.sleep(delay)
//       print(f"[{seq}] {word}")
//
//   async def main():
//       await asyncio.gather(say(1, "hello", 0.3), say(2, "world", 0.1), say(3, "async", 0.2))
//
//   asyncio.run(main())
//
// Each say() gives control back to the loop at its sleep, so the three run
// concurrently on one thread. They print in the order their delays end, not
// the order they were written:
//
//   [2] world
//   [3] async
//   [1] hello
//
// and the whole thing takes about 0.3 s, the slowest delay, not the sum (0.6 s).
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <corio/corio.hpp>

using namespace std::chrono_literals;

namespace app {

// Parameters are taken by value: they live in the coroutine frame for as long
// as the coroutine runs.
corio::Coro<> say(int seq, std::string word, std::chrono::duration<double> delay,
                  std::vector<int>* order) {
  co_await corio::sleep(delay);  // suspend; the loop runs the others meanwhile
  std::printf("[%d] %s\n", seq, word.c_str());
  order->push_back(seq);
}

corio::Coro<int> main() {
  const double start = corio::get_running_loop().time();

  // gather turns each coroutine into a task, runs them concurrently and waits
  // for all three (results in argument order; say() returns nothing).
  std::vector<int> order;
  co_await corio::gather(say(1, "hello", 0.3s, &order), say(2, "world", 0.1s, &order),
                         say(3, "async", 0.2s, &order));

  const double elapsed = corio::get_running_loop().time() - start;
  std::printf("elapsed %.2f s (the slowest delay, not the sum of 0.60 s)\n", elapsed);
  // The exit code says whether the story held (`corio demo` runs this program).
  co_return order == std::vector<int>{2, 3, 1} ? 0 : 1;
}

}  // namespace app

int main() {
  return corio::run_main(app::main());  // asyncio.run(main()): new loop, run main, close
}
