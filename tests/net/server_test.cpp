// start_server / open_connection end to end on loopback: echo over IPv4,
// IPv6 and Unix sockets, port 0, refused and timed-out connects, a reset
// peer, half-close, and the Server's lifecycle (close, wait_closed,
// serve_forever, close_clients, handler exceptions).
#include <sys/stat.h>

#include "net/net_support.hpp"

namespace corio_net_test {
namespace {

Coro<void> echo_over(const char* host) {
  Server server = co_await echo_server(host);
  EXPECT_TRUE(server.is_serving());
  EXPECT_NE(server.port(), 0) << "port 0 picked a free port";
  CO_ASSERT(server.sockets().size() == 1);
  EXPECT_EQ(server.sockets()[0].host(), host);
  auto [reader, writer] = co_await corio::open_connection(host, server.port());
  EXPECT_EQ(co_await echo_round_trip(reader, writer, "ping\n"), "ping\n");
  EXPECT_EQ(co_await echo_round_trip(reader, writer, "pong\n"), "pong\n");
  writer.write_eof();
  EXPECT_EQ(co_await reader.read(), "") << "the handler closed after EOF";
  server.close();
  co_await server.wait_closed();
}

TEST(Server, EchoOverIpv4) { run_bounded(echo_over("127.0.0.1")); }

TEST(Server, EchoOverIpv6) {
  if (!has_ipv6_loopback()) GTEST_SKIP() << "no IPv6 loopback here";
  run_bounded(echo_over("::1"));
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

Coro<void> unix_echo(std::string path) {
  // A stale socket file from a dead server is replaced, as asyncio does.
  {
    Socket stale = Socket::create(AF_UNIX, SOCK_STREAM);
    stale.bind(SocketAddress::unix_path(path));
  }
  CO_ASSERT(exists(path));
  Server server = co_await corio::start_unix_server(echo_lines, path);
  EXPECT_EQ(server.port(), 0);
  auto [reader, writer] = co_await corio::open_unix_connection(path);
  EXPECT_EQ(co_await echo_round_trip(reader, writer, "over unix\n"), "over unix\n");
  EXPECT_EQ(writer.get_extra_info("peername"), path);
  server.close();
  EXPECT_FALSE(exists(path)) << "close() removes the socket file";
  writer.close();
  co_await server.wait_closed();
}

TEST(Server, EchoOverUnixSocket) {
  const std::string path = unix_path("echo");
  run_bounded(unix_echo(path));
  ::unlink(path.c_str());
}

// "" binds every interface, each family on its own socket, one port for all.
Coro<void> all_interfaces() {
  Server server = co_await corio::start_server(echo_lines, "", 0);
  const std::vector<SocketAddress> bound = server.sockets();
  CO_ASSERT(!bound.empty());
  for (const SocketAddress& a : bound) {
    EXPECT_TRUE(a.host() == "0.0.0.0" || a.host() == "::") << a.to_string();
    EXPECT_EQ(a.port(), server.port());
  }
  auto [r4, w4] = co_await corio::open_connection("127.0.0.1", server.port());
  EXPECT_EQ(co_await echo_round_trip(r4, w4, "v4\n"), "v4\n");
  if (bound.size() == 2) {
    auto [r6, w6] = co_await corio::open_connection("::1", server.port());
    EXPECT_EQ(co_await echo_round_trip(r6, w6, "v6\n"), "v6\n");
  }
}

TEST(Server, EmptyHostListensOnEveryInterfaceOnOnePort) { run_bounded(all_interfaces()); }

Coro<void> refused() {
  std::uint16_t port = 0;
  {
    Socket lst = raw_listener();
    port = lst.local_address().port();
  }  // nobody listens there now
  EXPECT_EQ(co_await errno_of(corio::open_connection("127.0.0.1", port)), ECONNREFUSED);
}

TEST(Server, ConnectionRefusedKeepsTheErrno) { run_bounded(refused()); }

Coro<void> connect_timeout(bool* skipped) {
  std::optional<StalledListener> stalled = co_await stalled_listener();
  if (!stalled) {
    *skipped = true;
    co_return;
  }
  Coro<std::pair<StreamReader, StreamWriter>> connect =
      corio::open_connection("127.0.0.1", stalled->address().port());
  EXPECT_THROW(co_await corio::wait_for(std::move(connect), 200ms), corio::TimeoutError);
}

TEST(Server, ConnectTimesOutAgainstAFullBacklog) {
  bool skipped = false;
  run_bounded(connect_timeout(&skipped));
  if (skipped) GTEST_SKIP() << "this kernel completes connections past a full backlog";
}

// Echoes lines; on "reset\n" closes with SO_LINGER {1, 0}, which sends RST.
Coro<void> echo_or_reset(StreamReader reader, StreamWriter writer) {
  for (;;) {
    std::string line = co_await reader.readline();
    if (line.empty()) co_return;
    if (line == "reset\n") {
      const linger hard{1, 0};
      ::setsockopt(writer.fileno(), SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
      writer.close();
      co_return;
    }
    writer.write(line);
    co_await writer.drain();
  }
}

Coro<void> peer_reset() {
  Server server = co_await corio::start_server(echo_or_reset, "127.0.0.1", 0);
  auto [other_r, other_w] = co_await corio::open_connection("127.0.0.1", server.port());
  EXPECT_EQ(co_await echo_round_trip(other_r, other_w, "before\n"), "before\n");
  auto [reader, writer] = co_await corio::open_connection("127.0.0.1", server.port());
  writer.write("reset\n");
  EXPECT_EQ(co_await errno_of(reader.read()), ECONNRESET);
  EXPECT_EQ(co_await errno_of(reader.readline()), ECONNRESET) << "the error sticks";
  EXPECT_EQ(co_await errno_of(writer.drain()), ECONNRESET) << "drain() reports it too (asyncio)";
  EXPECT_TRUE(reader.exception() != nullptr);
  EXPECT_EQ(co_await echo_round_trip(other_r, other_w, "after\n"), "after\n")
      << "the other connection is unaffected";
}

TEST(Server, PeerResetFailsThatStreamOnly) { run_bounded(peer_reset()); }

// Reads the request to EOF, then answers.
Coro<void> answer_after_eof(StreamReader reader, StreamWriter writer) {
  std::string request = co_await reader.read();
  writer.write("got " + std::to_string(request.size()) + " bytes");
  writer.close();
}

Coro<void> half_close() {
  Server server = co_await corio::start_server(answer_after_eof, "127.0.0.1", 0);
  auto [reader, writer] = co_await corio::open_connection("127.0.0.1", server.port());
  writer.write("abc");
  writer.write_eof();
  EXPECT_EQ(co_await reader.read(), "got 3 bytes");
}

TEST(Server, ClientWriteEofStillReadsTheReply) { run_bounded(half_close()); }

// ---- lifecycle ------------------------------------------------------------------

struct Gate {
  corio::Event started;
  int finished = 0;
};

// Signals its start, reads to EOF, says goodbye (unless its writer was
// closed under it).
Coro<void> gated(Gate* gate, StreamReader reader, StreamWriter writer) {
  gate->started.set();
  co_await reader.read();
  if (!writer.is_closing()) writer.write("bye");
  writer.close();
  co_await writer.wait_closed();
  ++gate->finished;
}

corio::ClientConnected gated_handler(Gate* gate) {
  return [gate](StreamReader r, StreamWriter w) { return gated(gate, std::move(r), std::move(w)); };
}

Coro<void> close_then_wait_closed() {
  Gate gate;
  corio::ClientConnected handler = gated_handler(&gate);
  Server server = co_await corio::start_server(handler, "127.0.0.1", 0);
  const std::uint16_t port = server.port();
  auto [reader, writer] = co_await corio::open_connection("127.0.0.1", port);
  co_await gate.started.wait();
  server.close();
  EXPECT_FALSE(server.is_serving());
  EXPECT_TRUE(server.sockets().empty());
  EXPECT_EQ(co_await errno_of(corio::open_connection("127.0.0.1", port)), ECONNREFUSED);
  Task<void> closed = corio::create_task(server.wait_closed());
  for (int i = 0; i < 5; ++i) co_await corio::sleep(0s);
  EXPECT_FALSE(closed.done()) << "a handler is still running";
  writer.write_eof();  // lets the handler finish
  EXPECT_EQ(co_await reader.read(), "bye") << "the connection outlived close()";
  co_await closed;
  EXPECT_EQ(gate.finished, 1);
}

TEST(Server, WaitClosedWaitsForTheHandlers) { run_bounded(close_then_wait_closed()); }

Coro<void> serve_forever_cancelled() {
  Server server = co_await echo_server();
  Task<void> serving = corio::create_task(server.serve_forever());
  co_await corio::sleep(0s);
  EXPECT_THROW(co_await server.serve_forever(), corio::RuntimeError) << "one at a time";
  auto [reader, writer] = co_await corio::open_connection("127.0.0.1", server.port());
  EXPECT_EQ(co_await echo_round_trip(reader, writer, "served\n"), "served\n");
  serving.cancel();
  EXPECT_THROW(co_await serving, corio::CancelledError);
  EXPECT_FALSE(server.is_serving()) << "cancelling serve_forever() closed the server";
  EXPECT_EQ(co_await errno_of(corio::open_connection("127.0.0.1", server.port())), ECONNREFUSED);
}

TEST(Server, CancellingServeForeverClosesTheServer) { run_bounded(serve_forever_cancelled()); }

Coro<void> serve_forever_until_close() {
  Server server = co_await echo_server();
  Task<void> serving = corio::create_task(server.serve_forever());
  co_await corio::sleep(0s);
  server.close();
  co_await serving;  // returns normally
  EXPECT_THROW(co_await server.serve_forever(), corio::RuntimeError) << "closed";
}

TEST(Server, ServeForeverReturnsOnClose) { run_bounded(serve_forever_until_close()); }

Coro<void> close_clients() {
  Gate gate;
  corio::ClientConnected handler = gated_handler(&gate);
  Server server = co_await corio::start_server(handler, "127.0.0.1", 0);
  auto [reader, writer] = co_await corio::open_connection("127.0.0.1", server.port());
  co_await gate.started.wait();
  server.close_clients();  // the handler's pending read ends with EOF
  EXPECT_EQ(co_await reader.read(), "");
  server.close();
  co_await server.wait_closed();
  EXPECT_EQ(gate.finished, 1);
}

TEST(Server, CloseClientsClosesTheConnections) { run_bounded(close_clients()); }

Coro<void> abort_clients() {
  Gate gate;
  corio::ClientConnected handler = gated_handler(&gate);
  Server server = co_await corio::start_server(handler, "127.0.0.1", 0);
  auto [reader, writer] = co_await corio::open_connection("127.0.0.1", server.port());
  co_await gate.started.wait();
  server.abort_clients();
  const int err = co_await errno_of(reader.read());
  EXPECT_TRUE(err == 0 || err == ECONNRESET) << "EOF or reset, errno " << err;
  server.close();
  co_await server.wait_closed();
  EXPECT_EQ(gate.finished, 1);
}

TEST(Server, AbortClientsClosesTheConnectionsAtOnce) { run_bounded(abort_clients()); }

Coro<void> handler_exception(Reports* reports) {
  reports->install();
  Server server = co_await corio::start_server(fail_on_boom, "127.0.0.1", 0);
  auto [reader, writer] = co_await corio::open_connection("127.0.0.1", server.port());
  writer.write("boom\n");
  EXPECT_EQ(co_await reader.read(), "") << "that connection ends";
  CO_ASSERT(reports->messages.size() == 1);
  EXPECT_EQ(reports->messages[0], "Unhandled exception in client_connected_cb");
  EXPECT_EQ(corio::describe(reports->exceptions[0]), "std::runtime_error: boom");
  auto [r2, w2] = co_await corio::open_connection("127.0.0.1", server.port());
  EXPECT_EQ(co_await echo_round_trip(r2, w2, "still serving\n"), "still serving\n");
}

TEST(Server, HandlerExceptionIsReportedAndTheServerGoesOn) {
  Reports reports;
  run_bounded(handler_exception(&reports));
}

}  // namespace
}  // namespace corio_net_test
