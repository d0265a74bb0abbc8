// create_subprocess_exec and Process against real programs (/bin/sh, echo,
// cat, sleep, python3): pipes as streams, communicate() without deadlock,
// redirections, exit codes and signals, reaping, concurrency, cancellation,
// the polling fallback, and what the child inherits.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <iterator>

#include "net/net_support.hpp"
#include <corio/subprocess.hpp>

namespace corio_net_test {
namespace {

using corio::Process;
using corio::Redirect;
using corio::SubprocessOptions;

SubprocessOptions redirect(Redirect in, Redirect out, Redirect err = Redirect::inherit) {
  SubprocessOptions opts;
  opts.in = in;
  opts.out = out;
  opts.err = err;
  return opts;
}

Coro<Process> sh(std::string script, SubprocessOptions opts = {}) {
  std::vector<std::string> args{"-c", std::move(script)};
  co_return co_await corio::create_subprocess_exec("/bin/sh", std::move(args), std::move(opts));
}

Coro<int> wait_on(Process p) { co_return co_await p.wait(); }

std::ptrdiff_t open_fds() {
  const std::filesystem::directory_iterator fds("/proc/self/fd");
  return std::distance(begin(fds), end(fds));
}

// True once pid is reaped (a zombie still takes signals).
bool reaped(pid_t pid) { return ::kill(pid, 0) < 0 && errno == ESRCH; }

Coro<void> echo_through_stdout() {
  std::vector<std::string> args{"hello", "world"};
  SubprocessOptions opts = redirect(Redirect::inherit, Redirect::pipe);
  opts.limit = 1000;
  Process p = co_await corio::create_subprocess_exec("echo", std::move(args), opts);
  EXPECT_GT(p.pid(), 0);
  EXPECT_FALSE(p.in.valid());
  CO_ASSERT(p.out.valid());
  EXPECT_FALSE(p.err.valid());
  EXPECT_EQ(p.out.limit(), 1000u);
  EXPECT_EQ(co_await p.out.readline(), "hello world\n");
  EXPECT_EQ(co_await p.out.read(), "");
  EXPECT_TRUE(p.out.at_eof());
  EXPECT_EQ(co_await p.wait(), 0);
  EXPECT_EQ(p.returncode(), 0);
}

TEST(Subprocess, EchoThroughStdoutPipe) { run_bounded(echo_through_stdout(), 30s); }

// The pipes are ordinary streams: a conversation with cat, line by line.
Coro<void> cat_line_by_line() {
  std::vector<std::string> args;
  Process p = co_await corio::create_subprocess_exec("cat", std::move(args),
                                                     redirect(Redirect::pipe, Redirect::pipe));
  for (const char* line : {"one\n", "two\n"}) {
    p.in.write(line);
    co_await p.in.drain();
    EXPECT_EQ(co_await p.out.readline(), line);
  }
  p.in.close();
  EXPECT_EQ(co_await p.out.read(), "");
  EXPECT_EQ(co_await p.wait(), 0);
}

TEST(Subprocess, StreamsTalkToCat) { run_bounded(cat_line_by_line(), 30s); }

Coro<void> cat_communicate() {
  std::vector<std::string> args;
  Process p = co_await corio::create_subprocess_exec("/bin/cat", std::move(args),
                                                     redirect(Redirect::pipe, Redirect::pipe));
  auto [out, err] = co_await p.communicate("line one\nline two\n");
  EXPECT_EQ(out, "line one\nline two\n");
  EXPECT_EQ(err, "");  // not piped
  EXPECT_EQ(p.returncode(), 0);
}

TEST(Subprocess, CatRoundTripThroughCommunicate) { run_bounded(cat_communicate(), 30s); }

// The child writes 8 MiB (far past the pipe's 64 KiB) before it reads a
// byte of stdin, while communicate() has 1 MiB to write: feeding and
// reading must run at once.
Coro<void> flood_before_reading_stdin() {
  constexpr std::size_t kFlood = 8 << 20;
  std::string input(1 << 20, '\0');
  for (std::size_t i = 0; i < input.size(); ++i) input[i] = static_cast<char>('a' + i % 26);
  Process p = co_await sh("head -c " + std::to_string(kFlood) + " /dev/zero; cat",
                          redirect(Redirect::pipe, Redirect::pipe));
  auto [out, err] = co_await p.communicate(input);
  CO_ASSERT(out.size() == kFlood + input.size());
  EXPECT_TRUE(std::all_of(out.begin(), out.begin() + kFlood, [](char c) { return c == '\0'; }));
  EXPECT_TRUE(out.compare(kFlood, std::string::npos, input) == 0);
  EXPECT_EQ(p.returncode(), 0);
}

TEST(Subprocess, CommunicateWithChildFloodingStdoutDoesNotDeadlock) {
  run_bounded(flood_before_reading_stdin(), 60s);
}

// Both output pipes flooded at once, stderr first: neither read may wait
// for the other.
Coro<void> python_floods_stderr_then_echoes() {
  std::vector<std::string> args{"-c",
                                "import sys\n"
                                "sys.stderr.write('e' * (4 << 20)); sys.stderr.flush()\n"
                                "sys.stdout.write(sys.stdin.read())\n"};
  Process p = co_await corio::create_subprocess_exec(
      "/usr/bin/python3", std::move(args),
      redirect(Redirect::pipe, Redirect::pipe, Redirect::pipe));
  auto [out, err] = co_await p.communicate("from stdin\n");
  EXPECT_EQ(out, "from stdin\n");
  EXPECT_EQ(err.size(), std::size_t{4} << 20);
  EXPECT_EQ(p.returncode(), 0);
}

TEST(Subprocess, StdoutAndStderrReadConcurrently) {
  if (::access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/python3";
  run_bounded(python_floods_stderr_then_echoes(), 60s);
}

Coro<void> stderr_separate_and_merged() {
  const std::string script = "echo out; echo err >&2";
  Process separate =
      co_await sh(script, redirect(Redirect::inherit, Redirect::pipe, Redirect::pipe));
  auto [out, err] = co_await separate.communicate();
  EXPECT_EQ(out, "out\n");
  EXPECT_EQ(err, "err\n");

  Process merged =
      co_await sh(script, redirect(Redirect::inherit, Redirect::pipe, Redirect::to_stdout));
  EXPECT_FALSE(merged.err.valid());
  auto [both, none] = co_await merged.communicate();
  EXPECT_EQ(both, "out\nerr\n");
  EXPECT_EQ(none, "");
}

TEST(Subprocess, StderrCapturedSeparatelyOrMergedIntoStdout) {
  run_bounded(stderr_separate_and_merged(), 30s);
}

Coro<void> devnull() {
  Process quiet = co_await sh("cat; echo gone; echo gone >&2",
                              redirect(Redirect::devnull, Redirect::devnull, Redirect::devnull));
  EXPECT_FALSE(quiet.in.valid());
  EXPECT_FALSE(quiet.out.valid());
  auto [out, err] = co_await quiet.communicate("ignored: stdin is not piped");
  EXPECT_EQ(out, "");
  EXPECT_EQ(err, "");
  EXPECT_EQ(quiet.returncode(), 0);

  // cat sees EOF at once on /dev/null.
  std::vector<std::string> args;
  Process cat = co_await corio::create_subprocess_exec("cat", std::move(args),
                                                       redirect(Redirect::devnull, Redirect::pipe));
  EXPECT_EQ(co_await cat.out.read(), "");
  EXPECT_EQ(co_await cat.wait(), 0);
}

TEST(Subprocess, DevNull) { run_bounded(devnull(), 30s); }

Coro<void> exit_codes() {
  Process three = co_await sh("exit 3");
  EXPECT_EQ(three.returncode(), std::nullopt);
  EXPECT_EQ(co_await three.wait(), 3);
  EXPECT_EQ(three.returncode(), 3);
  EXPECT_EQ(co_await three.wait(), 3);  // again: at once
}

TEST(Subprocess, ExitCode) { run_bounded(exit_codes(), 30s); }

Coro<void> killed_by_signals() {
  Process suicide = co_await sh("kill -9 $$");
  EXPECT_EQ(co_await suicide.wait(), -SIGKILL);

  Process killed = co_await sh("exec sleep 30");
  killed.kill();
  EXPECT_EQ(co_await killed.wait(), -SIGKILL);
  EXPECT_EQ(killed.returncode(), -SIGKILL);
  // Reaped: asyncio's ProcessLookupError.
  int err = 0;
  try {
    killed.terminate();
  } catch (const std::system_error& e) {
    err = e.code().value();
  }
  EXPECT_EQ(err, ESRCH);

  Process terminated = co_await sh("exec sleep 30");
  terminated.terminate();
  EXPECT_EQ(co_await terminated.wait(), -SIGTERM);
}

TEST(Subprocess, ChildKilledBySignal) { run_bounded(killed_by_signals(), 30s); }

// A loop thread that handles SIGTERM blocks it (signalfd); the child must
// not inherit that mask, or terminate() would not end it.
Coro<void> terminate_despite_handled_sigterm() {
  corio::EventLoop& loop = corio::get_running_loop();
  loop.add_signal_handler(SIGTERM, [] {});
  Process p = co_await sh("exec sleep 30");
  p.terminate();
  std::optional<int> rc;
  try {
    rc = co_await corio::wait_for(p.wait(), 5s);
  } catch (const corio::TimeoutError&) {
    p.kill();  // reaped by the loop
  }
  loop.remove_signal_handler(SIGTERM);
  EXPECT_EQ(rc, -SIGTERM) << "the child inherited the loop thread's signal mask";
}

TEST(Subprocess, ChildDoesNotInheritBlockedSignals) {
  run_bounded(terminate_despite_handled_sigterm(), 30s);
}

Coro<void> wait_from_two_tasks() {
  Process p = co_await sh("read line; exit 5", redirect(Redirect::pipe, Redirect::inherit));
  Task<int> first = corio::create_task(wait_on(p));
  Task<int> second = corio::create_task(wait_on(p));
  co_await corio::sleep(20ms);
  EXPECT_FALSE(first.done());
  EXPECT_FALSE(second.done());
  p.in.write("go\n");
  EXPECT_EQ(co_await first, 5);
  EXPECT_EQ(co_await second, 5);
}

TEST(Subprocess, WaitFromTwoTasks) { run_bounded(wait_from_two_tasks(), 30s); }

Coro<void> cannot_start() {
  std::vector<std::string> none;
  EXPECT_EQ(co_await errno_of(corio::create_subprocess_exec("corio-no-such-program", none)),
            ENOENT);
  EXPECT_EQ(co_await errno_of(corio::create_subprocess_exec("/nonexistent/program", none)), ENOENT);
  SubprocessOptions in_missing_dir;
  in_missing_dir.cwd = "/nonexistent-directory";
  EXPECT_EQ(co_await errno_of(corio::create_subprocess_exec("/bin/true", none, in_missing_dir)),
            ENOENT);
  bool invalid = false;
  try {
    co_await corio::create_subprocess_exec("/bin/true", none,
                                           redirect(Redirect::inherit, Redirect::to_stdout));
  } catch (const corio::ValueError&) {
    invalid = true;
  }
  EXPECT_TRUE(invalid) << "Redirect::to_stdout for stdout";
}

TEST(Subprocess, ProgramNotFoundIsEnoent) { run_bounded(cannot_start(), 30s); }

Coro<void> cwd_and_env() {
  SubprocessOptions opts = redirect(Redirect::inherit, Redirect::pipe);
  opts.cwd = "/tmp";
  opts.env.emplace();
  (*opts.env)["GREETING"] = "hi there";
  Process p = co_await sh("pwd; echo \"$GREETING\"; echo \"${HOME:-no home}\"", opts);
  auto [out, err] = co_await p.communicate();
  EXPECT_EQ(out, "/tmp\nhi there\nno home\n");
}

TEST(Subprocess, CwdAndEnvironment) { run_bounded(cwd_and_env(), 30s); }

// Only the standard streams reach the child, even from a descriptor
// opened without O_CLOEXEC.
Coro<void> no_descriptor_leaks(int fd) {
  const std::string path = "/proc/$$/fd/" + std::to_string(fd);
  Process p = co_await sh("if [ -e " + path + " ]; then echo leaked; else echo closed; fi",
                          redirect(Redirect::inherit, Redirect::pipe));
  auto [out, err] = co_await p.communicate();
  EXPECT_EQ(out, "closed\n");
}

TEST(Subprocess, ChildGetsOnlyItsStandardStreams) {
  const int devnull = ::open("/dev/null", O_RDONLY);  // no O_CLOEXEC
  ASSERT_GE(devnull, 0);
  const int high = ::fcntl(devnull, F_DUPFD, 300);  // above what sh opens itself
  ::close(devnull);
  ASSERT_GE(high, 0);
  run_bounded(no_descriptor_leaks(high), 30s);
  ::close(high);
}

// A child that exits without reading: communicate() ignores EPIPE, the
// writer reports it, and no SIGPIPE kills the test.
Coro<void> child_ignores_stdin() {
  const std::string big(4 << 20, 'x');
  Process p = co_await sh("exit 0", redirect(Redirect::pipe, Redirect::inherit));
  auto [out, err] = co_await p.communicate(big);
  EXPECT_EQ(p.returncode(), 0);

  Process q = co_await sh("exec 0<&-; sleep 0.05", redirect(Redirect::pipe, Redirect::inherit));
  co_await q.wait();
  q.in.write(big);
  EXPECT_EQ(co_await errno_of(q.in.drain()), EPIPE);
}

TEST(Subprocess, ChildNotReadingStdinIsNoError) { run_bounded(child_ignores_stdin(), 30s); }

Coro<std::string> echo_after_a_while(int i) {
  Process p = co_await sh("sleep 0.5; echo " + std::to_string(i),
                          redirect(Redirect::inherit, Redirect::pipe));
  auto [out, err] = co_await p.communicate();
  co_return out;
}

Coro<void> fifty_at_once() {
  corio::EventLoop& loop = corio::get_running_loop();
  const double start = loop.time();
  const std::ptrdiff_t fds_before = open_fds();
  std::vector<Coro<std::string>> children;
  for (int i = 0; i < 50; ++i) children.push_back(echo_after_a_while(i));
  std::vector<std::string> outs = co_await corio::gather(std::move(children));
  for (int i = 0; i < 50; ++i)
    EXPECT_EQ(outs[static_cast<std::size_t>(i)], std::to_string(i) + "\n");
  EXPECT_LT(loop.time() - start, 20.0) << "50 x 0.5 s one after another would take 25 s";
  EXPECT_EQ(open_fds(), fds_before) << "pipes or pidfds left open";
}

TEST(Subprocess, FiftyConcurrentSubprocesses) { run_bounded(fifty_at_once(), 60s); }

Coro<void> cancelled_wait() {
  Process p = co_await sh("exec sleep 30");
  bool timed_out = false;
  try {
    co_await corio::wait_for(p.wait(), 50ms);
  } catch (const corio::TimeoutError&) {
    timed_out = true;
  }
  EXPECT_TRUE(timed_out);
  Task<int> waiter = corio::create_task(wait_on(p));
  co_await corio::sleep(10ms);
  waiter.cancel();
  EXPECT_THROW(co_await waiter, corio::CancelledError);
  EXPECT_EQ(p.returncode(), std::nullopt);
  p.kill();
  EXPECT_EQ(co_await p.wait(), -SIGKILL);
}

TEST(Subprocess, CancellingWaitLeavesProcessUsable) { run_bounded(cancelled_wait(), 30s); }

Coro<void> tick(int* ticks) {
  for (;;) {
    co_await corio::sleep(10ms);
    ++*ticks;
  }
}

Coro<void> loop_runs_while_child_runs() {
  int ticks = 0;
  Task<void> ticker = corio::create_task(tick(&ticks));
  Process p = co_await sh("sleep 0.3");
  EXPECT_EQ(co_await p.wait(), 0);
  ticker.cancel();
  EXPECT_GE(ticks, 5);
}

TEST(Subprocess, LoopIsNotBlockedWhileChildRuns) { run_bounded(loop_runs_while_child_runs(), 30s); }

// The fallback for kernels without pidfd_open: polling waitid.
Coro<void> polling_fallback() {
  constexpr auto polling = corio::detail::ExitWatch::polling;
  const SubprocessOptions defaults;
  std::vector<std::string> args{"-c", "sleep 0.05; exit 7"};
  Process p = co_await corio::detail::create_subprocess_exec("/bin/sh", args, defaults, polling);
  EXPECT_EQ(co_await p.wait(), 7);
  args = {"-c", "exec sleep 30"};
  Process q = co_await corio::detail::create_subprocess_exec("/bin/sh", args, defaults, polling);
  q.kill();
  EXPECT_EQ(co_await q.wait(), -SIGKILL);
}

TEST(Subprocess, PollingFallbackWhenPidfdIsUnavailable) { run_bounded(polling_fallback(), 30s); }

// Dropping every handle leaves the child running; the loop still reaps it.
Coro<void> dropped_process_is_reaped() {
  pid_t pid = 0;
  {
    Process p = co_await sh("sleep 0.1");
    pid = p.pid();
  }
  EXPECT_FALSE(reaped(pid));
  for (int i = 0; i < 500 && !reaped(pid); ++i) co_await corio::sleep(10ms);
  EXPECT_TRUE(reaped(pid)) << "zombie " << pid;
}

TEST(Subprocess, DroppedProcessIsReapedWhenItExits) {
  run_bounded(dropped_process_is_reaped(), 30s);
}

Coro<void> leave_child_running(pid_t* pid) {
  Process p = co_await sh("exec sleep 30");
  *pid = p.pid();
}

// A child still running when the loop closes is killed and reaped.
TEST(Subprocess, LoopCloseKillsAndReapsRunningChild) {
  pid_t pid = 0;
  run_bounded(leave_child_running(&pid), 30s);
  ASSERT_GT(pid, 0);
  EXPECT_TRUE(reaped(pid));
}

}  // namespace
}  // namespace corio_net_test
