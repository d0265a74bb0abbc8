// Built against an installed corio by tests/install/run.cmake.
#include <corio/corio.hpp>

#include <chrono>

corio::Coro<int> answer() {
  co_await corio::sleep(std::chrono::milliseconds(1));
  co_return 42;
}

int main() { return corio::run(answer()) == 42 ? 0 : 1; }
