/// \file
/// corio::RunOptions: how corio::run() (or an EventLoop) sets up its loop: debug
/// mode, the backend, the clock, inspection, the deadlock policy, the stall
/// detector.
#pragma once

#include <memory>

#include <corio/clock.hpp>
#include <corio/stall_detector.hpp>

namespace corio {

/// What the loop runs on (docs/core-design.md, "Backends"). `io_uring` falls back to epoll when the
/// kernel, its settings or a seccomp profile refuse it (debug mode says why); `best` is io_uring on
/// Linux 6.1 and later where io_uring is allowed, else epoll (docs/core-design.md, "Which backend
/// is best"). The environment's CORIO_BACKEND=epoll|io_uring|best overrides it.
enum class Backend { best, epoll, io_uring };

/// What the loop does when every task is suspended and nothing can wake any of
/// them (docs/tasks.md, "Deadlocks"): no timer, no watched fd or socket wait,
/// no executor call, no signal handler, no ThreadsafeHold.
enum class OnDeadlock {
  report,  ///< the wait-for graph goes to the exception handler, once; the loop then waits on
  /// run_until_complete() (so corio::run()) throws DeadlockError, main cancelled;
  /// under a bare run_forever(), with no main, as report
  raise,
  ignore,  ///< the loop waits in silence (a program whose threads post without a hold)
};

/// How corio::run() (or an EventLoop) sets up its loop.
struct RunOptions {
  bool debug = false;  ///< also on when the environment has CORIO_DEBUG=1
  /// The poller (see Backend).
  Backend backend = Backend::best;
  std::shared_ptr<Clock> clock;  ///< default: MonotonicClock
  /// Serves `corio ps/pstree/stats PID` (inspect.hpp); also on when the
  /// environment has CORIO_INSPECT=1.
  bool inspect = false;
  OnDeadlock on_deadlock = OnDeadlock::report;  ///< see OnDeadlock
  /// The stall detector (stall_detector.hpp): off unless enabled here or by CORIO_STALL_MS.
  StallOptions stall{};  // an initializer, or g++ warns of designated inits that leave it out
};

}  // namespace corio
