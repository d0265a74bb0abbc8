/// \file
/// asyncio's subprocesses: create_subprocess_exec() and Process.
///
/// <!-- doc: body -->
///     corio::SubprocessOptions opts;
///     opts.out = corio::Redirect::pipe;
///     std::vector<std::string> args{"-l", "/"};  // named: g++ 12 rejects {...} in co_await
///     corio::Process proc = co_await corio::create_subprocess_exec("ls", args, opts);
///     std::string listing = co_await proc.out.read();
///     if (co_await proc.wait() != 0) throw std::runtime_error("ls failed");
///
/// The child's piped stdin, stdout and stderr are the StreamWriter and
/// StreamReaders of streams.hpp, over pipes instead of sockets: the same
/// reads, writes, drain() and limits. As in asyncio, wait() does not read
/// them: a child that fills a pipe nobody reads blocks, so a Process whose
/// output is piped is read to EOF (or run with communicate()) before wait().
///
/// The loop learns that a child exited from a pidfd (Linux >= 5.3), watched
/// like any fd: no SIGCHLD handler, no thread per child, and no process-wide
/// state, so loops in several threads may each run subprocesses. Where
/// pidfd_open is refused (an older kernel, a seccomp profile), the loop
/// polls waitid(WNOHANG) instead, from 1 ms up to every 100 ms.
///
/// Reaping (no zombies): the loop reaps the child as soon as it exits,
/// whether or not anyone awaits wait() and even after every Process handle
/// is gone (the child goes on running; asyncio kills it when its transport
/// is garbage collected). A child still running when the loop closes and
/// the last handle is gone is killed (SIGKILL) and reaped then, as
/// asyncio's transport does on close(). A program that reaps children
/// itself (waitpid(-1), SIGCHLD set to SIG_IGN) takes the status away:
/// returncode is then 255, as asyncio's child watchers report it.
///
/// Suspends: wait() until the child exited; communicate() until its output
/// is read to EOF and it exited; the streams as in streams.hpp.
/// Resumed by: the loop (the pidfd, the pipes), or the polling timer.
/// Cancelling wait() or communicate() leaves the Process usable (the child
/// is not signalled; kill() it if that is what the timeout means).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <sys/types.h>

#include <corio/coro.hpp>
#include <corio/stream_reader.hpp>
#include <corio/stream_writer.hpp>

namespace corio {

/// What one of the child's standard streams is connected to.
enum class Redirect {
  inherit,    ///< the parent's (asyncio's None)
  pipe,       ///< a pipe to the parent: Process::in, out or err
  devnull,    ///< /dev/null
  to_stdout,  ///< stderr only: wherever stdout goes (asyncio's subprocess.STDOUT;
              ///< `stdout` itself is a `<cstdio>` macro)
};

/// How create_subprocess_exec() starts the child.
struct SubprocessOptions {
  /// The child's stdin.
  Redirect in = Redirect::inherit;
  /// The child's stdout.
  Redirect out = Redirect::inherit;
  /// The child's stderr (Redirect::to_stdout: with its stdout).
  Redirect err = Redirect::inherit;
  std::optional<std::string> cwd;  ///< the child's working directory
  /// The child's whole environment; without it, the parent's.
  std::optional<std::map<std::string, std::string>> env;
  std::size_t limit = kDefaultStreamLimit;  ///< the StreamReaders' limit
};

namespace detail {
class ProcessState;
void add_ref(ProcessState* s) noexcept;
void release(ProcessState* s) noexcept;
}  // namespace detail

/// A copyable handle to one child process.
class Process {
 public:
  /// A handle to a started child (create_subprocess_exec makes one).
  Process(detail::Ref<detail::ProcessState> s, StreamWriter in, StreamReader out,
          StreamReader err) noexcept;

  /// The pipes (asyncio's proc.stdin, proc.stdout, proc.stderr): valid() only
  /// for the streams created with Redirect::pipe.
  StreamWriter in;
  /// The child's stdout, when piped.
  StreamReader out;
  /// The child's stderr, when piped.
  StreamReader err;

  /// The child's process id.
  pid_t pid() const noexcept;
  /// None while the child runs; its exit status once the loop reaped it; the
  /// negated signal number if a signal killed it (asyncio's convention).
  std::optional<int> returncode() const noexcept;
  /// Until the child exits; its returncode. Any number of tasks may wait.
  Coro<int> wait();
  /// Writes input to stdin (if piped) and closes it, reads stdout and stderr
  /// (those piped; "" for the others) to EOF concurrently, then waits for the
  /// child: {stdout, stderr}. A child that stops reading its stdin (EPIPE)
  /// does not fail it, as in asyncio.
  Coro<std::pair<std::string, std::string>> communicate(std::string input = {});

  /// Signals a child that has not been reaped yet; once it has, throws
  /// std::system_error(ESRCH), asyncio's ProcessLookupError. The pidfd
  /// names the child, so a recycled pid is never signalled.
  void send_signal(int signo);
  void terminate();  ///< SIGTERM
  void kill();       ///< SIGKILL

 private:
  detail::Ref<detail::ProcessState> s_;
};

/// Starts program with args (argv = program, args...), searching PATH for a
/// program name without '/' (posix_spawnp: this process's PATH, not env's).
/// The child gets the default signal mask and SIGPIPE's default action (as
/// Python's restore_signals), and only its standard streams as descriptors
/// (close_fds). Throws std::system_error with the errno when the child cannot
/// start (ENOENT: no such program or cwd; EACCES, ...), ValueError for
/// Redirect::to_stdout anywhere but err.
Coro<Process> create_subprocess_exec(std::string program, std::vector<std::string> args,
                                     SubprocessOptions opts = {});

namespace detail {
// How the loop learns that a child exited. `best` is what
// create_subprocess_exec uses: a pidfd where the kernel allows, else
// polling; `polling` forces the fallback, for its tests.
enum class ExitWatch { best, polling };
Coro<Process> create_subprocess_exec(std::string program, std::vector<std::string> args,
                                     SubprocessOptions opts, ExitWatch watch);
}  // namespace detail

}  // namespace corio
