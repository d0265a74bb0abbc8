// No false deadlock reports: a program whose tasks all wait, but on something
// outside the tasks (a timer, a socket, a to_thread call in flight, a signal
// handler, a thread holding a ThreadsafeHold, a thread of the program's own
// that has not posted yet), is never reported. Each test
// lets the loop block on that one thing alone (ActOnIdle runs the peer after
// the check looked) and asserts that no report came.
#include <pthread.h>
#include <unistd.h>

#include <csignal>
#include <future>
#include <thread>

#include <sys/socket.h>

#include "sync/idle_action.hpp"
#include "sync/sync_support.hpp"
#include <corio/socket.hpp>
#include <corio/to_thread.hpp>

namespace corio_sync_test {
namespace {

// Runs main on an ActOnIdle loop with a report recorder; main's result.
template <class T>
T run_quiet(Coro<T> main, const std::shared_ptr<ActOnIdle>& clock, Reports* reports) {
  corio::EventLoop loop(act_on_idle(clock));
  reports->install(loop);
  return loop.run_until_complete(std::move(main));
}

Coro<void> wait_long_timer(corio::Event* ev, Reports* reports) {
  reports->install();
  corio::get_running_loop().call_later(3600s, [ev] { ev->set(); });
  co_await ev->wait();
}

TEST(DeadlockQuiet, ATimerCanWake) {
  Reports reports;
  corio::Event ev;
  corio::run(wait_long_timer(&ev, &reports), virtual_time());
  EXPECT_TRUE(ev.is_set());
  EXPECT_EQ(reports.size(), 0u) << reports.joined();
}

Coro<std::string> recv_one(corio::Socket* s) {
  co_return co_await corio::get_running_loop().sock_recv(*s, 16);
}

TEST(DeadlockQuiet, ASocketReadCanWake) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds), 0);
  corio::Socket a(fds[0]), b(fds[1]);
  auto clock = std::make_shared<ActOnIdle>();
  clock->action = [&b] { ASSERT_EQ(::write(b.fd(), "x", 1), 1); };
  Reports reports;
  EXPECT_EQ(run_quiet(recv_one(&a), clock, &reports), "x");
  EXPECT_TRUE(clock->acted);
  EXPECT_EQ(reports.size(), 0u) << reports.joined();
}

// The closure is named: a closure temporary inside a co_await expression is
// destroyed twice by g++ 12 (ASan saw its shared_future released twice).
Coro<int> call_blocking(std::shared_future<void> gate) {
  auto blocking = [gate] {
    gate.wait();
    return 7;
  };
  co_return co_await corio::to_thread(std::move(blocking));
}

TEST(DeadlockQuiet, ACallInFlightOnAThreadCanWake) {
  std::promise<void> gate;
  auto clock = std::make_shared<ActOnIdle>();
  clock->action = [&gate] { gate.set_value(); };
  Reports reports;
  EXPECT_EQ(run_quiet(call_blocking(gate.get_future().share()), clock, &reports), 7);
  EXPECT_TRUE(clock->acted);
  EXPECT_EQ(reports.size(), 0u) << reports.joined();
}

Coro<void> wait_for_signal(corio::Event* ev) {
  corio::EventLoop& loop = corio::get_running_loop();
  loop.add_signal_handler(SIGUSR1, [ev] { ev->set(); });
  co_await ev->wait();
  loop.remove_signal_handler(SIGUSR1);
}

TEST(DeadlockQuiet, ASignalHandlerCanWake) {
  corio::Event ev;
  auto clock = std::make_shared<ActOnIdle>();
  // Blocked in this thread while handled: it stays pending for the signalfd.
  clock->action = [] { ASSERT_EQ(::pthread_kill(::pthread_self(), SIGUSR1), 0); };
  Reports reports;
  run_quiet(wait_for_signal(&ev), clock, &reports);
  EXPECT_TRUE(clock->acted);
  EXPECT_EQ(reports.size(), 0u) << reports.joined();
}

