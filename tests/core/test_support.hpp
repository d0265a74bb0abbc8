// Small helpers shared by the core tests.
#pragma once

// Core headers only: the core tests must not depend on later layers.
#include <fcntl.h>
#include <unistd.h>

#include <exception>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/support.hpp"
#include <corio/clock.hpp>
#include <corio/coro.hpp>
#include <corio/errors.hpp>
#include <corio/event_loop.hpp>
#include <corio/future.hpp>
#include <corio/handle.hpp>
#include <corio/run.hpp>
#include <corio/sleep.hpp>
#include <corio/task.hpp>
#include <corio/testing/virtual_clock.hpp>

namespace corio_test {

using corio_testing::Reports;
using corio_testing::starts_with;
using corio_testing::virtual_time;
using corio_testing::what_of;

// Records the line it is called on: `co_await mark(&line, aw)` notes the
// co_await's line in the same statement (for call-graph and traceback tests).
template <class A>
std::decay_t<A> mark(unsigned* line, A&& awaitable, unsigned here = __builtin_LINE()) {
  *line = here;
  return std::forward<A>(awaitable);
}

// A non-blocking pipe closed on scope exit.
struct Pipe {
  int r = -1, w = -1;
  Pipe() {
    int fds[2];
    if (::pipe2(fds, O_NONBLOCK | O_CLOEXEC) == 0) {
      r = fds[0];
      w = fds[1];
    }
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  ~Pipe() { close(); }
  void close() {
    if (r >= 0) ::close(r);
    if (w >= 0) ::close(w);
    r = w = -1;
  }
  bool write_byte(char c = 'x') const { return ::write(w, &c, 1) == 1; }
  int drain() const {
    char buf[256];
    int total = 0;
    for (;;) {
      const ssize_t n = ::read(r, buf, sizeof buf);
      if (n <= 0) return total;
      total += static_cast<int>(n);
    }
  }
};

}  // namespace corio_test
