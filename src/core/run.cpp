// corio::run() support and the running-loop / current-task queries.
#include <pthread.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include <corio/call_graph.hpp>
#include <corio/run.hpp>

namespace corio {

EventLoop& get_running_loop() {
  if (EventLoop* loop = detail::tls_running_loop) return *loop;
  throw RuntimeError("no running event loop");
}

std::optional<TaskRef> current_task() {
  if (detail::TaskBase* t = detail::tls_current_task) return TaskRef(t);
  return std::nullopt;
}

namespace detail {
namespace {
std::vector<TaskRef> pending_tasks(EventLoop& loop) {
  std::vector<TaskRef> out;
  for (TaskBase* t : loop.io().core().tasks.snapshot()) out.emplace_back(t);
  return out;
}
}  // namespace
}  // namespace detail

std::vector<TaskRef> all_tasks() { return detail::pending_tasks(get_running_loop()); }

namespace detail {

void check_no_running_loop() {
  if (tls_running_loop)
    throw RuntimeError("corio::run() cannot be called from a running event loop");
}

namespace {
// Waits for each task to be done, whatever its outcome.
Coro<void> wait_done(std::vector<TaskRef> tasks) {
  for (TaskRef& t : tasks) {
    try {
      co_await Future<void>(Ref<FutureStateBase>::share(t.task()));
    } catch (...) {
    }
  }
}
}  // namespace

namespace {
// Python checks for its default_int_handler; the C++ equivalent is SIG_DFL.
// Anything else (SIG_IGN under nohup, a program's own handler) is left alone.
bool sigint_has_default_action() {
  struct sigaction sa {};
  if (::sigaction(SIGINT, nullptr, &sa) != 0) return false;
  return (sa.sa_flags & SA_SIGINFO) == 0 && sa.sa_handler == SIG_DFL;
}

[[noreturn]] void die_of_sigint() noexcept {
  ::signal(SIGINT, SIG_DFL);
  const sigset_t one = [] {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    return set;
  }();
  ::pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
  ::raise(SIGINT);
  std::_Exit(128 + SIGINT);  // not reached: SIGINT's default action ends the process
}
}  // namespace

SigintCancelsMain::SigintCancelsMain(EventLoop& loop, TaskRef main)
    : loop_(loop), main_(std::move(main)) {
  // Only the main thread: signals belong to the process, and a run() in a
  // worker thread must not take Ctrl-C from the program.
  if (::gettid() != ::getpid() || !sigint_has_default_action()) return;
  try {
    loop_.add_signal_handler(SIGINT, [this] { on_sigint(); });
    // Ctrl-C can end any program: it does not count as something that can
    // wake a task, or no program run() runs could ever be found deadlocked.
    loop_.io().add_internal_watcher();
    installed_ = true;
  } catch (const std::exception&) {
    // No signalfd (out of descriptors): Ctrl-C keeps its default action,
    // which is no reason to refuse to run main.
  }
}

SigintCancelsMain::~SigintCancelsMain() {
  if (!installed_) return;
  loop_.remove_signal_handler(SIGINT);
  loop_.io().remove_internal_watcher();
}

void SigintCancelsMain::on_sigint() {
  if (++interrupts_ == 1 && !main_.done()) {
    main_.cancel();
    return;
  }
  die_of_sigint();
}

void SigintCancelsMain::throw_if_interrupted() {
  if (interrupts_ > 0 && main_.task()->uncancel() == 0) throw KeyboardInterrupt();
}

namespace {
// The last main task's failure on this thread and the await chain it took.
struct MainTraceback {
  std::exception_ptr exception;
  std::string text;
};
thread_local MainTraceback tls_main_traceback;
}  // namespace

void keep_traceback(const TaskRef& main) noexcept {
  try {
    tls_main_traceback = {main.task()->peek_exception(),
                          format_unwind(main.task()->unwind_trace())};
  } catch (...) {  // out of memory: the exception is printed without it
    tls_main_traceback = {};
  }
}

int exit_status_of(const std::exception_ptr& e) noexcept {
  try {
    std::rethrow_exception(e);
  } catch (const KeyboardInterrupt&) {
    return 128 + SIGINT;  // the status says it: nothing to print (the shell knows 130)
  } catch (...) {
    try {
      MainTraceback tb = std::exchange(tls_main_traceback, {});
      if (tb.exception != e) tb.text.clear();
      std::fprintf(stderr, "uncaught exception: %s%s\n", describe(e).c_str(), tb.text.c_str());
    } catch (...) {  // out of memory for the message
      std::fputs("uncaught exception\n", stderr);
    }
    return 1;
  }
}

void finish_run(EventLoop& loop) noexcept {
  try {
    // Cancel what main left running and let it unwind (destructors are the
    // `finally` blocks), as asyncio.run gathers the cancelled tasks before
    // closing. Unwinding may start new tasks: a few rounds.
    for (int round = 0; round < 8 && !loop.io().core().tasks.empty(); ++round) {
      std::vector<TaskRef> leftovers = pending_tasks(loop);
      for (TaskRef& t : leftovers) t.cancel();
      loop.run_until_complete(wait_done(leftovers));
      for (TaskRef& t : leftovers) {
        if (!t.cancelled() && t.task()->peek_exception()) {
          loop.call_exception_handler(
              {"unhandled exception during corio::run() shutdown", t.task()->peek_exception(), t});
          t.task()->mark_retrieved();
        }
      }
    }
    loop.close();
  } catch (...) {
    EventLoop::report_to_stderr(
        {"error while closing the event loop", std::current_exception(), std::nullopt});
  }
}

}  // namespace detail
}  // namespace corio
