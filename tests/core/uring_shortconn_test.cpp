// The io_uring backend's cost per connection, kept honest: a stream's slot in
// the ring's file table is filled by an SQE in its first submit, not by a
// register syscall at attach, an accepted stream is not asked its
// SO_TYPE, and the answer owed at close goes from the fd itself, which the
// backend closes after it, not from a dup. That must keep what the syscalls
// gave: every answer arrives, then the hang-up; no fd or slot outlives its
// connection, and a number reused finds nothing of the old stream.
#include <dirent.h>

#include "core/backend/io_uring/uring_impl.hpp"
#include "uring_test_support.hpp"

namespace {

using namespace uring_test;
using UringShortConnections = UringFixture;

std::size_t open_fds() {
  std::size_t n = 0;
  DIR* d = ::opendir("/proc/self/fd");
  while (::readdir(d) != nullptr) ++n;
  ::closedir(d);
  return n;
}

// What the peer reads until EOF (or, a failure, a 10 s timeout).
std::string read_to_eof(int fd) {
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string got;
  std::array<char, 65536> buf{};
  for (ssize_t n; (n = ::read(fd, buf.data(), buf.size())) > 0;) {
    got.append(buf.data(), static_cast<std::size_t>(n));
  }
  return got;
}

corio::detail::uring::UringBackend& uring(IoBackend& b) {
  return static_cast<corio::detail::uring::UringBackend&>(b);
}

// Connection: close, 300 times: a request read, an answer queued, the
// socket let go of. The peer has the answer and the hang-up, and the server
// is left with the fds and slots it had before. `hand_over`: as
// Socket::close() does, the fd goes to the backend (detach_to_close), which
// sends the answer from it and closes it, with no dup made; else detach()
// and close(), as a Socket released and then closed, the answer going on
// from a dup.
void short_connections(IoBackend& b, bool hand_over) {
  SocketAddress addr;
  const int lfd = accepting_listener(b, &addr);
  const std::size_t fds = open_fds();
  for (int i = 0; i < 300; ++i) {
    const int client = tcp_client(addr);
    ASSERT_EQ(::write(client, "GET", 3), 3);
    const int fd = accept_one(b, lfd);
    ASSERT_GE(fd, 0) << "connection " << i;
    b.attach(fd, true);
    start_receiving(b, fd);
    ASSERT_EQ(recv_all(b, fd, 3), "GET");
    EXPECT_EQ(uring(b).fixed_files(), 1u);
    ASSERT_EQ(b.try_send(fd, "answer"), 6);  // queued: nothing has gone out
    const std::size_t open = open_fds();
    if (hand_over) {
      ASSERT_TRUE(b.detach_to_close(fd)) << "an answer owed: the backend closes the fd";
      EXPECT_EQ(open_fds(), open) << "a dup was made";
    } else {
      b.detach(fd);
      ::close(fd);
    }
    EXPECT_EQ(uring(b).fixed_files(), 0u);
    pump(b);  // the answer goes (sends owed at detach)
    ASSERT_EQ(read_to_eof(client), "answer") << "connection " << i;
    ::close(client);
  }
  pump(b);
  EXPECT_EQ(open_fds(), fds) << "an fd of a closed connection is still open";
  b.detach(lfd);
  ::close(lfd);
}

TEST_F(UringShortConnections, EveryOneIsAnsweredAndNothingLeaks) { short_connections(b(), false); }

TEST_F(UringShortConnections, AClosedStreamSendsItsAnswerFromItsOwnFd) {
  short_connections(b(), true);
}

// With nothing owed, the caller closes the fd, at once.
TEST_F(UringShortConnections, AClosedStreamOwingNothingIsTheCallersToClose) {
  Pair p;
  b().attach(p.a, true);
  start_receiving(b(), p.a);
  pump(b());
  EXPECT_FALSE(b().detach_to_close(p.a));
  ::close(std::exchange(p.a, -1));
  char c = 0;
  EXPECT_EQ(::read(p.b, &c, 1), 0) << "no EOF: the file is still open";
}

// A stream detached and closed before any poll() submitted its requests:
// no slot is filled for it then, and the number, reused by the next
// stream, names that stream's file (a stale slot would hold the old one,
// and the new stream's receive would never see its bytes).
TEST_F(UringShortConnections, AStreamClosedBeforeItsFirstSubmitTakesNoSlot) {
  pump(b());
  Pair old_pair;
  b().attach(old_pair.a);
  start_receiving(b(), old_pair.a);
  b().detach(old_pair.a);
  Pair fresh;
  reuse_number(old_pair, fresh);
  char c = 0;
  EXPECT_EQ(::read(old_pair.b, &c, 1), 0) << "the closed stream's file is still open";
  pump(b());
  EXPECT_EQ(uring(b()).fixed_files(), 0u);
  b().attach(fresh.a);
  start_receiving(b(), fresh.a);
  ASSERT_EQ(::write(fresh.b, "new", 3), 3);
  EXPECT_EQ(recv_all(b(), fresh.a, 3), "new");
  EXPECT_EQ(uring(b()).fixed_files(), 1u);
  b().detach(fresh.a);
}

}  // namespace
