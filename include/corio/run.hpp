/// \file
/// corio::run(main): asyncio.run.
///
/// Creates a new loop, runs main as a task until it completes, then cancels
/// every task still pending, runs the loop until they have unwound, and closes
/// the loop. Returns main's result or rethrows its exception. Calling it from a
/// running loop throws RuntimeError (nested loops would starve the outer one).
///
/// Ctrl-C, as asyncio.Runner since Python 3.11: when run() is called on the
/// main thread and SIGINT has its default action, a SIGINT cancels main (the
/// loop handles SIGINT meanwhile; see EventLoop::add_signal_handler). If main
/// then ends in CancelledError and no other cancellation of it is pending
/// (uncancel() reaches 0), run() throws KeyboardInterrupt once the loop is
/// closed; if main swallows the CancelledError, run() returns or throws what
/// main does. A second SIGINT before main is done ends the process as Ctrl-C
/// always does: SIGINT's default action, no unwinding (asyncio raises
/// KeyboardInterrupt out of the loop there, which C++ callbacks cannot do).
/// SIGINT has its default action again while run() cancels the leftovers.
#pragma once

#include <corio/event_loop.hpp>

namespace corio {

namespace detail {
void check_no_running_loop();
// run_main's exit status for what escaped main: 130 for KeyboardInterrupt,
// else 1 after printing the exception's type and message to stderr.
int exit_status_of(const std::exception_ptr& e) noexcept;
// main failed: keeps its async traceback (the task goes with run()) for
// exit_status_of to print with the exception.
void keep_traceback(const TaskRef& main) noexcept;
// Cancels what main left running, lets it unwind, closes the loop.
void finish_run(EventLoop& loop) noexcept;

// run()'s SIGINT handler for the lifetime of one run() (see above).
class SigintCancelsMain {
 public:
  SigintCancelsMain(EventLoop& loop, TaskRef main);
  SigintCancelsMain(const SigintCancelsMain&) = delete;
  SigintCancelsMain& operator=(const SigintCancelsMain&) = delete;
  ~SigintCancelsMain();
  // Called when main ended in CancelledError: throws KeyboardInterrupt if a
  // SIGINT cancelled it and nothing else did.
  void throw_if_interrupted();

 private:
  void on_sigint();

  EventLoop& loop_;
  TaskRef main_;
  int interrupts_ = 0;
  bool installed_ = false;
};
}  // namespace detail

/// asyncio.run: runs main on a new loop, then cancels what is left and closes the loop (see the top
/// of this file).
template <class T>
T run(Coro<T> main, RunOptions opts = {}, SourceLocation where = SourceLocation::current()) {
  detail::check_no_running_loop();
  EventLoop loop(std::move(opts));
  struct Finish {
    EventLoop& loop;
    ~Finish() { detail::finish_run(loop); }
  } finish{loop};
  Task<T> task = loop.create_task(std::move(main), {}, where);
  // Destroyed before `finish`: asyncio, too, restores SIGINT before closing.
  detail::SigintCancelsMain sigint(loop, task);
  try {
    return loop.run_until_complete(task);
  } catch (const CancelledError&) {
    sigint.throw_if_interrupted();
    throw;
  } catch (...) {
    detail::keep_traceback(task);
    throw;
  }
}

/// What Python's interpreter does around asyncio.run(), for main():
///
///   int main() { return corio::run_main(main_coro()); }
///
/// runs main with corio::run(); an int result is the exit status (any other
/// result, bool included, gives 0); Ctrl-C (KeyboardInterrupt) gives 130, the
/// shell's code for a SIGINT death, quietly; any other exception that escapes
/// main is printed to stderr with its type and message and gives 1.
template <class T>
int run_main(Coro<T> main, RunOptions opts = {}, SourceLocation where = SourceLocation::current()) {
  try {
    if constexpr (std::is_same_v<T, int>) {
      return run(std::move(main), std::move(opts), where);
    } else {
      run(std::move(main), std::move(opts), where);
      return 0;
    }
  } catch (...) {
    return detail::exit_status_of(std::current_exception());
  }
}

}  // namespace corio
