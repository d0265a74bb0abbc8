// loop.add_signal_handler / remove_signal_handler (signalfd) and run()'s
// Ctrl-C: SIGINT cancels main, run() throws KeyboardInterrupt.
//
// Signals are sent to the loop's own thread (raise) where possible: a signal
// sent to the process could go to another thread of the test binary that does
// not block it. The fixture restores the mask and SIGINT's disposition and
// consumes anything left pending, so that no test can leave a signal whose
// default action would end the binary.
#include <pthread.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <ctime>
#include <initializer_list>
#include <stdexcept>
#include <thread>
#include <utility>

#include <gtest/gtest.h>

#include "core/test_support.hpp"

using namespace std::chrono_literals;
using corio::Coro;
using corio::EventLoop;
using corio_test::Reports;

namespace {

bool blocked(int signo) {
  sigset_t set;
  ::pthread_sigmask(SIG_BLOCK, nullptr, &set);
  return sigismember(&set, signo) == 1;
}

sigset_t set_of(std::initializer_list<int> signos) {
  sigset_t set;
  sigemptyset(&set);
  for (int s : signos) sigaddset(&set, s);
  return set;
}

bool sigint_has_default_action() {
  struct sigaction sa {};
  ::sigaction(SIGINT, nullptr, &sa);
  return (sa.sa_flags & SA_SIGINFO) == 0 && sa.sa_handler == SIG_DFL;
}

class Signal : public ::testing::Test {
 protected:
  void SetUp() override { ::pthread_sigmask(SIG_SETMASK, nullptr, &mask_); }
  void TearDown() override {
    const sigset_t ours = set_of({SIGUSR1, SIGUSR2, SIGINT});
    ::pthread_sigmask(SIG_BLOCK, &ours, nullptr);
    const timespec zero{};
    while (::sigtimedwait(&ours, nullptr, &zero) > 0) {
    }
    ::signal(SIGINT, SIG_DFL);
    ::pthread_sigmask(SIG_SETMASK, &mask_, nullptr);
  }

  // Runs the loop until stop(), giving up after 5 s.
  static void run_with_deadline(EventLoop& loop) {
    corio::TimerHandle deadline = loop.call_later(5s, [&loop] { loop.stop(); });
    loop.run_forever();
    deadline.cancel();
  }

  sigset_t mask_;
};

// ---- add_signal_handler ---------------------------------------------------------

TEST_F(Signal, HandlerRunsOnTheLoopWhenTheLoopThreadRaisesTheSignal) {
  EventLoop loop;
  int calls = 0;
  std::thread::id ran_on;
  loop.add_signal_handler(SIGUSR1, [&] {
    ++calls;
    ran_on = std::this_thread::get_id();
    loop.stop();
  });
  EXPECT_TRUE(blocked(SIGUSR1));
  loop.call_soon([] { ::raise(SIGUSR1); });
  run_with_deadline(loop);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(ran_on, std::this_thread::get_id());
}

TEST_F(Signal, ASignalSentToTheProcessReachesTheHandler) {
  EventLoop loop;
  int calls = 0;
  loop.add_signal_handler(SIGUSR2, [&] {
    ++calls;
    loop.stop();
  });
  ASSERT_EQ(::kill(::getpid(), SIGUSR2), 0);
  run_with_deadline(loop);
  EXPECT_EQ(calls, 1);
}

TEST_F(Signal, SignalsSentBeforeTheLoopReadsThemMayCoalesce) {
  EventLoop loop;
  int calls = 0;
  loop.add_signal_handler(SIGUSR1, [&] { ++calls; });
  for (int i = 0; i < 3; ++i) ::raise(SIGUSR1);
  loop.call_later(50ms, [&] { loop.stop(); });
  loop.run_forever();
  EXPECT_GE(calls, 1);
  EXPECT_LE(calls, 3);
}

TEST_F(Signal, AddingAgainReplacesTheHandler) {
  EventLoop loop;
  std::vector<std::string> log;
  loop.add_signal_handler(SIGUSR1, [&] { log.push_back("first"); });
  loop.add_signal_handler(SIGUSR1, [&] {
    log.push_back("second");
    loop.stop();
  });
  ::raise(SIGUSR1);
  run_with_deadline(loop);
  EXPECT_EQ(log, std::vector<std::string>{"second"});
  EXPECT_TRUE(loop.remove_signal_handler(SIGUSR1));
  EXPECT_FALSE(blocked(SIGUSR1));  // replacing did not forget the original mask
}

TEST_F(Signal, InvalidOrUncatchableSignalsThrowValueError) {
  EventLoop loop;
  for (int bad : {0, -1, NSIG, 65, SIGKILL, SIGSTOP}) {
    EXPECT_THROW(loop.add_signal_handler(bad, [] {}), corio::ValueError) << bad;
    EXPECT_THROW(loop.remove_signal_handler(bad), corio::ValueError) << bad;
  }
  EXPECT_FALSE(blocked(SIGKILL));
}

TEST_F(Signal, AHandlerThatThrowsIsReportedAndOthersStillRun) {
  EventLoop loop;
  Reports reports;
  reports.install(loop);
  bool other_ran = false;
  loop.add_signal_handler(SIGUSR1, [] { throw std::runtime_error("boom"); });
  loop.add_signal_handler(SIGUSR2, [&] {
    other_ran = true;
    loop.stop();
  });
  ::raise(SIGUSR1);
  ::raise(SIGUSR2);
  run_with_deadline(loop);
  EXPECT_TRUE(other_ran);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports.messages[0], "Exception in signal handler");
  EXPECT_EQ(corio_test::what_of(reports.exceptions[0]), "boom");
}

