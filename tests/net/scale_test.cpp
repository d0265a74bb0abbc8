// A server under load and out of descriptors: 1000 concurrent echo
// connections, and EMFILE on accept (the server pauses, keeps serving what
// it has, and recovers once descriptors free up).
#include <fcntl.h>

#include "net/net_support.hpp"

namespace corio_net_test {
namespace {

constexpr int kClients = 1000;

Coro<void> one_client(std::uint16_t port, int i, int* echoed) {
  auto [reader, writer] = co_await corio::open_connection("127.0.0.1", port);
  const std::string line = "client " + std::to_string(i) + "\n";
  if (co_await echo_round_trip(reader, writer, line) == line) ++*echoed;
  writer.close();
  co_await writer.wait_closed();
}

Coro<void> thousand_clients() {
  corio::ServerOptions opts;
  opts.backlog = kClients;  // all connect at once: no SYN dropped and retried after 1 s
  Server server = co_await corio::start_server(echo_lines, "127.0.0.1", 0, opts);
  int echoed = 0;
  std::vector<Coro<void>> clients;
  for (int i = 0; i < kClients; ++i) clients.push_back(one_client(server.port(), i, &echoed));
  co_await corio::gather(std::move(clients));
  EXPECT_EQ(echoed, kClients);
  server.close();
  co_await server.wait_closed();
}

TEST(ServerScale, ThousandConcurrentConnections) {
  FdLimit limit;
  const rlim_t need = 2 * kClients + 200;  // both ends of each connection, plus the rest
  if (limit.soft() < need) {
    if (limit.hard() < need || !limit.set_soft(limit.hard())) {
      GTEST_SKIP() << "RLIMIT_NOFILE hard limit " << limit.hard() << " < " << need;
    }
  }
  run_bounded(thousand_clients(), 60s);
}

// The lowest descriptor not in use: with the soft limit set to it, no new
// descriptor can be made.
int lowest_free_fd() {
  const int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ::close(fd);
  return fd;
}

Coro<void> out_of_descriptors(FdLimit* limit, Reports* reports) {
  reports->install();
  corio::EventLoop& loop = corio::get_running_loop();
  Server server = co_await echo_server();
  auto [reader, writer] = co_await corio::open_connection("127.0.0.1", server.port());
  EXPECT_EQ(co_await echo_round_trip(reader, writer, "a1\n"), "a1\n");
  Socket late = Socket::create(AF_INET, SOCK_STREAM);  // made while it still can be
  std::vector<int> spare;
  for (int i = 0; i < 4; ++i) spare.push_back(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  CO_ASSERT(limit->set_soft(static_cast<rlim_t>(lowest_free_fd())));

  co_await loop.sock_connect(late, SocketAddress::ip("127.0.0.1", server.port()));
  while (reports->messages.empty()) co_await corio::sleep(5ms);  // accept() hit EMFILE
  EXPECT_NE(reports->messages[0].find("out of system resource"), std::string::npos)
      << reports->messages[0];
  EXPECT_EQ(co_await echo_round_trip(reader, writer, "a2\n"), "a2\n")
      << "the existing connection is still served";

  for (int fd : spare) ::close(fd);  // four descriptors free: the next retry accepts
  co_await loop.sock_sendall(late, "late\n");
  EXPECT_EQ(co_await loop.sock_recv(late, 100), "late\n");
  EXPECT_EQ(reports->messages.size(), 1u) << "reported once per episode";
  server.close();
}

TEST(ServerScale, AcceptSurvivesEmfileAndRecovers) {
  FdLimit limit;  // restored when the test ends, however it ends
  Reports reports;
  run_bounded(out_of_descriptors(&limit, &reports));
}

}  // namespace
}  // namespace corio_net_test
