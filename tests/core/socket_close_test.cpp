// Closing a socket lets go of its file at once, whatever the backend has in
// flight on it (io_uring: a multishot receive or accept, a send to a peer
// that does not read): the peer sees the hang-up or the reset, and a
// listener's port is free again, before anything else runs. The loop need
// not be running: a socket closed between two run_until_complete calls does
// the same.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <system_error>
#include <utility>

#include "core/test_support.hpp"

namespace corio_test {
namespace {

using corio::Coro;
using corio::Socket;
using corio::SocketAddress;

// Whether the other end of fd's connection is closed: waits up to 5 s (a
// bound for a loaded machine, not a timing assertion) for a hang-up or a
// reset, which poll() reports even while unread bytes are queued.
bool peer_closed(int fd) {
  pollfd p{fd, POLLRDHUP, 0};
  return ::poll(&p, 1, 5000) == 1 && (p.revents & (POLLHUP | POLLERR | POLLRDHUP)) != 0;
}

// SO_REUSEADDR: a closed connection's TIME_WAIT does not keep the port taken.
Socket tcp_listener() {
  Socket s = Socket::create(AF_INET, SOCK_STREAM);
  s.set_option(SOL_SOCKET, SO_REUSEADDR, 1);
  s.bind(SocketAddress::ip("127.0.0.1", 0));
  s.listen();
  return s;
}

// A loopback connection (ours, the peer's) with small buffers, so that a
// few hundred KiB the peer does not read cannot all leave our side.
std::pair<Socket, Socket> small_tcp_pair() {
  Socket lst = tcp_listener();
  Socket peer = Socket::create(AF_INET, SOCK_STREAM);
  peer.set_option(SOL_SOCKET, SO_RCVBUF, 4096);  // before connect: the window it announces
  const SocketAddress to = lst.local_address();
  if (::connect(peer.fd(), to.data(), to.size()) != 0 && errno != EINPROGRESS) {
    throw std::system_error(errno, std::generic_category(), "connect");
  }
  pollfd p{lst.fd(), POLLIN, 0};
  ::poll(&p, 1, 5000);
  Socket ours(::accept4(lst.fd(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
  ours.set_option(SOL_SOCKET, SO_SNDBUF, 4096);
  return {std::move(ours), std::move(peer)};
}

// ---- between two runs -----------------------------------------------------------------

TEST(SocketClose, AStreamClosedBetweenTwoRunsHangsUpAtOnce) {
  corio::EventLoop loop;
  auto [ours, peer] = small_tcp_pair();
  ASSERT_EQ(::send(peer.fd(), "x", 1, MSG_NOSIGNAL), 1);
  // A read through the loop: on io_uring, its multishot receive stays armed.
  EXPECT_EQ(loop.run_until_complete(loop.sock_recv(ours, 16)), "x");
  ours.close();  // no loop runs
  EXPECT_TRUE(peer_closed(peer.fd())) << "the file is still open";
  loop.close();
}

Coro<void> accept_one(Socket* lst) {
  corio::EventLoop& loop = corio::get_running_loop();
  Socket client = Socket::create(AF_INET, SOCK_STREAM);
  co_await loop.sock_connect(client, lst->local_address());
  (void)co_await loop.sock_accept(*lst);
}

TEST(SocketClose, AListenerClosedBetweenTwoRunsFreesItsPortAtOnce) {
  corio::EventLoop loop;
  Socket lst = tcp_listener();
  const SocketAddress addr = lst.local_address();
  // On io_uring, the accept leaves a multishot accept armed on the listener.
  loop.run_until_complete(accept_one(&lst));
  lst.close();  // no loop runs
  Socket again = Socket::create(AF_INET, SOCK_STREAM);
  again.set_option(SOL_SOCKET, SO_REUSEADDR, 1);
  EXPECT_NO_THROW({
    again.bind(addr);
    again.listen();
  }) << "the port is still taken";
  loop.close();
}

// ---- sends in flight ------------------------------------------------------------------

// A server giving up on a client that does not read closes with SO_LINGER 0:
// the bytes still on their way are dropped and the client sees a reset at
// once, not once they are gone (here: never).
Coro<void> reset_with_bytes_on_their_way() {
  corio::EventLoop& loop = corio::get_running_loop();
  auto [ours, peer] = small_tcp_pair();
  auto send_until_closed = [](Socket* s) -> Coro<void> {
    try {
      co_await corio::get_running_loop().sock_sendall(*s, std::string(1 << 20, 'x'));
      ADD_FAILURE() << "a peer that does not read took 1 MiB";
    } catch (const std::system_error&) {
      // closed under it
    }
  };
  corio::Task<void> sending = corio::create_task(send_until_closed, &ours);
  co_await loop.wait_readable(peer);  // the first bytes are through: the rest wait
  const ::linger reset{1, 0};
  EXPECT_EQ(::setsockopt(ours.fd(), SOL_SOCKET, SO_LINGER, &reset, sizeof reset), 0);
  ours.close();
  EXPECT_TRUE(peer_closed(peer.fd())) << "no reset: the file is still open";
  co_await sending;
}

TEST(SocketClose, ALingerZeroCloseResetsAtOnceWithBytesOnTheirWay) {
  corio::run(reset_with_bytes_on_their_way());
}

}  // namespace
}  // namespace corio_test
