// Unix signal handlers of one loop (loop.add_signal_handler), on a signalfd
// watched with add_reader: a signal becomes an ordinary callback on the loop.
// Internal to the core layer; see signals.cpp.
//
// A signalfd only reads signals that are pending, i.e. blocked: a handled
// signal is blocked in the thread that calls add() (the loop's thread; its
// previous mask bit is restored by remove() and the destructor). The rules
// that follow from it (libuv avoids them with a sigaction handler writing to
// a self-pipe; asyncio with set_wakeup_fd):
//   1. A signal sent to the process goes to any thread that does not block
//      it, where it takes its normal action (for SIGINT and SIGTERM: the
//      process dies, as if no handler were set). So every thread must block
//      the handled signals. Threads created by the loop's thread after add()
//      inherit its mask; ThreadPoolExecutor workers block all asynchronous
//      signals; threads the program starts otherwise must block them too.
//   2. The disposition (sigaction) is left alone. A signal whose disposition
//      is SIG_IGN, or SIG_DFL with "ignore" as default action (SIGCHLD,
//      SIGWINCH), is dropped when sent unless the main thread blocks it:
//      handle those from a loop running on the main thread.
//   3. Signals coalesce as the kernel does: several SIGUSR1 sent before the
//      loop reads them run the handler once (real-time signals queue).
//   4. add() and remove() are loop-affine and must run on the thread that
//      runs the loop (the mask is per thread). Two loops handling the same
//      signal in different threads is not supported: whichever reads first
//      gets a process-directed signal.
#pragma once

#include <functional>
#include <memory>

namespace corio {
class EventLoop;
}

namespace corio::detail {

// Sets SIGPIPE to SIG_IGN, once per process, if its disposition is still
// SIG_DFL (CPython does the same at start-up). Sockets are written with
// MSG_NOSIGNAL, but sendfile(2), splice(2) and write(2) to a pipe have no
// such flag, and a peer that goes away mid-write would kill the process.
// A program that installed its own SIGPIPE handler (or ignores it already)
// keeps it: its handler then runs on such a write, which still fails with
// EPIPE. Called by every EventLoop's constructor; thread-safe.
void ignore_sigpipe_once() noexcept;

class SignalHandlers {
 public:
  // Where signals come from: the OS (a signalfd, the rules above), or a
  // simulation (testing/simulation.hpp), which calls deliver() itself and
  // leaves the thread's mask and every fd alone: the hosts of a simulation
  // share one thread, and a signal sent to one must not reach another.
  enum class Source { os, simulation };
  explicit SignalHandlers(EventLoop& loop, Source source = Source::os);
  SignalHandlers(const SignalHandlers&) = delete;
  SignalHandlers& operator=(const SignalHandlers&) = delete;
  // Removes every handler: restores the signal mask, closes the signalfd.
  ~SignalHandlers();

  // Throws ValueError for an invalid signal or one that cannot be caught
  // (SIGKILL, SIGSTOP, and the two glibc reserves for itself).
  static void check_signal(int signo);

  // Replaces any handler of signo. Throws as check_signal.
  void add(int signo, std::function<void()> fn);
  // False if signo had no handler. Restores signo's bit of the mask; if that
  // unblocks it, instances sent but not yet read are discarded first
  // (unblocked, they would take their default action).
  bool remove(int signo);
  // How many signals have a handler.
  std::size_t handler_count() const noexcept;
  // Whether signo has one.
  bool handles(int signo) const noexcept;
  // Runs signo's handler, as the signalfd's reader does for each signal it
  // reads; false if signo has none. Called on the loop (a simulation queues
  // it there with call_soon).
  bool deliver(int signo) noexcept;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace corio::detail
