// create_subprocess_exec and Process (see subprocess.hpp): the child's exit
// watch and reaping, signals, wait() and communicate().
//
// ProcessState lifetime rules:
//   1. Counted by the Process handles, by the coroutines running wait() and
//      communicate(), and by the exit watch (the pidfd's reader callback,
//      or the polling timer) until it has reaped the child. Plain integer:
//      loop-affine.
//   2. So while the loop runs, the state outlives the child, and the child
//      is reaped when it exits, handles or not.
//   3. The watch's reference also goes when the loop closes (it drops its
//      callbacks and timers). The last reference gone with the child not
//      reaped then kills and reaps it: nobody else would.
//   4. A simulation's child (detail/process_system.hpp) has no pidfd and no
//      zombie: its exit comes as a callback holding the watch's reference,
//      and its signals go to the simulation.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <memory>
#include <system_error>
#include <tuple>
#include <variant>

#include <sys/syscall.h>
#include <sys/wait.h>

#include "net/connection.hpp"
#include "net/pipe_transport.hpp"
#include "net/subprocess_spawn.hpp"
#include <corio/detail/os_error.hpp>
#include <corio/detail/process_system.hpp>
#include <corio/event.hpp>
#include <corio/event_loop.hpp>
#include <corio/gather.hpp>

namespace corio {

namespace detail {

namespace {

// The polling fallback: first check after 1 ms, then twice as long each
// time, at most every 100 ms (a short-lived child is seen quickly, a
// long-lived one costs ten wake-ups a second).
constexpr double kFirstPoll = 0.001;
constexpr double kSlowestPoll = 0.1;

// The returncode of a child reaped by someone else: asyncio's child
// watchers report 255 for an "unknown child process" too.
constexpr int kStatusLost = 255;

// A stream pair over one pipe end (empty handles for no pipe); the caller
// keeps the half that matches the pipe's direction.
std::pair<StreamReader, StreamWriter> pipe_streams(EventLoop& loop, Socket end, std::size_t limit) {
  if (!end) return {};
  return make_streams(std::make_unique<PipeTransport>(loop, std::move(end)), limit);
}

}  // namespace

class ProcessState {
 public:
  ProcessState(EventLoop& loop, pid_t pid, bool simulated = false) noexcept
      : pid(pid), simulated_(simulated), loop_(loop) {}
  ProcessState(const ProcessState&) = delete;
  ProcessState& operator=(const ProcessState&) = delete;
  ~ProcessState();

  void watch_exit(ExitWatch how);
  void send_signal(int signo);
  void exited_with(int code) {
    returncode = code;
    exited.set();
  }

  std::uint32_t refs = 1;
  const pid_t pid;
  std::optional<int> returncode;
  Event exited;

 private:
  bool try_reap() noexcept;
  void on_pidfd_readable();
  void poll_exit();
  int signal_child(int signo) noexcept;

  const bool simulated_;
  EventLoop& loop_;  // used only by the exit watch, which the loop runs
  Socket pidfd_;     // while watching a child through it
  double poll_delay_ = kFirstPoll;
};

void add_ref(ProcessState* s) noexcept { ++s->refs; }

void release(ProcessState* s) noexcept {
  if (--s->refs == 0) delete s;
}

ProcessState::~ProcessState() {
  if (returncode) return;
  if (simulated_) {
    (void)signal_child(SIGKILL);  // the simulation ends it; there is nothing to reap
    return;
  }
  // Rule 3. SIGKILL cannot be caught or ignored, so the wait is short.
  (void)signal_child(SIGKILL);
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED) < 0 && errno == EINTR) {
  }
}

void ProcessState::watch_exit(ExitWatch how) {
  if (how == ExitWatch::best) {
    const long fd = ::syscall(SYS_pidfd_open, pid, 0);
    if (fd >= 0) {
      // A pidfd is readable once the child exited (a zombie counts: the
      // pid cannot be reused before we reap it). Level-triggered reader:
      // the loop calls it until it removes itself.
      pidfd_ = Socket(static_cast<int>(fd));
      loop_.add_reader(pidfd_.fd(),
                       [self = Ref<ProcessState>::share(this)] { self->on_pidfd_readable(); });
      return;
    }
    // ENOSYS (Linux < 5.3), EPERM (a seccomp profile), EMFILE: polling
    // needs no descriptor.
  }
  poll_exit();
}

bool ProcessState::try_reap() noexcept {
  siginfo_t info{};
  int rc;
  do {
    rc = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG);
  } while (rc < 0 && errno == EINTR);
  if (rc == 0 && info.si_pid == 0) return false;  // still running
  if (rc < 0) {
    returncode = kStatusLost;  // ECHILD: reaped behind our back
  } else {
    returncode = info.si_code == CLD_EXITED ? info.si_status : -info.si_status;
  }
  exited.set();
  return true;
}

void ProcessState::on_pidfd_readable() {
  if (!try_reap()) return;
  // The running callback keeps `this` alive until it returns (its capture
  // is released after it ran).
  loop_.remove_reader(pidfd_.fd());
  pidfd_.close();
}

void ProcessState::poll_exit() {
  if (try_reap()) return;
  loop_.call_later(std::chrono::duration<double>(poll_delay_),
                   [self = Ref<ProcessState>::share(this)] { self->poll_exit(); });
  poll_delay_ = std::min(poll_delay_ * 2, kSlowestPoll);
}

// Through the pidfd while there is one: it names this child even if the
// pid were recycled.
int ProcessState::signal_child(int signo) noexcept {
  if (simulated_) {
    ProcessSystem* sys = process_system();
    const int rc = sys != nullptr ? sys->signal(pid, signo) : -ESRCH;  // the simulation is gone
    errno = -rc;
    return rc < 0 ? -1 : 0;
  }
  if (!pidfd_) return ::kill(pid, signo);
  return static_cast<int>(::syscall(SYS_pidfd_send_signal, pidfd_.fd(), signo, nullptr, 0));
}