// Another thread that will post holds a ThreadsafeHold (as a future of work
// handed to another loop would): the loop waits for it. A hold dropped without
// a post (here on the loop's thread: a thread of the test's own still alive
// would keep a lost wake-up from being judged, see below) wakes the loop,
// which checks again and reports.
Coro<void> wait_for_thread(corio::Event* ev, std::thread* poster, bool post,
                           std::shared_ptr<ActOnIdle> clock) {
  corio::EventLoop& loop = corio::get_running_loop();
  auto hold = std::make_shared<corio::ThreadsafeHold>(loop.hold_threadsafe());
  clock->action = [ev, poster, post, hold]() mutable {
    if (!post) return hold->reset();
    *poster = std::thread([ev, hold = std::move(hold)]() mutable {
      hold->post_and_release([ev] { ev->set(); });
    });
  };
  co_await ev->wait();
}

TEST(DeadlockQuiet, AThreadsafeHoldCanWake) {
  corio::Event ev;
  std::thread poster;
  auto clock = std::make_shared<ActOnIdle>();
  Reports reports;
  run_quiet(wait_for_thread(&ev, &poster, true, clock), clock, &reports);
  poster.join();
  EXPECT_TRUE(clock->acted);
  EXPECT_EQ(reports.size(), 0u) << reports.joined();
}

TEST(DeadlockQuiet, ADroppedThreadsafeHoldLeavesTheDeadlockReported) {
  corio::Event ev;
  std::thread poster;
  auto clock = std::make_shared<ActOnIdle>();
  corio::EventLoop loop(act_on_idle(clock));
  std::vector<std::string> messages;
  loop.set_exception_handler([&](corio::EventLoop&, const corio::ExceptionContext& c) {
    messages.push_back(c.message);
    ev.set();
  });
  loop.run_until_complete(wait_for_thread(&ev, &poster, false, clock));
  EXPECT_FALSE(poster.joinable());
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_TRUE(corio_testing::starts_with(messages[0], "deadlock: every task is suspended"))
      << messages[0];
  EXPECT_NE(messages[0].find("awaiting event"), std::string::npos) << messages[0];
}

// A thread that posted once without a hold may post again: from then on the
// loop does not judge. (Its first post must come without the loop idle in
// between, or that wait would be reported: hence ThreadsafeHold.)
Coro<void> wait_twice(corio::Event* first, corio::Event* second, std::thread* poster,
                      std::shared_future<void> gate) {
  corio::EventLoop& loop = corio::get_running_loop();
  std::promise<void> posted;
  *poster = std::thread([&loop, first, second, gate, &posted] {
    loop.call_soon_threadsafe([first] { first->set(); });
    posted.set_value();
    gate.wait();
    loop.call_soon_threadsafe([second] { second->set(); });
  });
  posted.get_future().wait();  // the first post is queued: the loop is not idle before it
  co_await first->wait();
  co_await second->wait();
}

TEST(DeadlockQuiet, AThreadThatPostedMayPostAgain) {
  corio::Event first, second;
  std::thread poster;
  std::promise<void> gate;
  auto clock = std::make_shared<ActOnIdle>();
  clock->action = [&gate] { gate.set_value(); };
  Reports reports;
  run_quiet(wait_twice(&first, &second, &poster, gate.get_future().share()), clock, &reports);
  poster.join();
  EXPECT_TRUE(clock->acted);
  EXPECT_EQ(reports.size(), 0u) << reports.joined();
}

// A thread the program made may call call_soon_threadsafe without a
// ThreadsafeHold, its first post unforeseen: while it lives, a task waiting
// on an Event is not a lost wake-up.
Coro<void> wait_for_unheld_thread(corio::Event* ev, std::shared_future<void> gate, std::thread* poster) {
  corio::EventLoop& loop = corio::get_running_loop();
  *poster = std::thread([&loop, ev, gate] {
    gate.wait();
    loop.call_soon_threadsafe([ev] { ev->set(); });
  });
  co_await ev->wait();
}

TEST(DeadlockQuiet, AThreadOfTheProgramsOwnMayPostWithoutAHold) {
  corio::Event ev;
  std::thread poster;
  std::promise<void> gate;
  auto clock = std::make_shared<ActOnIdle>();
  clock->action = [&gate] { gate.set_value(); };
  Reports reports;
  run_quiet(wait_for_unheld_thread(&ev, gate.get_future().share(), &poster), clock, &reports);
  poster.join();
  EXPECT_TRUE(clock->acted);
  EXPECT_TRUE(ev.is_set());
  EXPECT_EQ(reports.size(), 0u) << reports.joined();
}

}  // namespace
}  // namespace corio_sync_test
