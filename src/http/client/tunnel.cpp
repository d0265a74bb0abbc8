// open_tunnel (see tunnel.hpp).
#include <corio/errors.hpp>
#include <corio/http/tunnel.hpp>
#include <corio/streams.hpp>
#include <corio/timeout.hpp>

#include "http/client/head_exchange.hpp"
#include "http/wire/target.hpp"

namespace corio::http {

namespace {

// host:port as CONNECT's authority-form target: an IPv6 literal in brackets.
std::string authority(const std::string& host, std::uint16_t port) {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::string connect_request(const std::string& target, const Headers& headers) {
  std::string out = "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n";
  for (const Header& h : headers) {
    if (h.name.find_first_of(":\r\n") != std::string::npos || h.value.find_first_of("\r\n") != std::string::npos) {
      throw ValueError("a tunnel header with a line break or a colon in its name");
    }
    out += h.name + ": " + h.value + "\r\n";
  }
  return out + "\r\n";
}

}  // namespace

Coro<std::pair<StreamReader, StreamWriter>> open_tunnel(const Url& proxy, std::string host,
                                                        std::uint16_t port, TunnelOptions opts) {
  const std::string target = authority(host, port);
  if (!target::is_authority_form(target)) throw ValueError("not a host and port to tunnel to: " + target);
  ConnectOptions copts;
  if (proxy.is_https()) copts.ssl = opts.proxy_ssl ? *opts.proxy_ssl : SslContext::client();
  Coro<detail::HeadExchange> exchange =
      detail::exchange_head(proxy, std::move(copts), connect_request(target, opts.headers), opts.limits);
  detail::HeadExchange ex;
  if (opts.timeout) {
    ex = co_await wait_for(std::move(exchange), *opts.timeout);
  } else {
    ex = co_await std::move(exchange);
  }
  if (ex.head.status / 100 != 2) {
    ex.writer.close();
    throw ClientHttpProxyError(ex.head.status, "the proxy " + proxy.origin() + " answered CONNECT " +
                                                   target + " with " + std::to_string(ex.head.status));
  }
  if (!opts.ssl) co_return std::pair<StreamReader, StreamWriter>(std::move(ex.reader), std::move(ex.writer));
  ConnectOptions tls;
  tls.ssl = std::move(opts.ssl);
  tls.alpn_protocols = std::move(opts.alpn_protocols);
  try {
    co_return co_await start_tls(std::move(ex.reader), std::move(ex.writer), std::move(host), std::move(tls));
  } catch (const SslError& e) {
    throw ClientSSLError("TLS to " + target + " through the proxy " + proxy.origin() + ": " + e.what(), e.code());
  }
}

}  // namespace corio::http
