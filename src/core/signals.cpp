// EventLoop::add_signal_handler on one signalfd per loop (signals.hpp lists
// the rules a signalfd imposes on the program's threads).
//
// The signalfd is created by the first add() and kept, with its reader, until
// the destructor; add() and remove() only change its mask (signalfd(fd, ...)
// updates it in place). So a handler that removes handlers, its own included,
// never removes the reader callback it runs in.
//
// Order of operations, so that a handled signal is never unblocked while
// nothing reads it: add() blocks the signal before the fd watches it;
// remove() unwatches it, discards what is pending, then unblocks it.
//
// A simulation's loop (Source::simulation) keeps the handlers only: no
// mask, no signalfd; the simulation calls deliver() from a callback it
// queues on the loop, the path the signalfd's reader takes.
#include "signals.hpp"

#include <pthread.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <ctime>
#include <string>
#include <system_error>

#include <corio/detail/os_error.hpp>
#include <corio/errors.hpp>
#include <corio/event_loop.hpp>

namespace corio {
namespace detail {

namespace {

sigset_t only(int signo) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, signo);
  return set;
}

// signalfd_siginfo is 128 bytes: 32 of them cover every standard signal
// pending at once. More (queued real-time signals) stay readable and are
// read in the next iteration (the reader is level-triggered), which also
// bounds the work of one pass when a handler sends its own signal again.
constexpr int kReadBatch = 32;

}  // namespace

struct SignalHandlers::State {
  struct Entry {
    std::function<void()> fn;
    bool active = false;
    bool was_blocked = false;  // in the loop thread's mask before add()
  };

  State(EventLoop& l, Source from) : loop(l), source(from) { sigemptyset(&handled); }