Coro<int> add_handler_from_a_task() {
  EventLoop& loop = corio::get_running_loop();
  corio::Future<int> got = loop.create_future<int>();
  loop.add_signal_handler(SIGUSR2, [got]() mutable {
    if (!got.done()) got.set_result(42);
  });
  ::raise(SIGUSR2);
  const int v = co_await got;
  EXPECT_TRUE(loop.remove_signal_handler(SIGUSR2));
  co_return v;
}

TEST_F(Signal, HandlerAddedFromATask) {
  EventLoop loop;
  EXPECT_EQ(loop.run_until_complete(add_handler_from_a_task()), 42);
  EXPECT_FALSE(blocked(SIGUSR2));
}

// ---- remove_signal_handler and close ------------------------------------------------

TEST_F(Signal, RemoveRestoresTheMaskAndReportsWhetherThereWasAHandler) {
  EventLoop loop;
  EXPECT_FALSE(loop.remove_signal_handler(SIGUSR1));
  ASSERT_FALSE(blocked(SIGUSR1));
  loop.add_signal_handler(SIGUSR1, [] {});
  EXPECT_TRUE(blocked(SIGUSR1));
  EXPECT_TRUE(loop.remove_signal_handler(SIGUSR1));
  EXPECT_FALSE(blocked(SIGUSR1));
  EXPECT_FALSE(loop.remove_signal_handler(SIGUSR1));
}

TEST_F(Signal, RemoveDiscardsWhatWasSentButNotRead) {
  EventLoop loop;
  int calls = 0;
  loop.add_signal_handler(SIGUSR1, [&] { ++calls; });
  ::raise(SIGUSR1);  // pending: unblocking it now would end the test binary
  EXPECT_TRUE(loop.remove_signal_handler(SIGUSR1));
  EXPECT_FALSE(blocked(SIGUSR1));
  loop.call_soon([&] { loop.stop(); });
  loop.run_forever();
  EXPECT_EQ(calls, 0);
}

TEST_F(Signal, RemoveStopsDeliveryAndLeavesASignalTheProgramBlocked) {
  const sigset_t usr1 = set_of({SIGUSR1});
  ::pthread_sigmask(SIG_BLOCK, &usr1, nullptr);
  EventLoop loop;
  int calls = 0;
  loop.add_signal_handler(SIGUSR1, [&] { ++calls; });
  EXPECT_TRUE(loop.remove_signal_handler(SIGUSR1));
  EXPECT_TRUE(blocked(SIGUSR1));
  ::raise(SIGUSR1);
  loop.call_later(20ms, [&] { loop.stop(); });
  loop.run_forever();
  EXPECT_EQ(calls, 0);
  const timespec zero{};
  EXPECT_EQ(::sigtimedwait(&usr1, nullptr, &zero), SIGUSR1);  // still pending, for the program
}

TEST_F(Signal, AHandlerMayRemoveItself) {
  EventLoop loop;
  int calls = 0;
  bool removed = false;
  loop.add_signal_handler(SIGUSR1, [&] {
    ++calls;
    removed = loop.remove_signal_handler(SIGUSR1);
    loop.stop();
  });
  ::raise(SIGUSR1);
  run_with_deadline(loop);
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(removed);
  EXPECT_FALSE(blocked(SIGUSR1));
}

TEST_F(Signal, CloseRemovesTheHandlersAndRestoresTheMask) {
  EventLoop loop;
  loop.add_signal_handler(SIGUSR1, [] {});
  loop.add_signal_handler(SIGUSR2, [] {});
  loop.close();
  EXPECT_FALSE(blocked(SIGUSR1));
  EXPECT_FALSE(blocked(SIGUSR2));
  EXPECT_THROW(loop.add_signal_handler(SIGUSR1, [] {}), corio::RuntimeError);
  EXPECT_FALSE(loop.remove_signal_handler(SIGUSR1));
}

TEST_F(Signal, ExecutorWorkersBlockAsynchronousSignals) {
  corio::ThreadPoolExecutor pool(1);
  EventLoop loop;
  auto masks = loop.run_until_complete(loop.run_in_executor(&pool, [] {
    return std::pair{blocked(SIGINT) && blocked(SIGTERM) && blocked(SIGUSR1), blocked(SIGSEGV)};
  }));
  EXPECT_TRUE(masks.first);
  EXPECT_FALSE(masks.second);  // faults must still reach crash handlers
  EXPECT_FALSE(blocked(SIGINT));  // the submitting thread's mask is back as it was
}

