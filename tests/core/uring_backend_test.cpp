// The io_uring backend (src/core/backend/io_uring) driven directly through the
// Backend seam, on socketpairs, pipes and loopback TCP: receives, sends, EOF
// and errors, accept, the per-fd caps, bytes kept for a waiter that left,
// fd reuse after detach, readiness for add_reader, wake-up from a thread.
// Skipped, with the probe's reason, where io_uring is unusable.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "core/backend/io_uring/probe.hpp"
#include "core/backend/io_uring/uring_backend.hpp"

namespace {

using corio::SocketAddress;
using corio::detail::Backend;
using corio::detail::IoEvent;

// Polls until fd is reported in the wanted direction; false after `rounds`
// polls of up to a second each (a generous bound, never a timing assertion).
bool wait_for(Backend& b, int fd, bool write, int rounds = 10) {
  std::array<IoEvent, 64> ev{};
  for (int i = 0; i < rounds; ++i) {
    const int n = b.poll(1000, ev.data(), static_cast<int>(ev.size()));
    for (int k = 0; k < n; ++k) {
      if (ev[k].fd == fd && (write ? ev[k].writable : ev[k].readable)) return true;
    }
  }
  return false;
}

// Polls without waiting: submits what the last steps queued, reaps what came.
int pump(Backend& b, int fd = -1, int times = 3) {
  std::array<IoEvent, 64> ev{};
  int hits = 0;
  for (int i = 0; i < times; ++i) {
    const int n = b.poll(0, ev.data(), static_cast<int>(ev.size()));
    for (int k = 0; k < n; ++k) hits += ev[k].fd == fd;
  }
  return hits;
}

std::string recv_all(Backend& b, int fd, std::size_t want) {
  std::string got;
  std::array<char, 65536> buf{};
  while (got.size() < want) {
    const long n = b.try_recv(fd, std::span<char>(buf.data(), buf.size()), true);
    if (n == -EAGAIN) {
      b.arm(fd, false);
      if (!wait_for(b, fd, false)) break;
      continue;
    }
    if (n <= 0) break;
    got.append(buf.data(), static_cast<std::size_t>(n));
  }
  return got;
}

std::string pattern(std::size_t n, std::size_t from = 0) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>((from + i) % 251);
  return s;
}

// A socketpair: `a` non-blocking for the backend, `b` the blocking peer.
struct Pair {
  int a = -1, b = -1;
  Pair() {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0) {
      a = fds[0];
      b = fds[1];
      ::fcntl(a, F_SETFL, O_NONBLOCK);
      timeval tv{10, 0};  // a peer read that would hang fails the test instead
      ::setsockopt(b, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    }
  }
  ~Pair() {
    if (a >= 0) ::close(a);
    if (b >= 0) ::close(b);
  }
  std::string peer_read(std::size_t n) const {
    std::string got(n, '\0');
    std::size_t have = 0;
    while (have < n) {
      const ssize_t r = ::read(b, got.data() + have, n - have);
      if (r <= 0) break;
      have += static_cast<std::size_t>(r);
    }
    got.resize(have);
    return got;
  }
};

int tcp_listener(SocketAddress* addr) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof in;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&in), len) != 0 || ::listen(fd, 64) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&in), &len) != 0) {
    ADD_FAILURE() << "listener: " << std::strerror(errno);
  }
  *addr = SocketAddress(reinterpret_cast<sockaddr*>(&in), len);
  return fd;
}

int tcp_client(const SocketAddress& to) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (::connect(fd, to.data(), to.size()) != 0) ADD_FAILURE() << std::strerror(errno);
  return fd;
}

class UringBackend : public ::testing::Test {
 protected:
  void SetUp() override {
    const corio::detail::IoUringSupport s = corio::detail::probe_io_uring();
    try {
      backend_ = corio::detail::make_io_uring_backend(s);
    } catch (const std::system_error& e) {
      GTEST_SKIP() << "io_uring unusable here: " << e.what();
    }
  }
  Backend& b() { return *backend_; }
  std::unique_ptr<Backend> backend_;
};

TEST_F(UringBackend, ReceivesSendsAndSeesEof) {
  Pair p;
  b().attach(p.a);
  std::array<char, 16> buf{};
  EXPECT_EQ(b().try_recv(p.a, buf, true), -EAGAIN);
  b().arm(p.a, false);
  ASSERT_EQ(::write(p.b, "hello", 5), 5);
  ASSERT_TRUE(wait_for(b(), p.a, false));
  ASSERT_EQ(b().try_recv(p.a, buf, true), 5);
  EXPECT_EQ(std::string(buf.data(), 5), "hello");
  EXPECT_EQ(b().try_recv(p.a, buf, true), -EAGAIN);

  EXPECT_EQ(b().try_send(p.a, "world"), 5);
  pump(b());
  EXPECT_EQ(p.peer_read(5), "world");

  ::shutdown(p.b, SHUT_WR);
  b().arm(p.a, false);
  ASSERT_TRUE(wait_for(b(), p.a, false));
  EXPECT_EQ(b().try_recv(p.a, buf, true), 0);
  EXPECT_EQ(b().try_recv(p.a, buf, true), 0) << "EOF is sticky";
  b().detach(p.a);
}

