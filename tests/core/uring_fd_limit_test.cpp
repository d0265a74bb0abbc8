// The io_uring backend's accepts under RLIMIT_NOFILE. Its multishot accept
// reads the limit once, when it is armed, so the backend holds an fd the
// kernel gave past the current limit as EMFILE, as accept4 would have
// failed. The limit is not read per accept: once after each poll(), and
// again for an fd at or past the limit it read last. These tests pin both
// halves: a limit lowered since the last poll() holds, and one raised
// within a pass frees the fd it held.
#include <sys/resource.h>

#include <corio/detail/sanitizers.hpp>

#include "uring_test_support.hpp"

namespace {

using namespace uring_test;
using UringFdLimit = UringFixture;

// The number the next fd made takes (with `from`: the lowest free from it on).
int lowest_free_fd(int from = 0) {
  const int fd = ::fcntl(0, F_DUPFD, from);
  ::close(fd);
  return fd;
}

// RLIMIT_NOFILE's soft limit lowered for a test, restored on scope exit.
class SoftLimit {
 public:
  explicit SoftLimit(int soft) {
    ::getrlimit(RLIMIT_NOFILE, &saved_);
    rlimit tight = saved_;
    tight.rlim_cur = static_cast<rlim_t>(soft);
    EXPECT_EQ(::setrlimit(RLIMIT_NOFILE, &tight), 0);
  }
  SoftLimit(const SoftLimit&) = delete;
  SoftLimit& operator=(const SoftLimit&) = delete;
  ~SoftLimit() { restore(); }
  void restore() { ::setrlimit(RLIMIT_NOFILE, &saved_); }

 private:
  rlimit saved_{};
};

// A TCP socket, connected later: made while the limit still allows it.
int unconnected_client() { return ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0); }

void connect_to(int fd, const SocketAddress& to) {
  if (::connect(fd, to.data(), to.size()) != 0) ADD_FAILURE() << std::strerror(errno);
}

#if defined(CORIO_ASAN)
#define SKIP_UNDER_ASAN() GTEST_SKIP() << "the sanitizer runtime needs file descriptors of its own"
#else
#define SKIP_UNDER_ASAN() (void)0
#endif

// The backend read the limit at its first accept; the limit is lowered to
// the lowest free fd: the next connection, which arrives with a poll(), is
// EMFILE until the limit is back.
TEST_F(UringFdLimit, ALimitLoweredSinceTheLastPollMeansEmfile) {
  SKIP_UNDER_ASAN();
  SocketAddress addr;
  const int lfd = accepting_listener(b(), &addr);
  const int first = tcp_client(addr);
  const int fd1 = accept_one(b(), lfd);
  ASSERT_GE(fd1, 0);
  const int second = unconnected_client();
  SoftLimit tight(lowest_free_fd());
  connect_to(second, addr);
  EXPECT_EQ(accept_one(b(), lfd), -EMFILE);
  tight.restore();
  const int fd2 = accept_one(b(), lfd);
  EXPECT_GE(fd2, 0) << "the connection was lost to EMFILE";
  for (const int fd : {fd1, fd2, first, second}) {
    if (fd >= 0) ::close(fd);
  }
  b().detach(lfd);
  ::close(lfd);
}

// Two connections queued, the limit between their fds: the first is taken,
// the second held as EMFILE; the limit raised again, with no poll() in
// between, the second is taken too, as it is (an fd at or past the limit
// read last reads it again).
TEST_F(UringFdLimit, AnFdHeldPastTheLimitIsTakenOnceTheLimitIsRaised) {
  SKIP_UNDER_ASAN();
  SocketAddress addr;
  const int lfd = accepting_listener(b(), &addr);
  const int clients[2] = {tcp_client(addr), tcp_client(addr)};
  const int first = lowest_free_fd();  // the numbers the kernel gives the two accepts
  const int second = lowest_free_fd(first + 1);
  (void)wait_for(b(), lfd, false, 1);
  pump(b());  // both accepted fds queued
  SoftLimit tight(first + 1);  // the second is past it
  SocketAddress peer;
  const long fd1 = b().try_accept(lfd, &peer);
  ASSERT_EQ(fd1, first);
  EXPECT_EQ(b().try_accept(lfd, &peer), -EMFILE);
  tight.restore();
  const long fd2 = b().try_accept(lfd, &peer);
  EXPECT_EQ(fd2, second) << "held after the limit was raised, or moved under a stale one";
  for (const long fd : {fd1, fd2, static_cast<long>(clients[0]), static_cast<long>(clients[1])}) {
    if (fd >= 0) ::close(static_cast<int>(fd));
  }
  b().detach(lfd);
  ::close(lfd);
}

}  // namespace
