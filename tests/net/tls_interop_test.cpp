// TLS against another implementation: a corio client and `openssl s_server`,
// `openssl s_client` and a corio server. Skipped without the openssl tool.
#include "net/tls_support.hpp"

namespace corio_net_test {
namespace {

// s_server -rev answers each line reversed; port 0 and its "ACCEPT
// 127.0.0.1:<port>" line avoid guessing a free port.
Coro<void> against_s_server() {
  Child s_server({"openssl", "s_server", "-accept", "127.0.0.1:0", "-cert", pki().server_cert,
                  "-key", pki().server_key, "-rev", "-naccept", "1", "-alpn", "http/1.1"});
  const std::string accept = co_await s_server.read_line_with("ACCEPT");
  CO_ASSERT(!accept.empty());
  const auto port = static_cast<std::uint16_t>(std::stoi(accept.substr(accept.rfind(':') + 1)));

  corio::ConnectOptions opts;
  opts.ssl = trusting_client();
  opts.ssl->set_alpn_protocols({"h2", "http/1.1"});
  auto [reader, writer] = co_await corio::open_connection("localhost", port, opts);
  EXPECT_EQ(co_await echo_round_trip(reader, writer, "hello\n"), "olleh\n");
  EXPECT_EQ(writer.get_extra_info("alpn_protocol"), "http/1.1");

  // Killed, it closes the connection without close_notify: a truncation.
  s_server.kill();
  EXPECT_THROW(co_await reader.read(), corio::SslEofError);
}

TEST(TlsInterop, CorioClientWithOpensslServer) {
  if (!have_openssl_cli()) GTEST_SKIP() << "no openssl command";
  run_bounded(against_s_server(), 20s);
}

// s_client sends its stdin and prints what comes back; at stdin's EOF
// (-no_ign_eof) it sends close_notify and exits.
Coro<void> against_s_client(Reports* reports) {
  reports->install();
  Server server = co_await tls_echo_server();
  Child s_client({"openssl", "s_client", "-connect", "127.0.0.1:" + std::to_string(server.port()),
                  "-servername", "localhost", "-verify_hostname", "localhost", "-CAfile",
                  pki().ca_cert, "-verify_return_error", "-quiet", "-no_ign_eof"});
  co_await raw_send(s_client.io, "hello from s_client\n");
  EXPECT_EQ(co_await s_client.read_line_with("s_client"), "hello from s_client\n");
  s_client.io.shutdown(SHUT_WR);
  server.close();
  co_await server.wait_closed();  // the echo handler has ended
  EXPECT_TRUE(reports->messages.empty()) << "s_client ended with close_notify, no truncation";
}

TEST(TlsInterop, OpensslClientWithCorioServer) {
  if (!have_openssl_cli()) GTEST_SKIP() << "no openssl command";
  Reports reports;
  run_bounded(against_s_client(&reports), 20s);
}

}  // namespace
}  // namespace corio_net_test