void ProcessState::send_signal(int signo) {
  if (returncode) throw_errno(ESRCH, "send_signal: the process has exited");
  // ESRCH before the loop reaped it: the child exited a moment ago, which
  // is no error (CPython's bpo-40550).
  if (signal_child(signo) < 0 && errno != ESRCH) throw_errno(errno, "send_signal");
}

namespace {

// A simulation's program as the child (rule 4): Redirect::devnull and
// inherit are the same there (no terminal), and to_stdout is not simulated.
Process simulated_child(ProcessSystem& sys, EventLoop& loop, const std::string& program,
                        const std::vector<std::string>& args, const SubprocessOptions& opts) {
  if (opts.err == Redirect::to_stdout) {
    throw std::system_error(ENOTSUP, std::generic_category(),
                            "Redirect::to_stdout: not simulated");
  }
  const ProcessSystem::Request request{program, args, opts.in == Redirect::pipe,
                                       opts.out == Redirect::pipe, opts.err == Redirect::pipe};
  // The exit callback holds the watch's reference (rule 1) until it runs.
  auto pending = std::make_shared<Ref<ProcessState>>();
  ProcessSystem::Child child = sys.spawn(request, [pending](int code) {
    Ref<ProcessState> state = std::move(*pending);
    if (state) state->exited_with(code);
  });
  Ref<ProcessState> state(new ProcessState(loop, child.pid, true));
  *pending = state;
  StreamWriter in = pipe_streams(loop, std::move(child.in), opts.limit).second;
  StreamReader out = pipe_streams(loop, std::move(child.out), opts.limit).first;
  StreamReader err = pipe_streams(loop, std::move(child.err), opts.limit).first;
  return Process(std::move(state), std::move(in), std::move(out), std::move(err));
}

}  // namespace

Coro<Process> create_subprocess_exec(std::string program, std::vector<std::string> args,
                                     SubprocessOptions opts, ExitWatch watch) {
  if (opts.in == Redirect::to_stdout || opts.out == Redirect::to_stdout) {
    throw ValueError("Redirect::to_stdout is only for stderr");
  }
  if (opts.limit == 0) throw ValueError("stream limit must be positive");
  EventLoop& loop = get_running_loop();
  if (ProcessSystem* sys = process_system()) {
    co_return simulated_child(*sys, loop, program, args, opts);
  }
  SpawnedChild child = spawn_child(program, args, opts);
  // From here on a failure drops the state, which kills and reaps the child.
  Ref<ProcessState> state(new ProcessState(loop, child.pid));
  state->watch_exit(watch);
  StreamWriter in = pipe_streams(loop, std::move(child.in), opts.limit).second;
  StreamReader out = pipe_streams(loop, std::move(child.out), opts.limit).first;
  StreamReader err = pipe_streams(loop, std::move(child.err), opts.limit).first;
  co_return Process(std::move(state), std::move(in), std::move(out), std::move(err));
}

}  // namespace detail

namespace {

using detail::ProcessState;
using detail::Ref;

Coro<int> wait_for_exit(Ref<ProcessState> s) {
  if (!s->returncode) co_await s->exited.wait();
  co_return *s->returncode;
}

Coro<void> feed_stdin(StreamWriter in, std::string input) {
  if (!in.valid()) co_return;
  try {
    if (!input.empty()) {
      in.write(input);
      co_await in.drain();
    }
  } catch (const std::system_error& e) {
    // A child that exited or closed its stdin without reading everything:
    // asyncio's communicate() ignores BrokenPipeError and ConnectionResetError.
    if (e.code() != std::errc::broken_pipe && e.code() != std::errc::connection_reset) throw;
  }
  in.close();  // what drain() left buffered still goes out, then EOF
}

Coro<std::string> read_to_eof(StreamReader r) {
  if (!r.valid()) co_return std::string();
  co_return co_await r.read();
}

// Writing and both reads run at once: a child that floods stdout before it
// reads stdin (or floods stderr while we wait on stdout) cannot block them.
Coro<std::pair<std::string, std::string>> communicate_with(Process proc, std::string input) {
  Coro<std::tuple<std::monostate, std::string, std::string>> all =
      gather(feed_stdin(proc.in, std::move(input)), read_to_eof(proc.out), read_to_eof(proc.err));
  auto [fed, out, err] = co_await std::move(all);
  co_await proc.wait();
  co_return std::pair<std::string, std::string>(std::move(out), std::move(err));
}

}  // namespace

Process::Process(Ref<ProcessState> s, StreamWriter in, StreamReader out, StreamReader err) noexcept
    : in(std::move(in)), out(std::move(out)), err(std::move(err)), s_(std::move(s)) {}

pid_t Process::pid() const noexcept { return s_->pid; }

std::optional<int> Process::returncode() const noexcept { return s_->returncode; }

Coro<int> Process::wait() { return wait_for_exit(s_); }

Coro<std::pair<std::string, std::string>> Process::communicate(std::string input) {
  return communicate_with(*this, std::move(input));
}

void Process::send_signal(int signo) { s_->send_signal(signo); }

void Process::terminate() { send_signal(SIGTERM); }

void Process::kill() { send_signal(SIGKILL); }

Coro<Process> create_subprocess_exec(std::string program, std::vector<std::string> args,
                                     SubprocessOptions opts) {
  return detail::create_subprocess_exec(std::move(program), std::move(args), std::move(opts),
                                        detail::ExitWatch::best);
}

}  // namespace corio
