/// \file
/// corio::http::open_tunnel: a connection to host:port through an HTTP
/// proxy, with CONNECT (RFC 9110 section 9.3.6), as the client's proxy
/// support and anyone who wants a raw tunnel use it.
///
/// <!-- doc: body (std::string credentials) -->
///     corio::http::TunnelOptions opts;
///     opts.headers.set("Proxy-Authorization", "Basic " + credentials);
///     auto [reader, writer] = co_await corio::http::open_tunnel(
///         corio::http::Url::parse("http://proxy.local:3128"), "example.org", 443, opts);
///     // bytes written now go to example.org:443, as they are
///
/// The proxy is reached over TLS when its URL is https (proxy_ssl, or the
/// system's CAs). The proxy's 2xx ends the HTTP part: what follows its head
/// is the tunnel's, already buffered in the reader if it came along (with
/// TunnelOptions::ssl, TLS to the target starts over it first). Any
/// other answer is ClientHttpProxyError with its status (407: the proxy
/// wants credentials), and the connection is closed.
///
/// Suspends: until the proxy answered (or timeout: TimeoutError). Resumed
/// by: the loop.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include <corio/coro.hpp>
#include <corio/http/client_errors.hpp>
#include <corio/http/headers.hpp>
#include <corio/http/parser.hpp>
#include <corio/http/url.hpp>
#include <corio/ssl.hpp>
#include <corio/stream_reader.hpp>
#include <corio/stream_writer.hpp>

namespace corio::http {

/// The proxy refused the tunnel (aiohttp's ClientHttpProxyError).
class ClientHttpProxyError : public ClientResponseError {
 public:
  using ClientResponseError::ClientResponseError;
};

/// How open_tunnel() talks to the proxy, and TLS over the tunnel.
struct TunnelOptions {
  Headers headers;                      ///< sent with the CONNECT (Proxy-Authorization, ...)

  /// TLS to host through the tunnel (an https origin): the streams returned
  /// are then the encrypted connection's, after its handshake (start_tls).
  std::optional<SslContext> ssl;
  std::optional<SslContext> proxy_ssl;  ///< for an https proxy; default SslContext::client()
  /// ALPN protocols offered to host inside the tunnel instead of ssl's (an
  /// HTTP client offers "h2" there as on a direct connection).
  std::optional<std::vector<std::string>> alpn_protocols;

  /// Connecting to the proxy and its answer; empty: no limit.
  std::optional<std::chrono::milliseconds> timeout = std::chrono::seconds(60);
  Limits limits;  ///< the answer's head
};

/// A connection to host:port through proxy (an http or https URL), by CONNECT.
[[nodiscard]] Coro<std::pair<StreamReader, StreamWriter>> open_tunnel(const Url& proxy, std::string host,
                                                                      std::uint16_t port,
                                                                      TunnelOptions opts = {});

}  // namespace corio::http
