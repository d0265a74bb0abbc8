/// \file
/// corio::SslContext: the TLS settings connections are made with (asyncio's
/// ssl.SSLContext), and the TLS errors.
///
/// <!-- doc: body (corio::ClientConnected handler) -->
///     corio::ConnectOptions opts;
///     opts.ssl = corio::SslContext::client();  // verifies the chain and the host name
///     auto [reader, writer] = co_await corio::open_connection("example.org", 443, opts);
///
///     corio::ServerOptions sopts;
///     sopts.ssl = corio::SslContext::server("cert.pem", "key.pem");
///     corio::Server server = co_await corio::start_server(handler, "", 8443, sopts);
///
/// A copyable handle: copies share one OpenSSL SSL_CTX, so a change made
/// through any copy applies to every connection started afterwards (a
/// connection takes its settings when it starts). Making one and the loading
/// calls read files, blocking (client() parses the system's CA bundle, tens
/// of milliseconds): make contexts once, before serving, and share them.
/// OpenSSL's headers stay out of this one (DESIGN.md).
///
/// What a TLS connection adds to the streams (the TLS transport, OpenSSL over
/// memory BIOs, sits under the same StreamReader/StreamWriter):
/// <!-- doc: text -->
///     - the handshake runs inside open_connection(), and before the handler
///       on a server; ssl_handshake_timeout bounds it (TimeoutError). A server
///       closes a connection whose handshake failed and goes on serving; the
///       failure reaches the exception handler only in debug mode (asyncio).
///     - StreamWriter::get_extra_info: "ssl_version" ("TLSv1.3"), "cipher",
///       "alpn_protocol" ("" if none was agreed), "server_hostname" (the SNI
///       sent, or received by a server), "peercert_subject" (RFC 2253, "" with
///       no peer certificate).
///     - write_eof() sends close_notify: the peer reads EOF, this side can
///       still read (TLS 1.3's half-close).
///     - close() sends close_notify, waits up to ssl_shutdown_timeout for the
///       peer's, then closes the socket regardless; wait_closed() returns after
///       that. Dropping every handle without close() does the same in the
///       background. abort() closes at once, saying nothing.
///     - EOF without the peer's close_notify is an error, not EOF: the read
///       throws SslEofError ("unexpected eof while reading", asyncio's
///       SSLEOFError), so a truncated response is detectable. Code that must
///       accept peers skipping close_notify reads in pieces (read(n),
///       readline()) and takes SslEofError for the end: read() to EOF throws
///       it without returning what it had gathered.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace corio {

namespace detail {
struct SslContextAccess;
}

/// TLS settings for connections: asyncio's ssl.SSLContext (details at the top of ssl.hpp).
class SslContext {
 public:
  /// A client context: verifies the server's certificate chain against the
  /// system's CA store and its name against server_hostname; TLS 1.2 or later.
  static SslContext client();
  /// A server context presenting cert_file (PEM, the chain after the leaf)
  /// with key_file; TLS 1.2 or later; no client certificate asked for.
  static SslContext server(const std::string& cert_file, const std::string& key_file);

  /// Trusts the CA certificates in cafile (PEM) too. SslError if unreadable.
  void load_verify_locations(const std::string& cafile);
  /// The certificate chain and key this side presents. SslError if they are
  /// unreadable or do not match.
  void load_cert_chain(const std::string& cert_file, const std::string& key_file);

  /// Client: verify the server's certificate (on by default; off also turns
  /// the host name check off: an explicit opt-out, for tests). Server: ask
  /// for a client certificate and require it to verify (off by default).
  void set_verify(bool enabled);
  /// Whether certificates are verified (see set_verify).
  bool verify() const noexcept;
  /// Client: check the certificate against server_hostname (on by default;
  /// on also turns verification on).
  void set_check_hostname(bool enabled);
  /// Whether the host name is checked (see set_check_hostname).
  bool check_hostname() const noexcept;
  /// ALPN protocols in preference order ({"h2", "http/1.1"}); a server picks
  /// its first one the client offers, and none if there is no overlap.
  /// ValueError for an empty or over-255-byte name.
  void set_alpn_protocols(const std::vector<std::string>& protocols);
  /// Whether it was made by server().
  bool server_side() const noexcept;

  struct Impl;  ///< the SSL_CTX and what corio keeps beside it (src/net/tls.hpp)

 private:
  friend struct detail::SslContextAccess;
  explicit SslContext(std::shared_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
  // shared_ptr, not a loop-affine count: one context may serve the loops of
  // several threads.
  std::shared_ptr<Impl> impl_;
};

/// The category of SslError codes: the value is OpenSSL's packed error code
/// (ERR_get_error(); ERR_GET_REASON() of it is the reason, SSL_R_...).
const std::error_category& ssl_category() noexcept;

/// A TLS failure (asyncio's ssl.SSLError). A std::system_error, as SSLError
/// is an OSError: stream code handling connection errors handles it too, and
/// it sticks to a stream as an OS error does. what() is OpenSSL's reason
/// ("wrong version number", "tlsv1 alert unknown ca", ...).
class SslError : public std::system_error {
 public:
  /// OpenSSL's packed error code and its reason, as text.
  SslError(int openssl_error, const std::string& message)
      : std::system_error(openssl_error, ssl_category()), text_(message) {}
  /// The reason ("wrong version number", ...).
  const char* what() const noexcept override { return text_.what(); }

 private:
  std::runtime_error text_;  // a copy that cannot throw, as exceptions want
};

/// The peer's certificate was rejected: "certificate verify failed:
/// self-signed certificate" (asyncio's SSLCertVerificationError).
/// verify_code is OpenSSL's X509_V_ERR_... value.
class SslCertVerificationError : public SslError {
 public:
  /// As SslError, with OpenSSL's X509_V_ERR_... code.
  SslCertVerificationError(int openssl_error, const std::string& message, long x509_error)
      : SslError(openssl_error, message), verify_code(x509_error) {}
  /// OpenSSL's X509_V_ERR_... code of the rejection.
  long verify_code;
};

/// The peer closed the connection without close_notify (asyncio's
/// SSLEOFError): "unexpected eof while reading".
class SslEofError : public SslError {
 public:
  /// SslError's constructor.
  using SslError::SslError;
};

}  // namespace corio
