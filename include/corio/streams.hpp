/// \file
/// asyncio streams: open_connection(), start_server() and their Unix forms,
/// over StreamReader, StreamWriter and Server.
///
/// <!-- doc: fragment in corio -->
///     Coro<> get_page() {
///       auto [reader, writer] = co_await corio::open_connection("example.org", 80);
///       writer.write("GET / HTTP/1.0\r\n\r\n");
///       std::string status = co_await reader.readline();
///     }
///
///     Coro<void> echo(StreamReader r, StreamWriter w) { w.write(co_await r.readline()); }
///
///     Coro<> serve() {
///       auto server = co_await corio::start_server(echo, "127.0.0.1", 0);
///       co_await server.serve_forever();
///     }
///
/// open_connection resolves the host (dns.hpp) and connects with Happy
/// Eyeballs (RFC 8305, asyncio's happy_eyeballs_delay): addresses alternate
/// between families; the first attempt starts at once, each next one when
/// the previous failed or happy_eyeballs_delay passed without a connection;
/// the first connection wins and the other attempts are cancelled. If all
/// fail, the first attempt's error is thrown (asyncio raises one combining
/// them; its errno is kept here: ECONNREFUSED, ETIMEDOUT, ...).
///
/// TLS: ConnectOptions::ssl and ServerOptions::ssl (ssl.hpp says what
/// changes on a TLS stream). A handshake failure is an SslError (an
/// SslCertVerificationError for a rejected certificate); one that takes too
/// long, TimeoutError.
///
/// With g++ 12, name a lambda handler before the co_await (`ClientConnected
/// h = [...](StreamReader r, StreamWriter w) {...}; co_await start_server(h,
/// ...)`): g++ 12 destroys a closure temporary inside a co_await expression
/// twice. A plain function is fine either way.
///
/// Suspends: open_* while resolving and connecting; start_* only to resolve
/// a host name. Resumed by: the loop (socket readiness, the resolver's
/// thread, the Happy Eyeballs timer). Cancelling open_connection (e.g. with
/// wait_for) cancels every attempt and closes its socket.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <corio/coro.hpp>
#include <corio/dns.hpp>
#include <corio/server.hpp>
#include <corio/socket.hpp>
#include <corio/ssl.hpp>
#include <corio/stream_reader.hpp>
#include <corio/stream_writer.hpp>

namespace corio {

/// How open_connection() and open_unix_connection() connect.
struct ConnectOptions {
  std::size_t limit = kDefaultStreamLimit;  ///< the StreamReader's limit
  std::chrono::milliseconds happy_eyeballs_delay{250};  ///< RFC 8305's recommended value
  std::optional<SocketAddress> local_address;  ///< bind here before connecting (its family only)

  /// TLS (ssl.hpp): a client context wraps the connection, whose handshake
  /// then runs inside open_connection.
  std::optional<SslContext> ssl;
  /// The name sent as SNI and checked against the certificate. Default: the
  /// host of open_connection (an IP address is checked, not sent); none for
  /// open_unix_connection, where a context that checks host names needs one.
  /// "" sends and checks none. Without ssl: ValueError.
  std::optional<std::string> server_hostname;
  std::chrono::milliseconds ssl_handshake_timeout{60'000};  ///< asyncio's 60 s
  std::chrono::milliseconds ssl_shutdown_timeout{30'000};   ///< asyncio's 30 s
  /// ALPN protocols this connection offers instead of the context's (a
  /// context is shared: an HTTP client offers "h2" on its pooled connections
  /// and not on the one a WebSocket takes). Without ssl: ignored.
  std::optional<std::vector<std::string>> alpn_protocols;
};

/// Connects to host:port (resolved; Happy Eyeballs); the connection's two halves.
Coro<std::pair<StreamReader, StreamWriter>> open_connection(std::string host, std::uint16_t port,
                                                            ConnectOptions opts = {});
/// Connects to the Unix socket at path.
Coro<std::pair<StreamReader, StreamWriter>> open_unix_connection(std::string path,
                                                                 ConnectOptions opts = {});
/// asyncio's open_connection(sock=...): streams over a socket the caller
/// connected (through a proxy's CONNECT tunnel, say), with TLS over it when
/// opts.ssl (server_hostname then names the peer, as for a Unix socket).
Coro<std::pair<StreamReader, StreamWriter>> open_connection(Socket sock, ConnectOptions opts = {});
/// asyncio's start_tls: TLS over a connection already open (a proxy's tunnel, STARTTLS), with
/// opts.ssl (required) and its server_hostname (default: host), handshake and shutdown timeouts;
/// a server context (SslContext::server) takes the server's side (asyncio's server_side=True:
/// host and server_hostname unused). Returns the streams of the encrypted connection, after
/// the handshake; bytes the reader had buffered are the first TLS reads.
/// The old handles then belong to it: do no more I/O on them.
Coro<std::pair<StreamReader, StreamWriter>> start_tls(StreamReader reader, StreamWriter writer,
                                                      std::string host, ConnectOptions opts);

/// Binds every address getaddrinfo(host, AI_PASSIVE) gives ("" is every
/// interface: 0.0.0.0 and ::, IPv6 sockets with IPV6_V6ONLY as asyncio), all
/// on the same port (port 0: the one the first bind picked), and serves.
Coro<Server> start_server(ClientConnected handler, std::string host, std::uint16_t port,
                          ServerOptions opts = {});
/// Removes a stale socket file at path first and the server's own on close
/// (as asyncio does).
Coro<Server> start_unix_server(ClientConnected handler, std::string path,
                               ServerOptions opts = {});

namespace detail {
// The Happy Eyeballs race of open_connection over given addresses, in the
// order given: for tests, and for code that resolved the host itself.
Coro<Socket> connect_staggered(std::vector<SocketAddress> addresses, ConnectOptions opts);
}  // namespace detail

}  // namespace corio
