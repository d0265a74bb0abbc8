// Sockets and the loop's sock_* operations on real loopback sockets: TCP over
// IPv4 and IPv6, Unix, UDP; waiting without blocking the loop; partial
// writes; cancellation of a waiting operation; closing under a waiter; the
// errors (refused, EPIPE without SIGPIPE) and address parsing.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <system_error>

#include <corio/timeout.hpp>

#include "core/test_support.hpp"

namespace corio_test {
namespace {

using corio::Coro;
using corio::Socket;
using corio::SocketAddress;
using corio::Task;
using namespace std::chrono_literals;

// A listening TCP socket on an ephemeral loopback port.
Socket listener(const char* host = "127.0.0.1") {
  SocketAddress addr = SocketAddress::ip(host, 0);
  Socket s = Socket::create(addr.family(), SOCK_STREAM);
  s.set_option(SOL_SOCKET, SO_REUSEADDR, 1);
  s.bind(addr);
  s.listen();
  return s;
}

// A connected pair (client, server side) through a real listener.
struct Pair {
  Socket client, server;
};

Coro<Pair> connected_pair(const char* host = "127.0.0.1") {
  corio::EventLoop& loop = corio::get_running_loop();
  Socket lst = listener(host);
  Pair p;
  p.client = Socket::create(lst.local_address().family(), SOCK_STREAM);
  co_await loop.sock_connect(p.client, lst.local_address());
  auto accepted = co_await loop.sock_accept(lst);
  p.server = std::move(accepted.first);
  EXPECT_EQ(accepted.second.port(), p.client.local_address().port());
  co_return p;
}

int error_code(const std::system_error& e) { return e.code().value(); }

// ---- TCP -----------------------------------------------------------------------------

Coro<void> echo_once(const char* host) {
  corio::EventLoop& loop = corio::get_running_loop();
  Pair p = co_await connected_pair(host);
  co_await loop.sock_sendall(p.client, "ping");
  std::string got = co_await loop.sock_recv(p.server, 100);
  EXPECT_EQ(got, "ping");
  const std::string reply = got + "/pong";
  co_await loop.sock_sendall(p.server, reply);
  EXPECT_EQ(co_await loop.sock_recv(p.client, 100), "ping/pong");
  p.client.close();
  EXPECT_EQ(co_await loop.sock_recv(p.server, 100), "") << "EOF reads as empty";
}

TEST(Socket, TcpEchoOverIpv4) { corio::run(echo_once("127.0.0.1")); }

TEST(Socket, TcpEchoOverIpv6) {
  try {
    listener("::1");
  } catch (const std::system_error&) {
    GTEST_SKIP() << "no IPv6 loopback here";
  }
  corio::run(echo_once("::1"));
}

// A read shorter than its buffer lets the next read wait for an edge instead
// of trying recv first. The peer's FIN may already have come with that data
// (no later edge will announce it) or arrive before the next poll: either
// way the next read must see EOF, not wait forever.
Coro<void> short_read_then_eof(bool fin_before_first_poll) {
  corio::EventLoop& loop = corio::get_running_loop();
  Pair p = co_await connected_pair();
  co_await loop.sock_sendall(p.client, "x");  // the server socket is now watched:
  EXPECT_EQ(co_await loop.sock_recv(p.server, 100), "x");  // no fresh-watch event
  co_await loop.sock_sendall(p.client, "abc");
  if (fin_before_first_poll) p.client.shutdown(SHUT_WR);
  co_await corio::sleep(5ms);  // the loop polls: the data's edge is reported
  if (!fin_before_first_poll) p.client.shutdown(SHUT_WR);
  EXPECT_EQ(co_await loop.sock_recv(p.server, 100), "abc");
  const std::string eof = co_await corio::wait_for(loop.sock_recv(p.server, 100), 10s);
  EXPECT_EQ(eof, "");
}

TEST(Socket, ShortReadWithTheFinAlreadyReportedStillSeesEof) {
  corio::run(short_read_then_eof(true));
}

TEST(Socket, ShortReadWithTheFinPendingInThePollerStillSeesEof) {
  corio::run(short_read_then_eof(false));
}

// After a short read, data that comes later wakes the waiting reader.
Coro<void> short_read_then_more() {
  corio::EventLoop& loop = corio::get_running_loop();
  Pair p = co_await connected_pair();
  for (int i = 0; i < 50; ++i) {
    const std::string msg = "message " + std::to_string(i);
    co_await loop.sock_sendall(p.client, msg);
    EXPECT_EQ(co_await corio::wait_for(loop.sock_recv(p.server, 4096), 10s), msg);
  }
}

TEST(Socket, ShortReadsThenLaterDataAreAllDelivered) { corio::run(short_read_then_more()); }

// A receiver waits; another task sends later; the loop keeps running both.
Coro<void> recv_waits(Pair* p, std::string* got) {
  *got = co_await corio::get_running_loop().sock_recv(p->server, 100);
}

Coro<void> wait_without_blocking() {
  corio::EventLoop& loop = corio::get_running_loop();
  Pair p = co_await connected_pair();
  std::string got;
  Task<void> reader = corio::create_task(recv_waits(&p, &got));
  for (int i = 0; i < 5; ++i) co_await corio::sleep(1ms);  // the loop ticks meanwhile
  EXPECT_FALSE(reader.done());
  co_await loop.sock_sendall(p.client, "late");
  co_await reader;
  EXPECT_EQ(got, "late");
}

TEST(Socket, RecvWaitsWithoutBlockingTheLoop) { corio::run(wait_without_blocking()); }

// 8 MiB through a socket buffer of a few hundred KiB: sendall waits for the
// reader many times, and every byte arrives in order.
Coro<void> drain_all(Socket* s, std::size_t* total, unsigned* checksum) {
  corio::EventLoop& loop = corio::get_running_loop();
  char buf[65536];
  for (;;) {
    std::size_t n = co_await loop.sock_recv_into(*s, std::span<char>(buf));
    if (n == 0) break;
    for (std::size_t i = 0; i < n; ++i) *checksum = *checksum * 31 + static_cast<unsigned char>(buf[i]);
    *total += n;
  }
}

Coro<void> big_sendall() {
  corio::EventLoop& loop = corio::get_running_loop();
  Pair p = co_await connected_pair();
  std::string data(8 << 20, '\0');
  unsigned expected = 0;
  for (std::size_t i = 0; i < data.size(); ++i) {
    data[i] = static_cast<char>(i * 7 + i / 4096);
    expected = expected * 31 + static_cast<unsigned char>(data[i]);
  }
  std::size_t total = 0;
  unsigned checksum = 0;
  Task<void> reader = corio::create_task(drain_all(&p.server, &total, &checksum));
  co_await loop.sock_sendall(p.client, data);
  p.client.shutdown(SHUT_WR);
  co_await reader;
  EXPECT_EQ(total, data.size());
  EXPECT_EQ(checksum, expected);
}

TEST(Socket, SendallOfEightMegabytesArrivesWhole) { corio::run(big_sendall()); }

Coro<void> refused() {
  Socket lst = listener();
  SocketAddress addr = lst.local_address();
  lst.close();  // nobody listens there now
  Socket s = Socket::create(AF_INET, SOCK_STREAM);
  try {
    co_await corio::get_running_loop().sock_connect(s, addr);
    ADD_FAILURE() << "connected to a closed port";
  } catch (const std::system_error& e) {
    EXPECT_EQ(error_code(e), ECONNREFUSED) << e.what();
  }
}

TEST(Socket, ConnectionRefusedKeepsTheErrno) { corio::run(refused()); }

// Writing to a peer that is gone: EPIPE or ECONNRESET, and no SIGPIPE kills
// the process.
Coro<void> write_to_closed_peer() {
  corio::EventLoop& loop = corio::get_running_loop();
  Pair p = co_await connected_pair();
  p.server.close();
  std::string chunk(1 << 16, 'x');
  int err = 0;
  try {
    for (int i = 0; i < 100; ++i) co_await loop.sock_sendall(p.client, chunk);
  } catch (const std::system_error& e) {
    err = error_code(e);
  }
  EXPECT_TRUE(err == EPIPE || err == ECONNRESET) << "errno " << err;
}

TEST(Socket, WritingToAClosedPeerIsAnErrorNotASignal) { corio::run(write_to_closed_peer()); }

// ---- cancellation and closing --------------------------------------------------------------

Coro<void> cancel_waiting_recv() {
  corio::EventLoop& loop = corio::get_running_loop();
  Pair p = co_await connected_pair();
  std::string got;
  Task<void> reader = corio::create_task(recv_waits(&p, &got));
  co_await corio::sleep(1ms);
  reader.cancel();
  try {
    co_await reader;
    ADD_FAILURE() << "expected CancelledError";
  } catch (const corio::CancelledError&) {
  }
  // The socket is still usable, by another reader.
  co_await loop.sock_sendall(p.client, "after");
  EXPECT_EQ(co_await loop.sock_recv(p.server, 100), "after");
}

TEST(Socket, CancellingAWaitingRecvLeavesTheSocketUsable) { corio::run(cancel_waiting_recv()); }

Coro<void> capture_recv_error(Socket* s, int* err) {
  try {
    co_await corio::get_running_loop().sock_recv(*s, 100);
  } catch (const std::system_error& e) {
    *err = error_code(e);
  }
}

Coro<void> close_under_waiter() {
  Pair p = co_await connected_pair();
  int err = 0;
  Task<void> reader = corio::create_task(capture_recv_error(&p.server, &err));
  co_await corio::sleep(1ms);
  p.server.close();
  co_await reader;
  EXPECT_EQ(err, EBADF);
}

TEST(Socket, ClosingUnderAWaiterWakesItWithEbadf) { corio::run(close_under_waiter()); }

Coro<void> two_readers() {
  Pair p = co_await connected_pair();
  std::string got;
  Task<void> first = corio::create_task(recv_waits(&p, &got));
  co_await corio::sleep(1ms);
  EXPECT_THROW(co_await corio::get_running_loop().sock_recv(p.server, 10), corio::RuntimeError);
  first.cancel();
  try {
    co_await first;
  } catch (const corio::CancelledError&) {
  }
}

TEST(Socket, TwoTasksReadingOneSocketIsAnError) { corio::run(two_readers()); }

// ---- Unix and UDP --------------------------------------------------------------------------

Coro<void> unix_echo(std::string path) {
  corio::EventLoop& loop = corio::get_running_loop();
  SocketAddress addr = SocketAddress::unix_path(path);
  Socket lst = Socket::create(AF_UNIX, SOCK_STREAM);
  lst.bind(addr);
  lst.listen();
  Socket c = Socket::create(AF_UNIX, SOCK_STREAM);
  co_await loop.sock_connect(c, addr);
  auto [s, peer] = co_await loop.sock_accept(lst);
  co_await loop.sock_sendall(c, "over unix");
  EXPECT_EQ(co_await loop.sock_recv(s, 100), "over unix");
  EXPECT_EQ(lst.local_address().to_string(), path);
}

TEST(Socket, UnixStreamSocket) {
  std::string path = "/tmp/corio-test-" + std::to_string(::getpid()) + ".sock";
  ::unlink(path.c_str());
  corio::run(unix_echo(path));
  ::unlink(path.c_str());
}

Coro<void> udp_round_trip() {
  corio::EventLoop& loop = corio::get_running_loop();
  Socket a = Socket::create(AF_INET, SOCK_DGRAM);
  Socket b = Socket::create(AF_INET, SOCK_DGRAM);
  a.bind(SocketAddress::ip("127.0.0.1", 0));
  b.bind(SocketAddress::ip("127.0.0.1", 0));
  EXPECT_EQ(co_await loop.sock_sendto(a, "datagram", b.local_address()), 8u);
  auto [data, from] = co_await loop.sock_recvfrom(b, 100);
  EXPECT_EQ(data, "datagram");
  EXPECT_EQ(from.port(), a.local_address().port());
}

TEST(Socket, UdpSendtoRecvfrom) { corio::run(udp_round_trip()); }

// ---- addresses -----------------------------------------------------------------------------

TEST(SocketAddress, NumericAddressesAndTheirText) {
  EXPECT_EQ(SocketAddress::ip("127.0.0.1", 8080).to_string(), "127.0.0.1:8080");
  EXPECT_EQ(SocketAddress::ip("::1", 443).to_string(), "[::1]:443");
  EXPECT_EQ(SocketAddress::ip("::1", 443).family(), AF_INET6);
  EXPECT_EQ(SocketAddress::ip("10.1.2.3", 1).host(), "10.1.2.3");
  EXPECT_THROW(SocketAddress::ip("localhost", 80), corio::ValueError);
  EXPECT_THROW(SocketAddress::ip("1.2.3.256", 80), corio::ValueError);
  EXPECT_EQ(SocketAddress::unix_path("/tmp/x.sock").to_string(), "/tmp/x.sock");
  EXPECT_THROW(SocketAddress::unix_path(std::string(200, 'a')), corio::ValueError);
  EXPECT_THROW(SocketAddress::unix_path(""), corio::ValueError);
}

TEST(Socket, OperationsOnAClosedSocketFail) {
  auto op = []() -> Coro<int> {
    Socket s;
    try {
      co_await corio::get_running_loop().wait_readable(s);
    } catch (const std::system_error& e) {
      co_return e.code().value();
    }
    co_return 0;
  };
  EXPECT_EQ(corio::run(op()), EBADF);
}

}  // namespace
}  // namespace corio_test
