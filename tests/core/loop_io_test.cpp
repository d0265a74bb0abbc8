// EventLoop and other threads (call_soon_threadsafe) and fd readiness
// (add_reader/add_writer).
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <sys/socket.h>

#include "core/test_support.hpp"

using namespace std::chrono_literals;
using corio::EventLoop;
using corio_test::Pipe;
using corio_test::virtual_time;
using Log = std::vector<std::string>;

namespace {

// ---- call_soon_threadsafe ----------------------------------------------------------------

// Stops the loop through an fd (not through call_soon_threadsafe) if the test
// has not finished in time, so that a broken wake-up fails instead of hanging.
class Watchdog {
 public:
  Watchdog(EventLoop& loop, std::chrono::seconds limit) {
    loop.add_reader(pipe_.r, [this, &loop] {
      fired = true;
      loop.stop();
    });
    thread_ = std::thread([this, limit] {
      std::unique_lock lock(m_);
      if (!cv_.wait_for(lock, limit, [this] { return done_; })) pipe_.write_byte();
    });
  }
  ~Watchdog() {
    {
      std::lock_guard lock(m_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  bool fired = false;

 private:
  Pipe pipe_;
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

TEST(EventLoopThreads, CallSoonThreadsafeWakesALoopBlockedInPoll) {
  EventLoop loop;  // real clock and no timers: the loop blocks in epoll_wait
  Watchdog watchdog(loop, 30s);
  auto fut = loop.create_future<int>();
  auto* target = &fut;
  const auto start = std::chrono::steady_clock::now();
  std::thread poker([&loop, target] {
    std::this_thread::sleep_for(50ms);
    loop.call_soon_threadsafe([target] { target->set_result(42); });
  });
  loop.call_soon([] {});  // one busy iteration first, then the loop idles
  int result = -1;
  try {
    result = loop.run_until_complete(fut);
  } catch (const corio::RuntimeError&) {
  }
  poker.join();
  EXPECT_FALSE(watchdog.fired) << "call_soon_threadsafe did not wake the loop";
  EXPECT_EQ(result, 42);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 45ms);  // it did wait for the thread
}

TEST(EventLoopThreads, CallSoonThreadsafeFromManyThreadsKeepsPerThreadOrder) {
  EventLoop loop;
  Watchdog watchdog(loop, 60s);
  constexpr int kThreads = 4;
  constexpr int kPerThread = 2000;
  auto fut = loop.create_future<void>();
  auto* done = &fut;
  int received = 0;
  int last_seen[kThreads] = {-1, -1, -1, -1};
  bool in_order = true;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        loop.call_soon_threadsafe([&, t, i] {
          if (last_seen[t] != i - 1) in_order = false;
          last_seen[t] = i;
          if (++received == kThreads * kPerThread) done->set_result();
        });
      }
    });
  }
  try {
    loop.run_until_complete(fut);
  } catch (const corio::RuntimeError&) {
  }
  for (auto& th : threads) th.join();
  EXPECT_FALSE(watchdog.fired);
  EXPECT_EQ(received, kThreads * kPerThread);
  EXPECT_TRUE(in_order);
}

// ---- fd readiness -------------------------------------------------------------------------

TEST(EventLoopIo, ReaderFiresWhenDataArrivesAndRemoveReaderStopsIt) {
  EventLoop loop(virtual_time());
  Pipe p;
  ASSERT_GE(p.r, 0);
  int calls = 0;
  int bytes = 0;
  loop.add_reader(p.r, [&] {
    ++calls;
    bytes += p.drain();
  });
  loop.call_soon([&] { p.write_byte(); });
  loop.call_later(1s, [&] { loop.stop(); });
  loop.run_forever();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(bytes, 1);

  EXPECT_TRUE(loop.remove_reader(p.r));
  EXPECT_FALSE(loop.remove_reader(p.r));
  p.write_byte();
  loop.call_later(1s, [&] { loop.stop(); });
  loop.run_forever();
  EXPECT_EQ(calls, 1);  // data is there, but nobody listens
}

// Real clock here: a virtual clock jumps to the guard timer on the first idle poll.
TEST(EventLoopIo, ReaderIsLevelTriggered) {
  EventLoop loop;
  Pipe p;
  int calls = 0;
  loop.add_reader(p.r, [&] {
    if (++calls == 3) {
      loop.remove_reader(p.r);  // from inside its own callback
      loop.stop();
    }
  });
  p.write_byte();                              // never drained: stays readable
  loop.call_later(10s, [&] { loop.stop(); });  // guard only
  loop.run_forever();
  EXPECT_EQ(calls, 3);
}

