// DatagramSocket over loopback: IPv4 and IPv6 round trips, connected sockets,
// a receiver waiting without blocking the loop, and ECONNREFUSED from ICMP
// on a connected socket.
#include <gtest/gtest.h>

#include <netinet/in.h>

#include <cerrno>
#include <string>
#include <system_error>

#include <corio/datagram.hpp>
#include <corio/run.hpp>
#include <corio/sleep.hpp>

namespace {

using corio::Coro;
using corio::DatagramSocket;
using corio::SocketAddress;
using namespace std::chrono_literals;

bool has_ipv6_loopback() {
  try {
    DatagramSocket::bind(SocketAddress::ip("::1", 0));
    return true;
  } catch (const std::system_error&) {
    return false;
  }
}

Coro<void> round_trip(const char* host) {
  DatagramSocket server = DatagramSocket::bind(SocketAddress::ip(host, 0));
  DatagramSocket client = DatagramSocket::bind(SocketAddress::ip(host, 0));
  EXPECT_EQ(co_await client.sendto("ping", server.local_address()), 4u);
  auto [data, from] = co_await server.recvfrom();
  EXPECT_EQ(data, "ping");
  EXPECT_EQ(from.port(), client.local_address().port());
  co_await server.sendto("pong", from);
  auto [reply, replier] = co_await client.recvfrom();
  EXPECT_EQ(reply, "pong");
  EXPECT_EQ(replier.port(), server.local_address().port());
}

TEST(Datagram, RoundTripIpv4) { corio::run(round_trip("127.0.0.1")); }

TEST(Datagram, RoundTripIpv6) {
  if (!has_ipv6_loopback()) GTEST_SKIP() << "no IPv6 loopback here";
  corio::run(round_trip("::1"));
}

Coro<void> receive_one(DatagramSocket* s, std::string* got) { *got = co_await s->recv(); }

// A connected client; the server's reply arrives while the receiver waits
// and the loop keeps ticking.
Coro<void> connected() {
  DatagramSocket server = DatagramSocket::bind(SocketAddress::ip("127.0.0.1", 0));
  DatagramSocket client = DatagramSocket::connect(server.local_address());
  std::string got;
  corio::Task<void> receiver = corio::create_task(receive_one(&client, &got));
  for (int i = 0; i < 3; ++i) co_await corio::sleep(1ms);
  EXPECT_FALSE(receiver.done());
  co_await client.send("hello");
  auto [data, from] = co_await server.recvfrom();
  EXPECT_EQ(data, "hello");
  co_await server.sendto("world", from);
  co_await receiver;
  EXPECT_EQ(got, "world");
}

TEST(Datagram, ConnectedSocketSendsAndReceives) { corio::run(connected()); }

// Nothing listens on the port: the kernel's ICMP "port unreachable" comes
// back to a connected socket as ECONNREFUSED on the next receive.
Coro<int> refused() {
  DatagramSocket gone = DatagramSocket::bind(SocketAddress::ip("127.0.0.1", 0));
  SocketAddress addr = gone.local_address();
  gone.close();
  DatagramSocket client = DatagramSocket::connect(addr);
  try {
    co_await client.send("anyone?");
    co_await client.recv();
  } catch (const std::system_error& e) {
    co_return e.code().value();
  }
  co_return 0;
}

TEST(Datagram, ConnectedSocketSeesConnectionRefused) { EXPECT_EQ(corio::run(refused()), ECONNREFUSED); }

// Datagrams keep their boundaries, and a short buffer truncates one.
Coro<void> boundaries() {
  DatagramSocket server = DatagramSocket::bind(SocketAddress::ip("127.0.0.1", 0));
  DatagramSocket client = DatagramSocket::connect(server.local_address());
  co_await client.send("first");
  co_await client.send("second datagram");
  EXPECT_EQ((co_await server.recvfrom()).first, "first");
  EXPECT_EQ((co_await server.recvfrom(6)).first, "second");
}

TEST(Datagram, BoundariesAreKept) { corio::run(boundaries()); }

}  // namespace
