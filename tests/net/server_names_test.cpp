// An accepted connection's names as its handler sees them (peername and
// sockname): the server takes the peer from the accept and the local
// address from its listener where that is the connection's, and asks the
// socket otherwise (a wildcard listener, a Unix one). Each must be what the
// client sees from its end, on either backend (CORIO_BACKEND).
#include "net/net_support.hpp"

namespace corio_net_test {
namespace {

// Tells the client the names it sees, "peer local\n", and closes.
Coro<void> tell_names(StreamReader reader, StreamWriter writer) {
  writer.write(writer.get_extra_info("peername") + " " + writer.get_extra_info("sockname") + "\n");
  co_await writer.drain();
  (void)co_await reader.read();  // the client's EOF
  writer.close();
  co_await writer.wait_closed();
}

// The names a server on `listen_host` sees of a connection to `connect_host`.
Coro<void> names_match(const char* listen_host, const char* connect_host) {
  Server server = co_await corio::start_server(tell_names, listen_host, 0);
  for (int i = 0; i < 3; ++i) {  // the second and third: nothing left of the first's
    auto [reader, writer] = co_await corio::open_connection(connect_host, server.port());
    const std::string told = co_await reader.readline();
    const std::string local = writer.get_extra_info("sockname");
    EXPECT_EQ(told, local + " " + writer.get_extra_info("peername") + "\n")
        << "listening on '" << listen_host << "'";
    EXPECT_EQ(writer.peername().host(), connect_host);
    writer.close();
    co_await writer.wait_closed();
  }
  server.close();
  co_await server.wait_closed();
}

TEST(ServerNames, AListenerOnOneAddress) { run_bounded(names_match("127.0.0.1", "127.0.0.1")); }

// Every 127/8 address is loopback: the connection's local address is the
// one the client reached, not the listener's 0.0.0.0.
TEST(ServerNames, AWildcardListenerAsksTheConnection) {
  run_bounded(names_match("0.0.0.0", "127.0.0.2"));
}

TEST(ServerNames, AnIpv6Listener) {
  if (!has_ipv6_loopback()) GTEST_SKIP() << "no IPv6 loopback here";
  run_bounded(names_match("::1", "::1"));
}

Coro<void> unix_names(std::string path) {
  Server server = co_await corio::start_unix_server(tell_names, path);
  auto [reader, writer] = co_await corio::open_unix_connection(path);
  EXPECT_EQ(co_await reader.readline(), " " + path + "\n") << "an unnamed peer, the bound path";
  writer.close();
  co_await writer.wait_closed();
  server.close();
  co_await server.wait_closed();
}

TEST(ServerNames, AUnixListener) {
  const std::string path = unix_path("names");
  run_bounded(unix_names(path));
  ::unlink(path.c_str());
}

}  // namespace
}  // namespace corio_net_test