TEST(EventLoopIo, AddReaderReplacesThePreviousCallback) {
  EventLoop loop(virtual_time());
  Pipe p;
  Log log;
  loop.add_reader(p.r, [&] { log.push_back("old"); });
  loop.add_reader(p.r, [&] {
    log.push_back("new");
    p.drain();
    loop.remove_reader(p.r);
  });
  p.write_byte();
  loop.call_later(1s, [&] { loop.stop(); });
  loop.run_forever();
  EXPECT_EQ(log, (Log{"new"}));
}

TEST(EventLoopIo, WriterFiresWhenWritableAndRemoveWriterStopsIt) {
  EventLoop loop(virtual_time());
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
  int calls = 0;
  loop.add_writer(sv[0], [&] {
    ++calls;
    EXPECT_EQ(::write(sv[0], "hi", 2), 2);
    EXPECT_TRUE(loop.remove_writer(sv[0]));
  });
  loop.call_later(1s, [&] { loop.stop(); });
  loop.run_forever();
  EXPECT_EQ(calls, 1);
  char buf[4] = {};
  EXPECT_EQ(::read(sv[1], buf, sizeof buf), 2);
  EXPECT_FALSE(loop.remove_writer(sv[0]));
  ::close(sv[0]);
  ::close(sv[1]);
}

TEST(EventLoopIo, ReaderAndWriterOnTheSameFdAreIndependent) {
  EventLoop loop;
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
  int reads = 0, writes = 0;
  loop.add_reader(sv[0], [&] {
    ++reads;
    char c;
    while (::read(sv[0], &c, 1) == 1) {
    }
    loop.stop();
  });
  loop.add_writer(sv[0], [&] {
    ++writes;
    loop.remove_writer(sv[0]);
    EXPECT_EQ(::write(sv[1], "x", 1), 1);  // makes sv[0] readable
  });
  loop.call_later(10s, [&] { loop.stop(); });  // guard only
  loop.run_forever();
  EXPECT_EQ(writes, 1);
  EXPECT_EQ(reads, 1);
  EXPECT_TRUE(loop.remove_reader(sv[0]));
  ::close(sv[0]);
  ::close(sv[1]);
}

TEST(EventLoopIo, AddReaderOnARegularFileThrowsLikeAsyncio) {
  EventLoop loop;
  char path[] = "/tmp/corio_loop_test_XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::unlink(path);
  EXPECT_THROW(loop.add_reader(fd, [] {}), std::system_error);
  EXPECT_FALSE(loop.remove_reader(fd));
  EXPECT_THROW(loop.add_reader(-1, [] {}), std::exception);
  ::close(fd);
}

// remove_reader(), close(fd), a new fd with the same number, add_reader(), all
// before the loop polls again: the new fd must be watched (a server closing
// one connection and accepting the next in the same callback does this).
TEST(EventLoopIo, FdNumberReusedBeforeTheNextPollIsWatched) {
  EventLoop loop(virtual_time());
  auto first = std::make_unique<Pipe>();
  const int fd = first->r;
  loop.add_reader(fd, [] {});
  loop.call_soon([] {});
  loop.run_once();  // the first pipe is registered with the poller

  EXPECT_TRUE(loop.remove_reader(fd));
  first.reset();  // closes both ends: the kernel forgets the registration
  Pipe second;    // lowest free numbers: the same fds again
  ASSERT_EQ(second.r, fd);
  bool fired = false;
  loop.add_reader(second.r, [&] {
    fired = true;
    second.drain();
    loop.stop();
  });
  second.write_byte();
  loop.call_later(5s, [&] { loop.stop(); });
  loop.run_forever();
  EXPECT_TRUE(fired) << "a reader on a reused fd number never fired";
  loop.remove_reader(second.r);
}

TEST(EventLoopIo, ReaderFiresOnHangUp) {
  EventLoop loop;
  Pipe p;
  ssize_t last_read = -1;
  loop.add_reader(p.r, [&] {
    char c;
    last_read = ::read(p.r, &c, 1);
    loop.remove_reader(p.r);
    loop.stop();
  });
  ::close(p.w);  // EOF: readable, read() returns 0
  p.w = -1;
  loop.call_later(10s, [&] { loop.stop(); });  // guard only
  loop.run_forever();
  EXPECT_EQ(last_read, 0);
}

}  // namespace
