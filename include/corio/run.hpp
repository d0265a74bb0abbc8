// corio::run(main): asyncio.run.
//
// Creates a new loop, runs main as a task until it completes, then cancels
// every task still pending, runs the loop until they have unwound, and closes
// the loop. Returns main's result or rethrows its exception. Calling it from a
// running loop throws RuntimeError (nested loops would starve the outer one).
#pragma once

#include <corio/event_loop.hpp>

namespace corio {

namespace detail {
void check_no_running_loop();
// Cancels what main left running, lets it unwind, closes the loop.
void finish_run(EventLoop& loop) noexcept;
}  // namespace detail

template <class T>
T run(Coro<T> main, RunOptions opts = {},
      SourceLocation where = SourceLocation::current()) {
  detail::check_no_running_loop();
  EventLoop loop(std::move(opts));
  struct Finish {
    EventLoop& loop;
    ~Finish() { detail::finish_run(loop); }
  } finish{loop};
  return loop.run_until_complete(std::move(main), where);
}

}  // namespace corio
