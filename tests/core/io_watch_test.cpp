// IoWatch (detail/io_wait.hpp): a wait for readability with no task behind
// it, what a server parks an idle connection on. The edge calls it back on
// the loop; unpark() takes it out first; a closing loop tells it its fd is
// gone. And LoopIo::interrupt_read(), which ends a task's read wait early
// so that the task can park.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <unistd.h>

#include <utility>

#include "core/test_support.hpp"
#include <corio/detail/io_wait.hpp>
#include <corio/detail/loop_io.hpp>

namespace corio_test {
namespace {

using corio::Coro;
using corio::Socket;

std::pair<Socket, Socket> unix_pair() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) != 0) {
    throw std::system_error(errno, std::generic_category(), "socketpair");
  }
  return {Socket(fds[0]), Socket(fds[1])};
}

// Counts its calls and remembers how the last one came.
struct CountingWatch : corio::detail::IoWatch {
  CountingWatch() : IoWatch(&CountingWatch::on_edge) {}
  int calls = 0;
  bool closed = false;
  static void on_edge(IoWatch* self, bool closed) noexcept {
    auto* w = static_cast<CountingWatch*>(self);
    ++w->calls;
    w->closed = closed;
  }
};

// Polls the loop until `done` or about 5 s (a bound, not a timing claim).
Coro<void> until(const bool& done) {
  for (int i = 0; i < 500 && !done; ++i) co_await corio::sleep(std::chrono::milliseconds(10));
}

Coro<void> watch_calls_back(Socket* ours, Socket* peer, CountingWatch* w) {
  corio::EventLoop& loop = corio::get_running_loop();
  (void)loop.wait_readable(*ours);  // attaches the socket to the loop; the wait is not used
  w->set_fd(ours->fd());
  loop.io().park(w);
  co_await corio::sleep(std::chrono::milliseconds(20));
  EXPECT_EQ(w->calls, 0) << "nothing to read yet";
  EXPECT_EQ(::send(peer->fd(), "x", 1, MSG_NOSIGNAL), 1);
  bool called = false;
  for (int i = 0; i < 500 && !called; ++i) {
    co_await corio::sleep(std::chrono::milliseconds(10));
    called = w->calls > 0;
  }
  EXPECT_EQ(w->calls, 1);
  EXPECT_FALSE(w->closed);
  // Taken out by the edge: a second park is allowed, and a task's read
  // wait finds the slot free once it is unparked.
  loop.io().park(w);
  loop.io().unpark(w);
  char c = 0;
  EXPECT_EQ(co_await loop.sock_recv_into(*ours, std::span<char>(&c, 1)), 1u);
  EXPECT_EQ(w->calls, 1) << "unparked: not called again";
}

TEST(IoWatch, TheEdgeCallsItBackOnceAndTakesItOut) {
  auto [ours, peer] = unix_pair();
  CountingWatch w;
  corio::run(watch_calls_back(&ours, &peer, &w));
}

Coro<void> park_and_leave(Socket* ours, CountingWatch* w) {
  corio::EventLoop& loop = corio::get_running_loop();
  (void)loop.wait_readable(*ours);  // attaches the socket to the loop; the wait is not used
  w->set_fd(ours->fd());
  loop.io().park(w);
  co_return;
}

TEST(IoWatch, AClosingLoopTellsItsWatchesTheirFdIsGone) {
  auto [ours, peer] = unix_pair();
  CountingWatch w;
  corio::EventLoop loop;
  loop.run_until_complete(park_and_leave(&ours, &w));
  EXPECT_EQ(w.calls, 0);
  loop.close();
  EXPECT_EQ(w.calls, 1);
  EXPECT_TRUE(w.closed);
}

Coro<void> interrupted_wait(Socket* ours) {
  corio::EventLoop& loop = corio::get_running_loop();
  bool woke = false;
  auto waiter = [](Socket* s, bool* woke) -> Coro<void> {
    co_await corio::get_running_loop().wait_readable(*s);
    *woke = true;
  };
  corio::Task<void> t = corio::create_task(waiter, ours, &woke);
  co_await corio::sleep(std::chrono::milliseconds(20));
  EXPECT_FALSE(woke) << "nothing to read";
  loop.io().interrupt_read(ours->fd());
  co_await until(woke);
  EXPECT_TRUE(woke) << "interrupt_read() ends the wait as an edge would";
  co_await t;
  loop.io().interrupt_read(ours->fd());  // no wait parked: nothing happens
}

TEST(IoWatch, InterruptReadEndsATasksReadWait) {
  auto [ours, peer] = unix_pair();
  corio::run(interrupted_wait(&ours));
}

}  // namespace
}  // namespace corio_test
