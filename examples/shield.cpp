// shield: a timeout that gives up waiting without killing the work.
//
//   async def save_to_database(record):
//       await asyncio.sleep(0.3)
//       print("saved", record)
//       return 42
//
//   async def main():
//       task = asyncio.create_task(save_to_database("order #1001"))
//       try:
//           await asyncio.wait_for(asyncio.shield(task), 0.1)
//       except asyncio.TimeoutError:
//           print("gave up waiting, the save goes on")
//       row = await task
//
// wait_for cancels what it waits on when the time is up. Here it waits on
// shield(task), so only the shield is cancelled: main() gets its TimeoutError
// after 0.1 s, and the save itself runs on to completion at 0.3 s. Without
// the shield, the timeout would have cancelled the save half-way.
#include <chrono>
#include <cstdio>
#include <string>

#include <corio/corio.hpp>

using namespace std::chrono_literals;

namespace app {

corio::Coro<int> save_to_database(std::string record) {
  co_await corio::sleep(0.3s);  // stands for a slow write
  std::printf("saved %s\n", record.c_str());
  co_return 42;  // the new row's id
}

corio::Coro<int> main() {
  corio::EventLoop& loop = corio::get_running_loop();
  const double start = loop.time();

  corio::Task<int> save = corio::create_task(save_to_database("order #1001"));
  bool gave_up = false;
  try {
    const int row = co_await corio::wait_for(corio::shield(save), 0.1s);
    std::printf("saved in time as row %d\n", row);
  } catch (const corio::TimeoutError&) {
    gave_up = !save.done();
    std::printf("%.2f s: gave up waiting; the save is still running (done() = %s)\n",
                loop.time() - start, save.done() ? "true" : "false");
  }

  // The task was never cancelled: awaiting it again gets its result.
  const int row = co_await save;
  std::printf("%.2f s: the save completed as row %d (cancelled() = %s)\n", loop.time() - start, row,
              save.cancelled() ? "true" : "false");
  // The exit code says whether the story held (`corio demo` runs this program).
  co_return gave_up && row == 42 && !save.cancelled() ? 0 : 1;
}

}  // namespace app

int main() { return corio::run_main(app::main()); }