TEST_F(UringBackend, ResetIsAStickyError) {
  SocketAddress addr;
  const int lfd = tcp_listener(&addr);
  const int client = tcp_client(addr);
  const int server = ::accept4(lfd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  ASSERT_GE(server, 0);
  b().attach(server);
  b().arm(server, false);
  linger lg{1, 0};  // close() sends RST
  ::setsockopt(client, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
  ::close(client);
  ASSERT_TRUE(wait_for(b(), server, false));
  std::array<char, 16> buf{};
  EXPECT_EQ(b().try_recv(server, buf, true), -ECONNRESET);
  EXPECT_EQ(b().try_recv(server, buf, true), -ECONNRESET);
  // A send to the dead connection fails in the ring; then try_send says so.
  EXPECT_EQ(b().try_send(server, "x"), 1);
  long r = 1;
  for (int i = 0; i < 10 && r >= 0; ++i) {
    pump(b());
    r = b().try_send(server, "y");
  }
  EXPECT_TRUE(r == -EPIPE || r == -ECONNRESET) << r;
  b().detach(server);
  ::close(server);
  ::close(lfd);
}

TEST_F(UringBackend, AcceptsNonBlockingCloseOnExecWithThePeer) {
  SocketAddress addr;
  const int lfd = tcp_listener(&addr);
  b().attach(lfd);
  SocketAddress peer;
  EXPECT_EQ(b().try_accept(lfd, &peer), -EAGAIN);
  b().arm(lfd, false);
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

// Writes to pair.b until the backend stops draining pair.a (whose reader
// does not read); returns the bytes written, pattern(n) in order.
std::size_t flood(Backend& b, const Pair& pair) {
  ::fcntl(pair.b, F_SETFL, O_NONBLOCK);
  std::size_t written = 0;
  int stalls = 0;
  for (int round = 0; round < 100000 && stalls < 50; ++round) {
    const std::string chunk = pattern(65536, written);
    const ssize_t n = ::write(pair.b, chunk.data(), chunk.size());
    if (n > 0) {
      written += static_cast<std::size_t>(n);
      stalls = 0;
    } else {
      ++stalls;
    }
    pump(b, -1, 1);
  }
  return written;
}

// A reader that does not read holds a bounded share of the buffer ring: a
// flood on one connection stops being drained, another still receives, and
// the flood's bytes all come out in order once read.
TEST_F(UringBackend, AFloodedReaderHoldsABoundedShare) {
  Pair flooded, other;
  b().attach(flooded.a);
  b().attach(other.a);
  b().arm(flooded.a, false);
  b().arm(other.a, false);
  const std::size_t written = flood(b(), flooded);
  // The ring holds 8 MiB: a flood taking it all would pass 8 MiB here.
  EXPECT_LT(written, std::size_t{4} << 20) << "the flooded reader was drained without bound";
  ASSERT_EQ(::write(other.b, "ping", 4), 4);
  EXPECT_EQ(recv_all(b(), other.a, 4), "ping");
  ::shutdown(flooded.b, SHUT_WR);
  const std::string got = recv_all(b(), flooded.a, written);
  EXPECT_EQ(got.size(), written);
  EXPECT_TRUE(got == pattern(written)) << "bytes lost or out of order";
  b().detach(flooded.a);
  b().detach(other.a);
}

// Enough readers that do not read to hold every buffer of the ring still
// cannot stall one that does: it receives into a buffer of its own.
TEST_F(UringBackend, AReaderProgressesWhenOthersHoldEveryBuffer) {
  std::vector<std::unique_ptr<Pair>> idle;
  for (int i = 0; i < 48; ++i) {
    idle.push_back(std::make_unique<Pair>());
    b().attach(idle.back()->a);
    b().arm(idle.back()->a, false);
    flood(b(), *idle.back());
  }
  Pair active;
  b().attach(active.a);
  b().arm(active.a, false);
  const std::string data = pattern(200000);
  std::thread writer([&] { (void)::write(active.b, data.data(), data.size()); });
  EXPECT_TRUE(recv_all(b(), active.a, data.size()) == data);
  writer.join();
  for (auto& p : idle) b().detach(p->a);
  b().detach(active.a);
}

// A waiter told "readable" that goes away without reading (a cancelled
// task) loses nothing: the bytes wait for the next try_recv.
TEST_F(UringBackend, BytesWaitForTheNextReader) {
  Pair p;
  b().attach(p.a);
  b().arm(p.a, false);
  ASSERT_EQ(::write(p.b, "abc", 3), 3);
  ASSERT_TRUE(wait_for(b(), p.a, false));
  ASSERT_EQ(::write(p.b, "def", 3), 3);
  pump(b());
  EXPECT_EQ(recv_all(b(), p.a, 6), "abcdef");
  b().detach(p.a);
}

// Sends are queued up to a cap, go out in order, and a shutdown and a detach
// right after the last one still let all of them out first.
TEST_F(UringBackend, QueuedSendsGoOutInOrderBeforeShutdownAndDetach) {
  constexpr std::size_t kTotal = 4u << 20;
  const std::string data = pattern(kTotal);
  Pair p;
  std::string got;
  std::atomic<bool> done{false};
  std::thread reader([&] {
    timeval tv{20, 0};
    ::setsockopt(p.b, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::array<char, 65536> buf{};
    for (;;) {
      const ssize_t n = ::read(p.b, buf.data(), buf.size());
      if (n <= 0) break;
      got.append(buf.data(), static_cast<std::size_t>(n));
    }
    done = true;
  });
  b().attach(p.a);
  std::size_t sent = 0;
  bool capped = false;
  while (sent < kTotal) {
    const long n = b().try_send(p.a, std::string_view(data).substr(sent));
    if (n == -EAGAIN) {
      capped = true;
      b().arm(p.a, true);
      ASSERT_TRUE(wait_for(b(), p.a, true));
      continue;
    }
    ASSERT_GT(n, 0);
    EXPECT_LT(static_cast<std::size_t>(n), kTotal) << "the send queue has no cap";
    sent += static_cast<std::size_t>(n);
  }
  EXPECT_TRUE(capped);
  EXPECT_EQ(b().shutdown(p.a, SHUT_WR), 0);
  b().detach(p.a);
  ::close(p.a);
  p.a = -1;
  for (int i = 0; i < 400 && !done; ++i) b().poll(50, nullptr, 0);
  reader.join();
  EXPECT_EQ(got.size(), kTotal);
  EXPECT_TRUE(got == data) << "bytes lost or out of order";
}

// A completion that arrives after detach() belongs to the old fd even when
// a new one has its number: the old bytes are dropped (and their buffer
// returned: 300 rounds need more buffers than the ring has), the new fd
// sees only its own.
TEST_F(UringBackend, StaleReceivesAfterFdReuseAreDropped) {
  for (int round = 0; round < 300; ++round) {
    Pair old_pair;
    b().attach(old_pair.a);
    b().arm(old_pair.a, false);
    pump(b(), -1, 1);  // the multishot recv is in the ring
    ASSERT_EQ(::write(old_pair.b, "old", 3), 3);
    b().detach(old_pair.a);
    const int number = old_pair.a;
    ::close(old_pair.a);
    old_pair.a = -1;
    Pair fresh;
    if (fresh.a != number) {
      ASSERT_EQ(::dup2(fresh.a, number), number);
      ::close(fresh.a);
      fresh.a = number;
    }
    b().attach(fresh.a);
    b().arm(fresh.a, false);
    ASSERT_EQ(::write(fresh.b, "new", 3), 3);
    ASSERT_EQ(recv_all(b(), fresh.a, 3), "new") << "round " << round;
    b().detach(fresh.a);
  }
}

// Connections the backend accepted but nobody took are closed at detach()
// (or when their completion comes after it), never leaked: their clients see
// the end of the connection, not silence.
TEST_F(UringBackend, ConnectionsNotTakenAreClosedAtDetach) {
  SocketAddress addr;
  const int lfd = tcp_listener(&addr);
  b().attach(lfd);
  SocketAddress peer;
  EXPECT_EQ(b().try_accept(lfd, &peer), -EAGAIN);
  b().arm(lfd, false);
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
TEST_F(UringBackend, ReadinessIsLevelTriggered) {
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

TEST_F(UringBackend, RegularFilesAreRefusedAsEpollDoes) {
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

TEST_F(UringBackend, ConnectsAndReportsRefusal) {
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

TEST_F(UringBackend, DatagramsGoThroughReadiness) {
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

TEST_F(UringBackend, WakeupFromAnotherThreadEndsABlockedPoll) {
  const auto start = std::chrono::steady_clock::now();
  std::thread waker([this] { b().wakeup(); });
  std::array<IoEvent, 4> ev{};
  EXPECT_EQ(b().poll(30000, ev.data(), 4), 0);
  waker.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

// The ring is tied to the thread that first polls, not to the one that
// made it: a loop built on one thread may run on another.
TEST(UringBackendThreads, BuiltOnOneThreadRunOnAnother) {
  const corio::detail::IoUringSupport s = corio::detail::probe_io_uring();
  std::unique_ptr<Backend> b;
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