// ---- run(): SIGINT cancels main ----------------------------------------------------

class RunSigint : public Signal {
 protected:
  void SetUp() override {
    Signal::SetUp();
    // Otherwise run() leaves SIGINT alone and raising it ends the binary.
    if (::gettid() != ::getpid() || !sigint_has_default_action())
      GTEST_SKIP() << "needs the main thread and SIGINT's default action";
  }
};

struct SetOnDestroy {
  bool* flag;
  ~SetOnDestroy() { *flag = true; }
};

Coro<int> interrupted_main(bool* unwound) {
  SetOnDestroy finally{unwound};
  EXPECT_TRUE(blocked(SIGINT));
  ::raise(SIGINT);  // Ctrl-C
  co_await corio::sleep(10s);
  co_return 1;
}

TEST_F(RunSigint, SigintCancelsMainAndRunThrowsKeyboardInterrupt) {
  bool unwound = false;
  EXPECT_THROW(corio::run(interrupted_main(&unwound)), corio::KeyboardInterrupt);
  EXPECT_TRUE(unwound);
  EXPECT_FALSE(blocked(SIGINT));
  EXPECT_TRUE(sigint_has_default_action());
}

TEST_F(RunSigint, RunMainTurnsKeyboardInterruptIntoExitStatus130) {
  bool unwound = false;
  testing::internal::CaptureStderr();
  EXPECT_EQ(corio::run_main(interrupted_main(&unwound)), 130);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");  // quiet: the status says it
  EXPECT_TRUE(unwound);
}

Coro<int> swallowing_main(bool* caught) {
  ::raise(SIGINT);
  try {
    co_await corio::sleep(10s);
  } catch (const corio::CancelledError&) {
    *caught = true;
  }
  co_return 7;
}

TEST_F(RunSigint, AMainThatSwallowsTheCancellationReturnsNormally) {
  bool caught = false;
  EXPECT_EQ(corio::run(swallowing_main(&caught)), 7);  // as asyncio: no KeyboardInterrupt
  EXPECT_TRUE(caught);
  EXPECT_FALSE(blocked(SIGINT));
}

Coro<void> cancelled_again_after_sigint() {
  ::raise(SIGINT);
  try {
    co_await corio::sleep(10s);
  } catch (const corio::CancelledError&) {
  }
  corio::current_task()->cancel();  // a second request, not from SIGINT
  co_await corio::sleep(10s);
}

TEST_F(RunSigint, AnotherPendingCancellationKeepsCancelledError) {
  // asyncio.Runner: KeyboardInterrupt only if uncancel() reaches 0.
  EXPECT_THROW(corio::run(cancelled_again_after_sigint()), corio::CancelledError);
}

Coro<void> interrupted_twice() {
  ::raise(SIGINT);
  try {
    co_await corio::sleep(10s);
  } catch (const corio::CancelledError&) {
  }
  ::raise(SIGINT);  // main is not done: Ctrl-C again
  co_await corio::sleep(10s);
}

TEST_F(RunSigint, ASecondSigintEndsTheProcessAsCtrlCDoes) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(corio::run(interrupted_twice()), ::testing::KilledBySignal(SIGINT), "");
}

Coro<bool> sigint_blocked_in_main() { co_return blocked(SIGINT); }

TEST_F(RunSigint, SigintIsLeftAloneWhenTheProgramIgnoresIt) {
  ::signal(SIGINT, SIG_IGN);
  EXPECT_FALSE(corio::run(sigint_blocked_in_main()));
}

TEST_F(RunSigint, SigintIsLeftAloneByARunOnAnotherThread) {
  bool was_blocked = true;
  std::thread t([&] { was_blocked = corio::run(sigint_blocked_in_main()); });
  t.join();
  EXPECT_FALSE(was_blocked);
}

// ---- SIGPIPE ------------------------------------------------------------------

// Once a loop exists, a write that would raise SIGPIPE (a pipe nobody reads;
// sendfile to a reset socket alike) is EPIPE: the loop set SIGPIPE to
// SIG_IGN, as CPython does at start-up. Without it this process dies here.
TEST(Sigpipe, ALoopMakesAWriteToAClosedPipeEpipeNotADeadProcess) {
  EventLoop loop;
  struct sigaction now {};
  ASSERT_EQ(::sigaction(SIGPIPE, nullptr, &now), 0);
  EXPECT_NE(now.sa_handler, SIG_DFL);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::close(fds[0]);
  errno = 0;
  EXPECT_EQ(::write(fds[1], "x", 1), -1);
  EXPECT_EQ(errno, EPIPE);
  ::close(fds[1]);
  loop.close();
}

}  // namespace
