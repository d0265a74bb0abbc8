// The io_uring backend (src/core/backend/io_uring) driven directly through the
// IoBackend seam on stream sockets: receives, sends, EOF and errors, the
// per-fd caps, bytes kept for a waiter that left, fd reuse after detach.
// Skipped, with the probe's reason, where io_uring is unusable.
#include <atomic>
#include <thread>
#include <utility>
#include <vector>

#include "core/backend/io_uring/uring_impl.hpp"
#include "uring_test_support.hpp"

namespace {

using namespace uring_test;
using UringBackend = UringFixture;

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

// A stream's fd is a registered file while attached (its receives and
// sends go with IOSQE_FIXED_FILE), from the first submit that carries its
// requests on; detach() clears its slot before the caller's close(), with
// no poll after it: the peer sees the hang-up at once.
TEST_F(UringBackend, AStreamIsARegisteredFileUntilDetached) {
  auto& u = static_cast<corio::detail::uring::UringBackend&>(b());
  Pair p;
  b().attach(p.a);
  EXPECT_EQ(u.fixed_files(), 0u) << "registered before anything was submitted";
  start_receiving(b(), p.a);
  pump(b(), -1, 1);
  ASSERT_EQ(u.fixed_files(), 1u);
  ASSERT_EQ(::write(p.b, "ping", 4), 4);
  EXPECT_EQ(recv_all(b(), p.a, 4), "ping");
  EXPECT_EQ(b().try_send(p.a, "pong"), 4);
  pump(b());
  EXPECT_EQ(p.peer_read(4), "pong");
  b().detach(p.a);
  EXPECT_EQ(u.fixed_files(), 0u);
  ::close(std::exchange(p.a, -1));
  char c = 0;
  EXPECT_EQ(::read(p.b, &c, 1), 0) << "the file is still open (a read times out after 10 s)";
}

TEST_F(UringBackend, ResetIsAStickyError) {
  SocketAddress addr;
  const int lfd = tcp_listener(&addr);
  const int client = tcp_client(addr);
  const int server = ::accept4(lfd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  ASSERT_GE(server, 0);
  b().attach(server);
  std::array<char, 16> buf{};
  EXPECT_EQ(b().try_recv(server, buf, true), -EAGAIN);
  b().arm(server, false);
  linger lg{1, 0};  // close() sends RST
  ::setsockopt(client, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
  ::close(client);
  ASSERT_TRUE(wait_for(b(), server, false));
  EXPECT_EQ(b().try_recv(server, buf, true), -ECONNRESET);
  EXPECT_EQ(b().try_recv(server, buf, true), -ECONNRESET);
  // A send to the dead connection fails, at once or in the ring; from then
  // on try_send says so.
  long r = b().try_send(server, "x");
  for (int i = 0; i < 10 && r >= 0; ++i) {
    pump(b());
    r = b().try_send(server, "y");
  }
  EXPECT_TRUE(r == -EPIPE || r == -ECONNRESET) << r;
  EXPECT_EQ(b().try_send(server, "z"), r);
  b().detach(server);
  ::close(server);
  ::close(lfd);
}

// Writes to pair.b until the backend stops draining pair.a (whose reader
// does not read); returns the bytes written, pattern(n) in order.
std::size_t flood(IoBackend& b, const Pair& pair) {
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
  start_receiving(b(), flooded.a);
  start_receiving(b(), other.a);
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
    start_receiving(b(), idle.back()->a);
    flood(b(), *idle.back());
  }
  Pair active;
  b().attach(active.a);
  start_receiving(b(), active.a);
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
  start_receiving(b(), p.a);
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
    start_receiving(b(), old_pair.a);
    pump(b(), -1, 1);  // the multishot recv is in the ring
    ASSERT_EQ(::write(old_pair.b, "old", 3), 3);
    b().detach(old_pair.a);
    Pair fresh;
    reuse_number(old_pair, fresh);
    b().attach(fresh.a);
    start_receiving(b(), fresh.a);
    ASSERT_EQ(::write(fresh.b, "new", 3), 3);
    ASSERT_EQ(recv_all(b(), fresh.a, 3), "new") << "round " << round;
    b().detach(fresh.a);
  }
}

// An fd closed without detach() (its Socket closed where the loop could not
// be told: another thread) and its number reused: attach() finds the old
// entry, whose queued sends belong to a file that is gone. They are
// dropped, never sent on the new fd.
TEST_F(UringBackend, SendsOwedByAnFdClosedWithoutDetachNeverReachTheNext) {
  Pair old_pair;
  b().attach(old_pair.a);
  ASSERT_EQ(b().try_send(old_pair.a, "old"), 3);  // queued for the next poll
  Pair fresh;
  reuse_number(old_pair, fresh);
  b().attach(fresh.a);
  ASSERT_EQ(b().try_send(fresh.a, "new"), 3);
  pump(b());
  EXPECT_EQ(fresh.peer_read(3), "new");
  b().detach(fresh.a);
}

}  // namespace
