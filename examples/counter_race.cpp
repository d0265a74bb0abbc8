// The shared-counter race, and the Lock that fixes it.
//
// Coroutines share memory as threads do, but a task can only be interrupted at
// a co_await. So the race needs an await *between* the read and the write:
//
//   async def add_one():                   # (a) no race: 1000
//       global counter
//       counter += 1
//       await asyncio.sleep(0)
//
//   async def add_one_racy():              # (b) lost updates: far below 1000
//       global counter
//       value = counter
//       await asyncio.sleep(0)             # every other task reads the same value
//       counter = value + 1
//
//   async def add_one_locked():            # (c) the fix: 1000
//       global counter
//       async with lock:
//           value = counter
//           await asyncio.sleep(0)
//           counter = value + 1
//
// Each variant runs 1000 tasks with gather. (a) is the tutorial's example; its
// claim that it loses updates is wrong: nothing can run between its read and
// its write. In (b) all 1000 tasks read 0 before any writes, so the result is 1.
#include <chrono>
#include <cstdio>
#include <vector>

#include <corio/corio.hpp>

using namespace std::chrono_literals;

namespace app {

// State is passed in as a pointer: coroutines must not capture it (a lambda's
// captures die at the first suspension).
corio::Coro<> add_one(int* counter) {
  *counter += 1;  // read and write with no await in between
  co_await corio::sleep(0s);
}

corio::Coro<> add_one_racy(int* counter) {
  const int value = *counter;
  co_await corio::sleep(0s);  // the other tasks run here and read the same value
  *counter = value + 1;
}

corio::Coro<> add_one_locked(int* counter, corio::Lock* lock) {
  auto guard = co_await lock->scoped_lock();  // `async with lock:`
  const int value = *counter;
  co_await corio::sleep(0s);  // others run, but wait at the lock
  *counter = value + 1;
}  // guard releases the lock

corio::Coro<int> main() {
  constexpr int kTasks = 1000;

  int counter = 0;
  std::vector<corio::Coro<>> tasks;
  for (int i = 0; i < kTasks; ++i) tasks.push_back(add_one(&counter));
  co_await corio::gather(std::move(tasks));
  std::printf("(a) counter += 1, then await:          %d\n", counter);
  const int plain = counter;

  counter = 0;
  tasks.clear();
  for (int i = 0; i < kTasks; ++i) tasks.push_back(add_one_racy(&counter));
  co_await corio::gather(std::move(tasks));
  std::printf("(b) read, await, write:                %d  (updates lost)\n", counter);
  const int racy = counter;

  counter = 0;
  tasks.clear();
  corio::Lock lock;
  for (int i = 0; i < kTasks; ++i) tasks.push_back(add_one_locked(&counter, &lock));
  co_await corio::gather(std::move(tasks));
  std::printf("(c) read, await, write under a Lock:   %d\n", counter);
  // The exit code says whether the story held (`corio demo` runs this program).
  co_return plain == kTasks && racy < kTasks && counter == kTasks ? 0 : 1;
}

}  // namespace app

int main() {
  return corio::run_main(app::main());  // asyncio.run(main())
}
