// TaskGroup: structured concurrency. When one child fails, the group cancels
// its siblings and the error surfaces where the group is awaited.
//
//   async def main():
//       try:
//           async with asyncio.TaskGroup() as tg:
//               tg.create_task(fetch("a.json", 0.05))
//               tg.create_task(fetch("b.json", 0.10, fail=True))
//               tg.create_task(fetch("c.json", 0.50))
//       except* ValueError as eg:
//           print("group failed:", eg.exceptions)
//
// C++ has no `async with`: the end of the block is `co_await tg.wait()`.
// a.json finishes first; b.json fails at 0.1 s, which cancels c.json (it
// would have taken 0.5 s); wait() rethrows b.json's exception once every
// child has finished, about 0.1 s after the start.
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>

#include <corio/corio.hpp>

using namespace std::chrono_literals;

namespace app {

corio::Coro<std::string> fetch(std::string name, std::chrono::duration<double> delay,
                               bool fail = false) {
  try {
    co_await corio::sleep(delay);
  } catch (const corio::CancelledError&) {
    std::printf("%s: cancelled by the group\n", name.c_str());
    throw;
  }
  if (fail) throw std::invalid_argument(name + ": unexpected end of input");
  std::printf("%s: done\n", name.c_str());
  co_return name + " contents";
}

const char* state_of(const corio::Task<std::string>& t) {
  if (!t.done()) return "pending";
  if (t.cancelled()) return "cancelled";
  return t.exception() ? "failed" : "finished";
}

corio::Coro<int> main() {
  corio::EventLoop& loop = corio::get_running_loop();
  const double start = loop.time();

  bool surfaced = false;
  corio::TaskGroup tg;
  auto a = tg.create_task(fetch("a.json", 0.05s));
  auto b = tg.create_task(fetch("b.json", 0.10s, /*fail=*/true));
  auto c = tg.create_task(fetch("c.json", 0.50s));
  try {
    co_await tg.wait();  // the end of the `async with` block
    std::printf("all fetched\n");
  } catch (const std::invalid_argument& e) {
    // One failure is rethrown as itself; several would arrive together as a
    // corio::ExceptionGroup.
    std::printf("error from tg.wait(): %s\n", e.what());
    surfaced = true;
  }
  std::printf("a.json %s, b.json %s, c.json %s; elapsed %.2f s\n", state_of(a), state_of(b),
              state_of(c), loop.time() - start);
  // The exit code says whether the story held (`corio demo` runs this program).
  const bool as_told = std::string(state_of(a)) == "finished" &&
                       std::string(state_of(b)) == "failed" && std::string(state_of(c)) == "cancelled";
  co_return surfaced && as_told ? 0 : 1;
}

}  // namespace app

int main() { return corio::run_main(app::main()); }
