// The io_uring backend's lent receive buffers (try_recv_lent/consume_lent, peek),
// driven through the IoBackend seam.
// Skipped, with the probe's reason, where io_uring is unusable.
#include <algorithm>
#include <thread>

#include "uring_test_support.hpp"

namespace {

using namespace uring_test;
using UringLend = UringFixture;

// What a reader sees when it borrows: the bytes in place, or the error.
std::string lend(IoBackend& b, int fd, long* rc) {
  const char* data = nullptr;
  *rc = b.try_recv_lent(fd, &data);
  return *rc > 0 ? std::string(data, static_cast<std::size_t>(*rc)) : std::string();
}

TEST_F(UringLend, LentBytesStayUntilTakenAndCopiesSeeTheRest) {
  Pair p;
  b().attach(p.a);
  long rc = 0;
  lend(b(), p.a, &rc);
  EXPECT_EQ(rc, -EAGAIN);
  b().arm(p.a, false);
  ASSERT_EQ(::write(p.b, "hello world", 11), 11);
  ASSERT_TRUE(wait_for(b(), p.a, false));

  // A read that borrowed and then ended without taking (cancelled, or it
  // threw making its string) leaves every byte for the next one.
  EXPECT_EQ(lend(b(), p.a, &rc), "hello world");
  EXPECT_EQ(lend(b(), p.a, &rc), "hello world");
  b().consume_lent(p.a, 6);
  EXPECT_EQ(lend(b(), p.a, &rc), "world");
  std::array<char, 16> buf{};
  ASSERT_EQ(b().try_recv(p.a, buf, true), 5) << "a copying read takes the rest";
  EXPECT_EQ(std::string(buf.data(), 5), "world");
  lend(b(), p.a, &rc);
  EXPECT_EQ(rc, -EAGAIN);

  ::shutdown(p.b, SHUT_WR);
  b().arm(p.a, false);
  ASSERT_TRUE(wait_for(b(), p.a, false));
  lend(b(), p.a, &rc);
  EXPECT_EQ(rc, 0) << "EOF";
  b().detach(p.a);
}

// Every byte of a stream larger than one buffer, in order, through lends
// taken in odd-sized bites.
TEST_F(UringLend, LendsCoverALongStreamInOrder) {
  constexpr std::size_t kTotal = 300 * 1024;
  const std::string data = pattern(kTotal);
  Pair p;
  b().attach(p.a);
  start_receiving(b(), p.a);
  std::thread writer([&] { (void)!::write(p.b, data.data(), data.size()); });
  std::string got;
  while (got.size() < kTotal) {
    long rc = 0;
    const std::string lent = lend(b(), p.a, &rc);
    if (rc == -EAGAIN) {
      b().arm(p.a, false);
      if (!wait_for(b(), p.a, false)) break;
      continue;
    }
    ASSERT_GT(rc, 0);
    const std::size_t take = std::min<std::size_t>(lent.size(), 1000);
    got.append(lent, 0, take);
    b().consume_lent(p.a, take);
  }
  writer.join();
  EXPECT_EQ(got.size(), kTotal);
  EXPECT_TRUE(got == data) << "bytes lost or out of order";
  b().detach(p.a);
}

// peek() answers for the bytes and the EOF the receive already took out of
// the socket, and takes none of them.
TEST_F(UringLend, PeekSeesWhatTheReceiveTookAndTakesNothing) {
  Pair p;
  b().attach(p.a);
  EXPECT_EQ(b().peek(p.a), -EAGAIN);
  start_receiving(b(), p.a);
  ASSERT_EQ(::write(p.b, "abc", 3), 3);
  ASSERT_TRUE(wait_for(b(), p.a, false));
  char byte;
  EXPECT_EQ(::recv(p.a, &byte, 1, MSG_PEEK | MSG_DONTWAIT), -1) << "the receive took them out of the socket";
  EXPECT_EQ(b().peek(p.a), 3);
  std::array<char, 8> buf{};
  EXPECT_EQ(b().try_recv(p.a, buf, true), 3);

  ::shutdown(p.b, SHUT_WR);
  b().arm(p.a, false);
  ASSERT_TRUE(wait_for(b(), p.a, false));
  EXPECT_EQ(b().peek(p.a), 0) << "EOF";
  b().detach(p.a);
}

TEST_F(UringLend, EpollAndNonStreamFdsLendNothing) {
  const auto epoll = corio::detail::make_epoll_backend();
  Pair p;
  epoll->attach(p.a);
  const char* data = nullptr;
  EXPECT_EQ(epoll->try_recv_lent(p.a, &data), -EOPNOTSUPP);
  epoll->detach(p.a);

  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
  b().attach(fds[0]);
  EXPECT_EQ(b().try_recv_lent(fds[0], &data), -EOPNOTSUPP);
  b().detach(fds[0]);
  ::close(fds[0]);
  ::close(fds[1]);
}

}  // namespace
