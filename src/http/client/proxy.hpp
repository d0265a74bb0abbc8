// The client's proxy choice: the session's proxies (ClientOptions::proxy,
// or HTTP_PROXY / HTTPS_PROXY / NO_PROXY with trust_env), a request's
// override, and the NO_PROXY rules curl and Python's urllib follow: a
// comma-separated list of host names (each also matching its subdomains,
// a leading "." allowed), IP addresses, an optional ":port", or "*" for
// every host. Pure functions: tested without sockets.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <corio/http/client.hpp>
#include <corio/http/url.hpp>

namespace corio::http::detail {

struct ProxyConfig {
  std::optional<Url> http;   // for http URLs
  std::optional<Url> https;  // for https URLs (tunnelled with CONNECT)
  std::vector<std::string> no_proxy;

  // ValueError for a proxy URL that is not http(s) or carries credentials.
  // getenv is a parameter so that tests need not touch the environment.
  static ProxyConfig from(const ClientOptions& opts,
                          const std::function<const char*(const char*)>& getenv);
  bool empty() const noexcept { return !http && !https; }
  std::optional<Url> for_url(const Url& target) const;
};

// The proxy of one request: the request's own ("" for none), else the session's.
std::optional<Url> choose_proxy(const ProxyConfig* session, const std::optional<std::string>& request,
                                const Url& target);
bool bypasses_proxy(const std::vector<std::string>& no_proxy, const Url& target);
Url parse_proxy_url(std::string_view text);

}  // namespace corio::http::detail
