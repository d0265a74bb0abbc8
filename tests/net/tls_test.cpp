// TLS streams end to end on loopback, corio with itself: certificate and
// host name checks, SNI and ALPN, close_notify both ways (and its absence,
// and a peer that never answers it), handshake failures and timeouts.
// Other peers: tls_interop_test.cpp; load: tls_load_test.cpp.
#include <openssl/x509_vfy.h>

#include <chrono>

#include "net/tls_support.hpp"

namespace corio_net_test {
namespace {

using corio::ConnectOptions;
using corio::ServerOptions;
using corio::SslContext;
using Clock = std::chrono::steady_clock;

// Connects with opts and returns what the attempt threw (nullptr: it
// connected, and the connection is closed again).
Coro<std::exception_ptr> connect_error(std::string host, std::uint16_t port, ConnectOptions opts) {
  try {
    auto [reader, writer] = co_await corio::open_connection(host, port, opts);
    writer.close();
    co_await writer.wait_closed();
  } catch (const std::exception&) {
    co_return std::current_exception();
  }
  co_return nullptr;
}

template <class E>
std::string message_if(const std::exception_ptr& e) {
  try {
    if (e) std::rethrow_exception(e);
  } catch (const E& error) {
    return error.what();
  } catch (...) {
  }
  return "(not the expected exception)";
}

// ---- echo, extra info, close_notify ------------------------------------------------

Coro<void> echo_over_tls(std::string host) {
  Server server = co_await tls_echo_server();
  auto [reader, writer] = co_await corio::open_connection(host, server.port(), tls_options());
  EXPECT_EQ(co_await echo_round_trip(reader, writer, "over TLS\n"), "over TLS\n");
  EXPECT_EQ(writer.get_extra_info("ssl_version").rfind("TLSv1.", 0), 0u);
  EXPECT_FALSE(writer.get_extra_info("cipher").empty());
  EXPECT_NE(writer.get_extra_info("peercert_subject").find("CN=localhost"), std::string::npos);
  EXPECT_EQ(writer.get_extra_info("peername"), "127.0.0.1:" + std::to_string(server.port()));
  writer.write_eof();  // close_notify: the echo handler reads EOF and closes
  EXPECT_EQ(co_await reader.read(), "") << "the server's close_notify is a clean EOF";
  writer.close();
  co_await writer.wait_closed();
  server.close();
  co_await server.wait_closed();
}

TEST(Tls, EchoByHostName) { run_bounded(echo_over_tls("localhost")); }
TEST(Tls, EchoByIpAddressChecksTheIpSan) { run_bounded(echo_over_tls("127.0.0.1")); }

// Reads the request to EOF (the client's close_notify), then answers.
Coro<void> answer_after_eof(StreamReader reader, StreamWriter writer) {
  std::string request = co_await reader.read();
  writer.write("got " + std::to_string(request.size()) + " bytes\n");
  writer.close();
  co_await writer.wait_closed();
}

Coro<void> half_close() {
  Server server =
      co_await corio::start_server(answer_after_eof, "127.0.0.1", 0, tls_server_options());
  auto [reader, writer] =
      co_await corio::open_connection("localhost", server.port(), tls_options());
  writer.write("12345");
  writer.write_eof();
  EXPECT_EQ(co_await reader.readline(), "got 5 bytes\n") << "reading goes on after write_eof()";
  EXPECT_EQ(co_await reader.read(), "");
}

TEST(Tls, WriteEofSendsCloseNotifyAndReadingGoesOn) { run_bounded(half_close()); }

// Returns without closing: dropping the handles still says goodbye.
Coro<void> say_bye_and_drop(StreamReader, StreamWriter writer) {
  writer.write("bye\n");
  co_return;
}

Coro<void> dropped_handles() {
  Server server =
      co_await corio::start_server(say_bye_and_drop, "127.0.0.1", 0, tls_server_options());
  auto [reader, writer] =
      co_await corio::open_connection("localhost", server.port(), tls_options());
  EXPECT_EQ(co_await reader.read(), "bye\n");
  EXPECT_EQ(co_await reader.read(), "") << "close_notify came: not a truncation";
}

TEST(Tls, DroppedHandlesCloseWithCloseNotify) { run_bounded(dropped_handles()); }

Coro<void> unix_echo(std::string path) {
  Server server = co_await corio::start_unix_server(echo_lines, path, tls_server_options());
  ConnectOptions opts = tls_options();
  opts.server_hostname = "localhost";
  auto [reader, writer] = co_await corio::open_unix_connection(path, opts);
  EXPECT_EQ(co_await echo_round_trip(reader, writer, "unix\n"), "unix\n");
}

TEST(Tls, EchoOverUnixSocket) {
  const std::string path = unix_path("tls");
  run_bounded(unix_echo(path));
  ::unlink(path.c_str());
}

// ---- SNI and ALPN -----------------------------------------------------------------------

// Tells the client what the server saw.
Coro<void> report_sni_and_alpn(StreamReader, StreamWriter writer) {
  writer.write("sni=" + writer.get_extra_info("server_hostname") +
               " alpn=" + writer.get_extra_info("alpn_protocol") + "\n");
  writer.close();
  co_await writer.wait_closed();
}

Coro<void> sni_and_alpn() {
  SslContext server_ctx = test_server();
  server_ctx.set_alpn_protocols({"h2", "http/1.1"});
  Server server = co_await corio::start_server(report_sni_and_alpn, "127.0.0.1", 0,
                                               tls_server_options(server_ctx));
  SslContext client_ctx = trusting_client();
  client_ctx.set_alpn_protocols({"http/1.1", "h2"});
  auto [reader, writer] =
      co_await corio::open_connection("localhost", server.port(), tls_options(client_ctx));
  EXPECT_EQ(co_await reader.readline(), "sni=localhost alpn=h2\n") << "the server's preference";
  EXPECT_EQ(writer.get_extra_info("alpn_protocol"), "h2");
  EXPECT_EQ(writer.get_extra_info("server_hostname"), "localhost");

  client_ctx.set_alpn_protocols({"spdy/1"});
  auto [r2, w2] =
      co_await corio::open_connection("localhost", server.port(), tls_options(client_ctx));
  EXPECT_EQ(co_await r2.readline(), "sni=localhost alpn=\n") << "no overlap: no ALPN, no failure";

  auto [r3, w3] = co_await corio::open_connection("127.0.0.1", server.port(), tls_options());
  EXPECT_EQ(co_await r3.readline(), "sni= alpn=\n") << "an IP address is not sent as SNI";
}

TEST(Tls, ServerSeesSniAndAgreesOnAlpn) { run_bounded(sni_and_alpn()); }

// ---- verification ------------------------------------------------------------------------

Coro<void> untrusted(Reports* reports) {
  reports->install();
  Server rogue = co_await tls_echo_server(
      tls_server_options(SslContext::server(pki().rogue_cert, pki().rogue_key)));
  std::exception_ptr e = co_await connect_error("localhost", rogue.port(), tls_options());
  EXPECT_EQ(message_if<corio::SslCertVerificationError>(e),
            "certificate verify failed: unable to get local issuer certificate");
  try {
    std::rethrow_exception(e);
  } catch (const corio::SslCertVerificationError& v) {
    EXPECT_EQ(v.verify_code, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY);
    EXPECT_EQ(&v.code().category(), &corio::ssl_category());
  } catch (...) {
  }

  // The defaults verify too: the system's CAs do not know the tests' CA.
  Server server = co_await tls_echo_server();
  ConnectOptions system_cas = tls_options(SslContext::client());
  e = co_await connect_error("localhost", server.port(), system_cas);
  EXPECT_NE(message_if<corio::SslError>(e).find("certificate verify failed"), std::string::npos);

  // The server got over the failed handshake, and said nothing (not debug).
  auto [reader, writer] =
      co_await corio::open_connection("localhost", server.port(), tls_options());
  EXPECT_EQ(co_await echo_round_trip(reader, writer, "still serving\n"), "still serving\n");
  EXPECT_TRUE(reports->messages.empty());
}

TEST(Tls, CertificateFromAnUntrustedCaIsRefused) {
  Reports reports;
  run_bounded(untrusted(&reports));
}

Coro<void> hostname_mismatch() {
  Server server = co_await tls_echo_server();
  ConnectOptions opts = tls_options();
  opts.server_hostname = "example.com";
  std::exception_ptr e = co_await connect_error("127.0.0.1", server.port(), opts);
  EXPECT_EQ(message_if<corio::SslCertVerificationError>(e),
            "certificate verify failed: hostname mismatch, certificate is not valid for "
            "'example.com'");
}

TEST(Tls, HostNameMismatchIsRefused) { run_bounded(hostname_mismatch()); }

Coro<void> verification_off() {
  Server rogue = co_await tls_echo_server(
      tls_server_options(SslContext::server(pki().rogue_cert, pki().rogue_key)));
  SslContext insecure = SslContext::client();
  insecure.set_verify(false);
  EXPECT_FALSE(insecure.check_hostname()) << "no verification, no name check";
  EXPECT_EQ(co_await connect_error("localhost", rogue.port(), tls_options(insecure)), nullptr);

  Server server = co_await tls_echo_server();
  SslContext no_name_check = trusting_client();
  no_name_check.set_check_hostname(false);
  ConnectOptions opts = tls_options(no_name_check);
  opts.server_hostname = "example.com";
  EXPECT_EQ(co_await connect_error("127.0.0.1", server.port(), opts), nullptr);
}

TEST(Tls, VerificationCanBeTurnedOffExplicitly) { run_bounded(verification_off()); }

Coro<void> client_certificates() {
  SslContext server_ctx = test_server();
  server_ctx.set_verify(true);  // require a client certificate
  server_ctx.load_verify_locations(pki().ca_cert);
  Server server =
      co_await corio::start_server(echo_lines, "127.0.0.1", 0, tls_server_options(server_ctx));
  // TLS 1.3: the client's handshake ends before the server has checked it,
  // so the refusal arrives as an alert at the first read.
  auto [r1, w1] = co_await corio::open_connection("localhost", server.port(), tls_options());
  w1.write("no certificate\n");
  std::exception_ptr e;
  try {
    co_await r1.readline();
  } catch (const corio::SslError&) {
    e = std::current_exception();
  }
  EXPECT_NE(message_if<corio::SslError>(e).find("certificate required"), std::string::npos);

  SslContext with_cert = trusting_client();
  with_cert.load_cert_chain(pki().server_cert, pki().server_key);
  auto [r2, w2] =
      co_await corio::open_connection("localhost", server.port(), tls_options(with_cert));
  EXPECT_EQ(co_await echo_round_trip(r2, w2, "certified\n"), "certified\n");
}

TEST(Tls, ServerCanRequireClientCertificates) { run_bounded(client_certificates()); }

Coro<void> bad_options() {
  ConnectOptions plain;
  plain.server_hostname = "localhost";
  EXPECT_THROW(co_await corio::open_connection("127.0.0.1", 1, plain), corio::ValueError);
  EXPECT_THROW(co_await corio::open_connection("127.0.0.1", 1, tls_options(test_server())),
               corio::ValueError)
      << "a server context on a client";
  EXPECT_THROW(co_await corio::start_server(echo_lines, "127.0.0.1", 0,
                                            tls_server_options(trusting_client())),
               corio::ValueError)
      << "a client context on a server";
  EXPECT_THROW(co_await corio::open_unix_connection("/nonexistent", tls_options()),
               corio::ValueError)
      << "no name to check";
}

TEST(Tls, OptionsThatCannotWorkAreValueErrors) {
  run_bounded(bad_options());
  SslContext ctx = SslContext::client();
  EXPECT_THROW(ctx.set_alpn_protocols({""}), corio::ValueError);
  EXPECT_THROW(ctx.load_verify_locations("/nonexistent.pem"), corio::SslError);
  EXPECT_THROW(SslContext::server(pki().server_cert, pki().rogue_key), corio::SslError)
      << "a key that is not the certificate's";
}

// ---- truncation, shutdown and handshake timeouts -----------------------------------------

// Writes a line, then closes the TCP connection without close_notify (the
// line is in the kernel's buffer already: closing the socket sends it).
Coro<void> write_then_abort(StreamReader, StreamWriter writer) {
  writer.write("partial\n");
  co_await writer.drain();
  writer.abort();
}

Coro<void> truncation() {
  Server server =
      co_await corio::start_server(write_then_abort, "127.0.0.1", 0, tls_server_options());
  auto [reader, writer] =
      co_await corio::open_connection("localhost", server.port(), tls_options());
  EXPECT_EQ(co_await reader.readline(), "partial\n");
  EXPECT_THROW(co_await reader.read(), corio::SslEofError);
  EXPECT_EQ(message_if<corio::SslEofError>(reader.exception()), "unexpected eof while reading");
  EXPECT_THROW(co_await reader.read(), corio::SslEofError) << "the error sticks";
}

TEST(Tls, EofWithoutCloseNotifyIsAnError) { run_bounded(truncation()); }

// Never reads, so never answers a close_notify.
Coro<void> deaf(StreamReader, StreamWriter) { co_await corio::sleep(60s); }

Coro<void> unanswered_close_notify() {
  Server server = co_await corio::start_server(deaf, "127.0.0.1", 0, tls_server_options());
  ConnectOptions opts = tls_options();
  opts.ssl_shutdown_timeout = 200ms;
  auto [reader, writer] = co_await corio::open_connection("localhost", server.port(), opts);
  const Clock::time_point start = Clock::now();
  writer.close();
  co_await writer.wait_closed();
  const auto took = Clock::now() - start;
  EXPECT_GE(took, 150ms) << "close() waited for the peer's close_notify";
  EXPECT_LT(took, 3s) << "and gave up after ssl_shutdown_timeout";
  EXPECT_EQ(co_await reader.read(), "") << "the closed stream reads EOF";
}

TEST(Tls, ShutdownTimeoutBoundsClose) { run_bounded(unanswered_close_notify()); }

Coro<void> handshake_timeouts() {
  // A client facing a server that never speaks.
  Socket mute = raw_listener();
  ConnectOptions opts = tls_options();
  opts.ssl_handshake_timeout = 200ms;
  std::exception_ptr e = co_await connect_error("127.0.0.1", mute.local_address().port(), opts);
  EXPECT_NE(message_if<corio::TimeoutError>(e).find("SSL handshake is taking longer than 200 ms"),
            std::string::npos);

  // A server facing a client that never speaks.
  ServerOptions sopts = tls_server_options();
  sopts.ssl_handshake_timeout = 200ms;
  Server server = co_await corio::start_server(echo_lines, "127.0.0.1", 0, sopts);
  Socket silent = Socket::create(AF_INET, SOCK_STREAM);
  co_await corio::get_running_loop().sock_connect(silent, server.sockets()[0]);
  const Clock::time_point start = Clock::now();
  EXPECT_EQ(co_await corio::get_running_loop().sock_recv(silent, 100), "") << "the server hung up";
  EXPECT_GE(Clock::now() - start, 150ms);
  server.close();
  co_await server.wait_closed();
}

TEST(Tls, HandshakesAreBoundedInTime) { run_bounded(handshake_timeouts()); }

Coro<void> close_clients_mid_handshake() {
  Server server = co_await tls_echo_server();  // a 60 s handshake timeout
  corio::EventLoop& loop = corio::get_running_loop();
  Socket silent = Socket::create(AF_INET, SOCK_STREAM);
  co_await loop.sock_connect(silent, server.sockets()[0]);
  // close_clients() reaches the connection once the server has accepted
  // it, which the client cannot see: until the server hangs up, again.
  for (;;) {
    server.close_clients();
    try {
      EXPECT_EQ(co_await corio::wait_for(loop.sock_recv(silent, 100), 20ms), "");
      break;
    } catch (const corio::TimeoutError&) {
    }
  }
  server.close();
  co_await server.wait_closed();
}

TEST(Tls, CloseClientsEndsHandshakesInProgress) { run_bounded(close_clients_mid_handshake()); }

Coro<void> plaintext_client(Reports* reports) {
  reports->install();
  Server server = co_await tls_echo_server();
  corio::EventLoop& loop = corio::get_running_loop();
  const bool modes[] = {false, true};
  for (bool debug : modes) {
    loop.set_debug(debug);
    Socket raw = Socket::create(AF_INET, SOCK_STREAM);
    co_await loop.sock_connect(raw, server.sockets()[0]);
    co_await raw_send(raw, "GET / HTTP/1.0\r\n\r\n");
    std::string answer;
    for (std::string more = "-"; !more.empty();) {
      more = co_await loop.sock_recv(raw, 4096);
      answer += more;
    }
    EXPECT_EQ(answer.find("HTTP"), std::string::npos) << "an alert at most, then EOF";
  }
  loop.set_debug(false);
  CO_ASSERT(reports->messages.size() == 1);  // the debug-mode attempt only
  EXPECT_NE(reports->messages[0].find("SSL handshake failed"), std::string::npos);
  EXPECT_THROW(std::rethrow_exception(reports->exceptions[0]), corio::SslError);
  auto [reader, writer] =
      co_await corio::open_connection("localhost", server.port(), tls_options());
  EXPECT_EQ(co_await echo_round_trip(reader, writer, "ok\n"), "ok\n");
}

TEST(Tls, PlaintextClientIsReportedOnlyInDebugMode) {
  Reports reports;
  run_bounded(plaintext_client(&reports));
}

}  // namespace
}  // namespace corio_net_test