  // Points the signalfd (creating it the first time) at `set`.
  void watch(const sigset_t& set) {
    const int r = ::signalfd(fd, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (r < 0) throw_errno(errno, "signalfd");
    if (fd < 0) {
      try {
        loop.add_reader(r, [this] { on_readable(); });
      } catch (...) {
        ::close(r);
        throw;
      }
      // The handlers are what can wake a task (handler_count), not the fd.
      loop.io().add_internal_watcher();
      fd = r;
    }
    handled = set;
  }

  void forget(int signo) noexcept {
    Entry& e = entries[static_cast<std::size_t>(signo)];
    e.active = false;
    std::function<void()> fn = std::move(e.fn);  // its captures die last
    if (source == Source::simulation) return;  // no mask, no signalfd
    sigset_t set = handled;
    sigdelset(&set, signo);
    // Changing the mask of an existing signalfd cannot fail (it allocates
    // nothing); a reader left watching one signal too many would be harmless.
    (void)::signalfd(fd, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    handled = set;
    if (e.was_blocked) return;  // the program blocks it: leave what is pending
    // Unblocked, a pending instance would take its default action (often:
    // end the process), yet it was sent while a handler was set. Drop it.
    const sigset_t one = only(signo);
    const timespec zero{};
    while (::sigtimedwait(&one, nullptr, &zero) == signo) {
    }
    ::pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
  }

  void on_readable() noexcept {
    std::array<signalfd_siginfo, kReadBatch> infos;
    const ssize_t n = ::read(fd, infos.data(), sizeof infos);
    if (n <= 0) return;  // EAGAIN: another reader of the signal was first
    const auto count = static_cast<std::size_t>(n) / sizeof(signalfd_siginfo);
    for (std::size_t i = 0; i < count; ++i) (void)dispatch(static_cast<int>(infos[i].ssi_signo));
  }

  bool dispatch(int signo) noexcept {
    const auto index = static_cast<std::size_t>(signo);
    if (index >= entries.size() || !entries[index].active) return false;  // removed meanwhile
    try {
      // A copy: the handler may replace or remove itself.
      std::function<void()> fn = entries[index].fn;
      fn();
    } catch (...) {
      loop.call_exception_handler(
          {"Exception in signal handler", std::current_exception(), std::nullopt});
    }
    return true;
  }

  EventLoop& loop;
  const Source source;
  int fd = -1;
  sigset_t handled;  // what the signalfd watches
  std::array<Entry, NSIG> entries;
};

SignalHandlers::SignalHandlers(EventLoop& loop, Source source)
    : state_(std::make_unique<State>(loop, source)) {}

SignalHandlers::~SignalHandlers() {
  State& s = *state_;
  for (int signo = 1; signo < NSIG; ++signo) {
    if (s.entries[static_cast<std::size_t>(signo)].active) s.forget(signo);
  }
  if (s.fd < 0) return;
  try {
    s.loop.remove_reader(s.fd);
  } catch (...) {  // the loop is being closed: its watches go anyway
  }
  s.loop.io().remove_internal_watcher();
  ::close(s.fd);
}

void SignalHandlers::check_signal(int signo) {
  if (signo < 1 || signo >= NSIG)
    throw ValueError("signal number " + std::to_string(signo) + " out of range");
  if (signo == SIGKILL || signo == SIGSTOP)
    throw ValueError("signal " + std::to_string(signo) + " cannot be caught");
  sigset_t set;
  sigemptyset(&set);
  if (sigaddset(&set, signo) != 0)  // glibc's own (SIGCANCEL, SIGSETXID)
    throw ValueError("signal " + std::to_string(signo) + " is reserved by the C library");
}

void SignalHandlers::add(int signo, std::function<void()> fn) {
  check_signal(signo);
  State& s = *state_;
  State::Entry& e = s.entries[static_cast<std::size_t>(signo)];
  if (e.active) {
    e.fn = std::move(fn);
    return;
  }
  if (s.source == Source::simulation) {
    e.fn = std::move(fn);
    e.active = true;
    return;
  }
  const sigset_t one = only(signo);
  sigset_t old;
  ::pthread_sigmask(SIG_BLOCK, &one, &old);
  const bool was_blocked = sigismember(&old, signo) == 1;
  sigset_t set = s.handled;
  sigaddset(&set, signo);
  try {
    s.watch(set);
  } catch (...) {
    if (!was_blocked) ::pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
    throw;
  }
  e.fn = std::move(fn);
  e.was_blocked = was_blocked;
  e.active = true;
}

std::size_t SignalHandlers::handler_count() const noexcept {
  std::size_t n = 0;
  for (const State::Entry& e : state_->entries) n += e.active ? 1 : 0;
  return n;
}

bool SignalHandlers::handles(int signo) const noexcept {
  const auto index = static_cast<std::size_t>(signo);
  return index < state_->entries.size() && state_->entries[index].active;
}

bool SignalHandlers::deliver(int signo) noexcept { return state_->dispatch(signo); }

bool SignalHandlers::remove(int signo) {
  check_signal(signo);
  State& s = *state_;
  if (!s.entries[static_cast<std::size_t>(signo)].active) return false;
  s.forget(signo);
  return true;
}

void ignore_sigpipe_once() noexcept {
  // A function-local static: initialised once even when loops start in
  // several threads at the same time.
  static const bool ignored = [] {
    struct sigaction current {};
    if (sigaction(SIGPIPE, nullptr, &current) != 0) return false;
    const bool is_default = (current.sa_flags & SA_SIGINFO) == 0 && current.sa_handler == SIG_DFL;
    if (!is_default) return false;
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    return sigaction(SIGPIPE, &ignore, nullptr) == 0;
  }();
  (void)ignored;
}

}  // namespace detail

void EventLoop::add_signal_handler(int signo, std::function<void()> fn) {
  check_open();
  if (debug_) [[unlikely]]
    check_thread();
  detail::SignalHandlers::check_signal(signo);
  if (!signals_) signals_ = std::make_unique<detail::SignalHandlers>(*this);
  signals_->add(signo, std::move(fn));
}

bool EventLoop::remove_signal_handler(int signo) {
  detail::SignalHandlers::check_signal(signo);
  return signals_ && signals_->remove(signo);
}

}  // namespace corio
