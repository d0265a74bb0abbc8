// Built against an installed corio by tests/install/run.cmake, with the
// compiler that built corio and with the other one (g++ 12, clang++ 14).
#include <chrono>
#include <stdexcept>
#include <string>

#include <corio/corio.hpp>

namespace {

corio::Coro<int> answer() {
  co_await corio::sleep(std::chrono::milliseconds(1));
  co_return 42;
}

constexpr unsigned kWaitLine = __LINE__ + 1;
corio::Coro<void> waiter(corio::Event& ev) { co_await ev.wait(); }

corio::Coro<void> failing() {
  co_await corio::sleep(std::chrono::milliseconds(0));
  throw std::runtime_error("expected");  // its site goes to the library (note_unwind)
}

// The library reads the await site this file's coroutine recorded: the
// sites must have one layout whichever compiler built each side.
bool site_read_back(const corio::FutureCallGraph& g) {
  if (g.call_stack.empty()) return false;
  const corio::FrameCallGraphEntry& e = g.call_stack.front();
  return e.function.find("waiter") != std::string::npos &&
         e.file.find("main.cpp") != std::string::npos && e.line == kWaitLine;
}

corio::Coro<int> check() {
  corio::Event ev;
  corio::Task<void> t = corio::create_task(waiter(ev));
  co_await corio::sleep(std::chrono::milliseconds(0));
  const bool read_back = site_read_back(corio::capture_call_graph(t));
  ev.set();
  co_await t;
  try {
    co_await failing();
    co_return 1;
  } catch (const std::runtime_error&) {
  }
  co_return read_back ? co_await answer() : 2;
}

}  // namespace

int main() { return corio::run(check()) == 42 ? 0 : 1; }
