// The io_uring backend's other paths, driven through the IoBackend seam:
// multishot accept, connect, datagrams and readiness (POLL_ADD) for
// add_reader and for code that makes its own syscalls, wake-up from a
// thread, a ring built on one thread and run on another.
#include <chrono>
#include <thread>

#include "uring_test_support.hpp"

namespace {

using namespace uring_test;
using UringReadiness = UringFixture;

TEST_F(UringReadiness, AcceptsNonBlockingCloseOnExecWithThePeer) {
  SocketAddress addr, peer;
  const int lfd = accepting_listener(b(), &addr);
  std::array<int, 3> clients{};
  for (int& c : clients) c = tcp_client(addr);
  std::array<int, 3> got{};
  for (int& g : got) {
    long fd = b().try_accept(lfd, &peer);
    if (fd == -EAGAIN) {
      b().arm(lfd, false);
      ASSERT_TRUE(wait_for(b(), lfd, false));
      fd = b().try_accept(lfd, &peer);
    }
    ASSERT_GE(fd, 0);
    g = static_cast<int>(fd);
    EXPECT_NE(::fcntl(g, F_GETFL) & O_NONBLOCK, 0);
    EXPECT_NE(::fcntl(g, F_GETFD) & FD_CLOEXEC, 0);
    EXPECT_EQ(peer.family(), AF_INET);
    EXPECT_NE(peer.port(), 0);
  }
  b().detach(lfd);
  for (int fd : got) ::close(fd);
  for (int fd : clients) ::close(fd);
  ::close(lfd);
}

// Connections the backend accepted but nobody took are closed at detach()
// (or when their completion comes after it), never leaked: their clients see
// the end of the connection, not silence.
TEST_F(UringReadiness, ConnectionsNotTakenAreClosedAtDetach) {
  SocketAddress addr;
  const int lfd = accepting_listener(b(), &addr);
  const int queued = tcp_client(addr);
  ASSERT_TRUE(wait_for(b(), lfd, false));  // accepted into the listener's queue
  const int racing = tcp_client(addr);     // in the ring's hands, or still in the backlog
  b().detach(lfd);
  ::close(lfd);
  pump(b());
  timeval tv{10, 0};
  char c;
  ::setsockopt(queued, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  EXPECT_EQ(::read(queued, &c, 1), 0) << std::strerror(errno);
  ::setsockopt(racing, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  const ssize_t r = ::read(racing, &c, 1);
  EXPECT_TRUE(r == 0 || (r < 0 && errno == ECONNRESET)) << r << " " << std::strerror(errno);
  ::close(queued);
  ::close(racing);
}

// add_reader is level-triggered: reported again while the byte is unread.
TEST_F(UringReadiness, ReadinessIsLevelTriggered) {
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
  b().set_interest(fds[0], true, false);
  ASSERT_EQ(::write(fds[1], "x", 1), 1);
  EXPECT_TRUE(wait_for(b(), fds[0], false));
  EXPECT_TRUE(wait_for(b(), fds[0], false)) << "the unread byte was reported once only";
  char c;
  ASSERT_EQ(::read(fds[0], &c, 1), 1);
  EXPECT_EQ(pump(b(), fds[0]), 0);
  b().set_interest(fds[0], false, false);
  ASSERT_EQ(::write(fds[1], "x", 1), 1);
  EXPECT_EQ(pump(b(), fds[0]), 0);
  ::close(fds[0]);
  ::close(fds[1]);
}

// A stream socket whose reads bypass try_recv (a waiter that makes its own
// syscall) gets readiness: the backend takes none of its bytes.
TEST_F(UringReadiness, AStreamReadByItsOwnSyscallsKeepsItsBytes) {
  Pair p;
  b().attach(p.a);
  b().arm(p.a, false);
  ASSERT_EQ(::write(p.b, "mine", 4), 4);
  ASSERT_TRUE(wait_for(b(), p.a, false));
  std::array<char, 8> buf{};
  EXPECT_EQ(::recv(p.a, buf.data(), buf.size(), 0), 4);
  EXPECT_EQ(std::string(buf.data(), 4), "mine");
  b().arm(p.a, true);
  ASSERT_TRUE(wait_for(b(), p.a, true));
  b().detach(p.a);
}

TEST_F(UringReadiness, RegularFilesAreRefusedAsEpollDoes) {
  const int fd = ::open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  try {
    b().set_interest(fd, true, false);
    ADD_FAILURE() << "a regular file was accepted";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code().value(), EPERM);
  }
  ::close(fd);
}

TEST_F(UringReadiness, ConnectsAndReportsRefusal) {
  SocketAddress addr;
  const int lfd = tcp_listener(&addr);
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  b().attach(fd);
  long r = b().start_connect(fd, addr);
  if (r == -EINPROGRESS) {
    b().arm(fd, true);
    ASSERT_TRUE(wait_for(b(), fd, true));
    r = b().finish_connect(fd);
  }
  EXPECT_EQ(r, 0);
  b().detach(fd);
  ::close(fd);
  ::close(lfd);  // nobody listens there any more

  const int refused = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  b().attach(refused);
  r = b().start_connect(refused, addr);
  if (r == -EINPROGRESS) {
    b().arm(refused, true);
    ASSERT_TRUE(wait_for(b(), refused, true));
    r = b().finish_connect(refused);
  }
  EXPECT_EQ(r, -ECONNREFUSED);
  b().detach(refused);
  ::close(refused);
}

TEST_F(UringReadiness, DatagramsGoThroughReadiness) {
  SocketAddress addr;
  const int rx = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof in;
  ASSERT_EQ(::bind(rx, reinterpret_cast<sockaddr*>(&in), len), 0);
  ASSERT_EQ(::getsockname(rx, reinterpret_cast<sockaddr*>(&in), &len), 0);
  addr = SocketAddress(reinterpret_cast<sockaddr*>(&in), len);
  const int tx = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  b().attach(rx);
  b().attach(tx);
  std::array<char, 64> buf{};
  SocketAddress from;
  EXPECT_EQ(b().try_recvfrom(rx, buf, &from), -EAGAIN);
  b().arm(rx, false);
  EXPECT_EQ(b().try_sendto(tx, "one", addr), 3);
  ASSERT_TRUE(wait_for(b(), rx, false));
  EXPECT_EQ(b().try_recvfrom(rx, buf, &from), 3);
  EXPECT_EQ(std::string(buf.data(), 3), "one");
  EXPECT_EQ(from.family(), AF_INET);
  b().detach(rx);
  b().detach(tx);
  ::close(rx);
  ::close(tx);
}

TEST_F(UringReadiness, WakeupFromAnotherThreadEndsABlockedPoll) {
  const auto start = std::chrono::steady_clock::now();
  std::thread waker([this] { b().wakeup(); });
  std::array<IoEvent, 4> ev{};
  EXPECT_EQ(b().poll(30000, ev.data(), 4), 0);
  waker.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

// The ring is tied to the thread that first polls, not to the one that
// made it: a loop built on one thread may run on another.
TEST(UringReadinessThreads, BuiltOnOneThreadRunOnAnother) {
  const corio::detail::IoUringSupport s = corio::detail::probe_io_uring();
  std::unique_ptr<IoBackend> b;
  std::string error;
  std::thread maker([&] {
    try {
      b = corio::detail::make_io_uring_backend(s);
    } catch (const std::system_error& e) {
      error = e.what();
    }
  });
  maker.join();
  if (!b) GTEST_SKIP() << "io_uring unusable here: " << error;
  Pair p;
  b->attach(p.a);
  b->arm(p.a, false);
  ASSERT_EQ(::write(p.b, "hi", 2), 2);
  EXPECT_EQ(recv_all(*b, p.a, 2), "hi");
  EXPECT_EQ(b->try_send(p.a, "yo"), 2);
  pump(*b);
  EXPECT_EQ(p.peer_read(2), "yo");
  b->detach(p.a);
}

}  // namespace
