// open_connection's Happy Eyeballs race (connect_staggered) over given
// addresses: a stalled first address, a refused one, all failing; and the
// options (local address; TLS options in tls_test.cpp).
#include "net/net_support.hpp"

namespace corio_net_test {
namespace {

using corio::ConnectOptions;
using corio::detail::connect_staggered;

// The first address hangs: the second attempt starts after the delay and wins.
Coro<void> stalled_first(bool* skipped) {
  std::optional<StalledListener> stalled = co_await stalled_listener();
  if (!stalled) {
    *skipped = true;
    co_return;
  }
  Socket good = raw_listener();
  ConnectOptions opts;
  opts.happy_eyeballs_delay = 50ms;
  std::vector<SocketAddress> addresses{stalled->address(), good.local_address()};
  Socket sock = co_await connect_staggered(std::move(addresses), opts);
  EXPECT_EQ(sock.peer_address().port(), good.local_address().port());
}

TEST(HappyEyeballs, NextAttemptStartsAfterTheDelay) {
  bool skipped = false;
  run_bounded(stalled_first(&skipped));
  if (skipped) GTEST_SKIP() << "this kernel completes connections past a full backlog";
}

SocketAddress refusing_address() {
  Socket lst = raw_listener();
  return lst.local_address();  // closed on return: nobody listens there
}

// A failed attempt starts the next one at once, not after the delay.
Coro<void> refused_first() {
  Socket good = raw_listener();
  ConnectOptions opts;
  opts.happy_eyeballs_delay = 60s;
  std::vector<SocketAddress> addresses{refusing_address(), good.local_address()};
  Coro<Socket> race = connect_staggered(std::move(addresses), opts);
  Socket sock = co_await corio::wait_for(std::move(race), 5s);
  EXPECT_EQ(sock.peer_address().port(), good.local_address().port());
}

TEST(HappyEyeballs, FailureStartsTheNextAttemptAtOnce) { run_bounded(refused_first()); }

Coro<void> all_refused() {
  std::vector<SocketAddress> addresses{refusing_address(), refusing_address(), refusing_address()};
  ConnectOptions opts;
  opts.happy_eyeballs_delay = 1ms;
  EXPECT_EQ(co_await errno_of(connect_staggered(std::move(addresses), opts)), ECONNREFUSED);
}

TEST(HappyEyeballs, AllFailingRaisesTheFirstError) { run_bounded(all_refused()); }

Coro<void> local_address() {
  Socket lst = raw_listener();
  ConnectOptions opts;
  opts.local_address = SocketAddress::ip("127.0.0.1", 0);
  auto [reader, writer] = co_await corio::open_connection("127.0.0.1", lst.local_address().port(), opts);
  EXPECT_EQ(writer.sockname().host(), "127.0.0.1");
  if (has_ipv6_loopback()) {
    opts.local_address = SocketAddress::ip("::1", 0);  // no IPv4 address is reachable from it
    EXPECT_EQ(co_await errno_of(corio::open_connection("127.0.0.1", lst.local_address().port(), opts)),
              EAFNOSUPPORT);
  }
}

TEST(OpenConnection, LocalAddressIsBoundFirst) { run_bounded(local_address()); }

Coro<void> by_name() {
  Server server = co_await echo_server();
  auto [reader, writer] = co_await corio::open_connection("localhost", server.port());
  EXPECT_EQ(co_await echo_round_trip(reader, writer, "by name\n"), "by name\n");
}

TEST(OpenConnection, ResolvesAHostName) { run_bounded(by_name()); }

}  // namespace
}  // namespace corio_net_test
