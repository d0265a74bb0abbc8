// A peer that resets its connection is an ordinary end of it: the server
// reports a handler's ECONNRESET / EPIPE in debug mode only, and keeps
// reporting every other handler failure. Against the real `corio
// echo-server` too: 300 abrupt closes leave no line on its stderr and the
// server serving.
#include <signal.h>

#include <algorithm>

#include <netinet/in.h>
#include <sys/socket.h>

#include "net/net_support.hpp"
#include "net/tls_support.hpp"

namespace corio_net_test {
namespace {

// Connects to port, sends `line`, reads `expect_reply` bytes back (or up to
// the peer's close), then closes with SO_LINGER {1, 0}: the peer gets RST
// instead of FIN.
Coro<void> send_then_reset(std::uint16_t port, std::string line, std::size_t expect_reply) {
  corio::EventLoop& loop = corio::get_running_loop();
  Socket s = Socket::create(AF_INET, SOCK_STREAM);
  co_await loop.sock_connect(s, SocketAddress::ip("127.0.0.1", port));
  co_await loop.sock_sendall(s, line);
  std::string got;
  while (got.size() < expect_reply) {
    std::string piece = co_await loop.sock_recv(s, 4096);
    if (piece.empty()) break;
    got += piece;
  }
  const linger hard{1, 0};
  ::setsockopt(s.fd(), SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
}

// Each connection in turn: reset after an echo, then a handler's bug; the
// server closed and every handler ended, what was reported.
Coro<void> reports_of(Reports* reports, bool debug) {
  reports->install();
  corio::get_running_loop().set_debug(debug);
  corio::ClientConnected handler = fail_on_boom;
  Server server = co_await corio::start_server(handler, "127.0.0.1", 0);
  for (int i = 0; i < 3; ++i) co_await send_then_reset(server.port(), "hello\n", 6);
  co_await send_then_reset(server.port(), "boom\n", 1);  // waits for the server's close
  server.close();
  co_await server.wait_closed();
}

TEST(ServerPeerGone, AResetIsNoUnhandledException) {
  Reports reports;
  run_bounded(reports_of(&reports, false));
  ASSERT_EQ(reports.size(), 1u) << reports.joined();
  EXPECT_EQ(reports.messages[0], "Unhandled exception in client_connected_cb");
  EXPECT_EQ(corio_async_test::what_of(reports.exceptions[0]), "boom");
}

// Reads to EOF: over TLS, a peer gone without close_notify makes that an
// SslEofError, the handler's end.
Coro<void> read_to_eof(StreamReader reader, StreamWriter writer) {
  (void)co_await reader.read();
  writer.close();
  co_await writer.wait_closed();
}

Coro<void> tls_peer_hangs_up(Reports* reports) {
  reports->install();
  corio::ClientConnected handler = read_to_eof;
  Server server = co_await corio::start_server(handler, "127.0.0.1", 0, tls_server_options());
  for (int i = 0; i < 3; ++i) {
    auto [reader, writer] =
        co_await corio::open_connection("127.0.0.1", server.port(), tls_options());
    writer.write("hello\n");
    co_await writer.drain();
    writer.abort();  // the TCP connection goes without close_notify
  }
  server.close();
  co_await server.wait_closed();
}

TEST(ServerPeerGone, ATlsPeerGoneWithoutCloseNotifyIsNoUnhandledException) {
  Reports reports;
  run_bounded(tls_peer_hangs_up(&reports));
  EXPECT_EQ(reports.size(), 0u) << reports.joined();
}

TEST(ServerPeerGone, DebugModeStillShowsTheReset) {
  Reports reports;
  run_bounded(reports_of(&reports, true));
  // Debug mode may add slow-callback reports on a loaded machine: count.
  const auto count = [&](const std::string& m) {
    return std::count(reports.messages.begin(), reports.messages.end(), m);
  };
  EXPECT_EQ(count("client_connected_cb ended: the peer closed the connection"), 3)
      << reports.joined();
  EXPECT_EQ(count("Unhandled exception in client_connected_cb"), 1) << reports.joined();
}

#ifdef CORIO_CLI
// The port in "listening on 127.0.0.1:PORT".
std::uint16_t listening_port(const std::string& line) {
  const std::size_t colon = line.rfind(':');
  return colon == std::string::npos ? 0
                                    : static_cast<std::uint16_t>(std::stoi(line.substr(colon + 1)));
}

Coro<void> echo_server_under_resets() {
  corio::SubprocessOptions opts;
  opts.out = corio::Redirect::pipe;
  opts.err = corio::Redirect::pipe;
  std::vector<std::string> args = {"echo-server", "--port", "0"};
  corio::Process p = co_await corio::create_subprocess_exec(CORIO_CLI, std::move(args), opts);
  const std::uint16_t port = listening_port(co_await p.out.readline());
  CO_ASSERT(port != 0);
  // Data in both directions, then RST: the server is reading or writing
  // when the reset arrives.
  const std::string block(16 * 1024, 'x');
  for (int i = 0; i < 300; ++i) co_await send_then_reset(port, block, i % 2 ? block.size() : 0);
  auto [reader, writer] = co_await corio::open_connection("127.0.0.1", port);
  EXPECT_EQ(co_await echo_round_trip(reader, writer, "still there\n"), "still there\n");
  writer.close();
  co_await writer.wait_closed();
  EXPECT_FALSE(p.returncode().has_value()) << "the server is alive";
  p.send_signal(SIGINT);
  std::pair<std::string, std::string> output = co_await p.communicate();
  EXPECT_EQ(co_await p.wait(), 130);
  EXPECT_EQ(output.second, "") << "its stderr after 300 resets";
}

TEST(ServerPeerGone, EchoServerToolSurvives300ResetsQuietly) {
  run_bounded(echo_server_under_resets(), 60s);
}
#endif

}  // namespace
}  // namespace corio_net_test
