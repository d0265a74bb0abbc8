// Proxy choice (see proxy.hpp).
#include "http/client/proxy.hpp"

#include <corio/errors.hpp>

#include "http/wire/syntax.hpp"

namespace corio::http::detail {

namespace {

// The first of the variables that is set and not empty.
const char* first_set(const std::function<const char*(const char*)>& getenv,
                      std::initializer_list<const char*> names) {
  for (const char* name : names) {
    const char* v = getenv(name);
    if (v && *v) return v;
  }
  return nullptr;
}

bool host_matches(std::string_view entry, std::string_view host) {
  if (!entry.empty() && entry.front() == '.') entry.remove_prefix(1);
  if (entry.empty()) return false;
  if (iequals(entry, host)) return true;
  return host.size() > entry.size() && host[host.size() - entry.size() - 1] == '.' &&
         iequals(host.substr(host.size() - entry.size()), entry);
}

}  // namespace

Url parse_proxy_url(std::string_view text) {
  std::string full(syntax::trim_ows(text));
  if (full.find("://") == std::string::npos) full = "http://" + full;  // "proxy:3128", as curl reads it
  const std::size_t at = full.find('@');
  if (at != std::string::npos && at < full.find('/', full.find("://") + 3)) {
    throw ValueError("a proxy URL with credentials: give them as a Proxy-Authorization "
                     "header in ClientOptions::proxy_headers");
  }
  return Url::parse(full);
}

ProxyConfig ProxyConfig::from(const ClientOptions& opts,
                              const std::function<const char*(const char*)>& getenv) {
  ProxyConfig c;
  if (opts.proxy) {
    c.http = c.https = parse_proxy_url(*opts.proxy);
    return c;
  }
  if (!opts.trust_env) return c;
  if (const char* v = first_set(getenv, {"http_proxy", "HTTP_PROXY"})) c.http = parse_proxy_url(v);
  if (const char* v = first_set(getenv, {"https_proxy", "HTTPS_PROXY"})) c.https = parse_proxy_url(v);
  if (const char* v = first_set(getenv, {"no_proxy", "NO_PROXY"})) {
    syntax::for_each_element(v, [&c](std::string_view entry) { c.no_proxy.emplace_back(entry); });
  }
  return c;
}

bool bypasses_proxy(const std::vector<std::string>& no_proxy, const Url& target) {
  for (std::string_view entry : no_proxy) {
    if (entry == "*") return true;
    // "host:port" matches that port only; an IPv6 literal may be bracketed.
    std::string_view host = entry;
    std::optional<std::string_view> port;
    const std::size_t colon = entry.rfind(':');
    if (colon != std::string_view::npos && entry.find(':') == colon) {
      host = entry.substr(0, colon);
      port = entry.substr(colon + 1);
    }
    if (host.size() > 1 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    if (port && *port != std::to_string(target.port)) continue;
    if (host_matches(host, target.host)) return true;
  }
  return false;
}

std::optional<Url> ProxyConfig::for_url(const Url& target) const {
  const std::optional<Url>& proxy = target.is_https() ? https : http;
  if (!proxy || bypasses_proxy(no_proxy, target)) return std::nullopt;
  return proxy;
}

std::optional<Url> choose_proxy(const ProxyConfig* session, const std::optional<std::string>& request,
                                const Url& target) {
  if (request) {
    if (request->empty()) return std::nullopt;
    return parse_proxy_url(*request);
  }
  if (!session) return std::nullopt;
  return session->for_url(target);
}

}  // namespace corio::http::detail
