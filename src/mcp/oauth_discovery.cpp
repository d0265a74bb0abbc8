// OAuth discovery for an MCP server (steps 1 to 3 of corio/mcp/auth.hpp):
// the challenge, the protected resource's metadata, the authorization
// server's, and the encodings the flow uses.
#include "mcp/oauth_internal.hpp"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <vector>

#include <corio/detail/entropy.hpp>
#include <corio/errors.hpp>
#include <corio/http/url.hpp>

namespace corio::mcp::detail {

namespace {

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  return std::string(s.substr(b, s.find_last_not_of(" \t") - b + 1));
}

// One auth-param's value at `at`: a quoted-string (backslash escapes) or a
// token up to the next comma.
std::string param_value(std::string_view s, std::size_t& at) {
  std::string v;
  if (at < s.size() && s[at] == '"') {
    for (++at; at < s.size() && s[at] != '"'; ++at) {
      if (s[at] == '\\' && at + 1 < s.size()) ++at;
      v += s[at];
    }
    ++at;
    return v;
  }
  const std::size_t end = std::min(s.find(',', at), s.size());
  v = trim(s.substr(at, end - at));
  at = end;
  return v;
}

// The metadata document at url, or null if it is not there (any status
// but 200, or not a JSON object).
Coro<json> fetch_metadata(http::ClientSession& http, std::string url) {
  http::RequestOptions opts;
  opts.headers.set("Accept", "application/json");
  opts.headers.set("MCP-Protocol-Version", "2025-11-25");
  http::ClientResponse r = co_await http.get(std::move(url), std::move(opts));
  if (r.status() != 200) {
    r.release();
    co_return nullptr;
  }
  const std::string body = co_await r.read();
  json j = json::parse(body, nullptr, false);
  co_return j.is_object() ? j : json();
}

Coro<json> first_found(http::ClientSession& http, std::vector<std::string> urls) {
  for (std::string& url : urls) {
    json j = co_await fetch_metadata(http, std::move(url));
    if (!j.is_null()) co_return j;
  }
  co_return nullptr;
}

std::string without_trailing_slash(std::string path) {
  while (!path.empty() && path.back() == '/') path.pop_back();
  return path;
}

// RFC 9728 section 3.1: the well-known name inserted before the path;
// the spec has clients try the path-based URI first, then the root.
std::vector<std::string> resource_metadata_urls(const http::Url& server) {
  const std::string base = server.origin() + "/.well-known/oauth-protected-resource";
  const std::string path = without_trailing_slash(server.path);
  if (path.empty()) return {base};
  return {base + path, base};
}

// RFC 8414 section 3.1 and OpenID Connect Discovery, in the order MCP
// 2025-11-25 gives for issuers with and without a path.
std::vector<std::string> server_metadata_urls(const http::Url& issuer) {
  const std::string o = issuer.origin();
  const std::string path = without_trailing_slash(issuer.path);
  if (path.empty()) return {o + "/.well-known/oauth-authorization-server", o + "/.well-known/openid-configuration"};
  return {o + "/.well-known/oauth-authorization-server" + path,
          o + "/.well-known/openid-configuration" + path, o + path + "/.well-known/openid-configuration"};
}

// The resource the metadata names must be this server: the same origin,
// and a path that is this one or a parent of it.
bool same_resource(const http::Url& server, std::string_view resource) {
  http::Url r;
  try {
    r = http::Url::parse(resource);
  } catch (const std::exception&) {
    return false;
  }
  const std::string rp = without_trailing_slash(r.path), sp = without_trailing_slash(server.path);
  return r.origin() == server.origin() &&
         (rp.empty() || sp == rp || (sp.starts_with(rp) && sp[rp.size()] == '/'));
}

}  // namespace

Challenge parse_challenge(std::string_view s) {
  Challenge c;
  std::size_t at = s.find(' ');  // past the scheme ("Bearer")
  while (at != std::string_view::npos && at < s.size()) {
    at = s.find_first_not_of(" \t,", at);
    if (at == std::string_view::npos) break;
    const std::size_t eq = s.find('=', at);
    if (eq == std::string_view::npos) break;
    const std::string name = trim(s.substr(at, eq - at));
    at = eq + 1;
    while (at < s.size() && s[at] == ' ') ++at;
    std::string value = param_value(s, at);
    if (name == "resource_metadata") c.resource_metadata = std::move(value);
    if (name == "scope") c.scope = std::move(value);
    if (name == "error") c.error = std::move(value);
  }
  return c;
}

Coro<Discovered> discover(http::ClientSession& http, const std::string& server_url,
                          const std::string& resource_metadata_url) {
  const http::Url server = http::Url::parse(server_url);
  Discovered d;
  d.resource = server.origin() + server.path;
  // (Not a conditional expression: g++ 12 runs a co_await inside one twice.)
  if (resource_metadata_url.empty()) {
    d.resource_metadata = co_await first_found(http, resource_metadata_urls(server));
  } else {
    d.resource_metadata = co_await fetch_metadata(http, resource_metadata_url);
  }
  std::string issuer = server.origin();  // 2025-03-26: the server is its own authorization server
  if (d.resource_metadata.is_object()) {
    const std::string named = d.resource_metadata.value("resource", "");
    if (!named.empty() && !same_resource(server, named)) {
      fail("the protected resource metadata names " + named + ", not " + d.resource);
    }
    if (!named.empty()) d.resource = named;
    const json servers = d.resource_metadata.value("authorization_servers", json::array());
    if (servers.is_array() && !servers.empty() && servers[0].is_string()) issuer = servers[0].get<std::string>();
  }
  const http::Url as = http::Url::parse(issuer);
  d.issuer = issuer;
  d.server_metadata = co_await first_found(http, server_metadata_urls(as));
  if (!d.server_metadata.is_object()) {
    // 2025-03-26's fallback: the default endpoints at the server's root.
    d.server_metadata = {{"authorization_endpoint", as.origin() + "/authorize"},
                         {"token_endpoint", as.origin() + "/token"},
                         {"registration_endpoint", as.origin() + "/register"}};
  }
  co_return d;
}

std::string base64(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()),
                                static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

std::string base64url(std::string_view bytes) {
  std::string s = base64(bytes);
  while (!s.empty() && s.back() == '=') s.pop_back();
  for (char& c : s) c = c == '+' ? '-' : c == '/' ? '_' : c;
  return s;
}

std::string random_token(std::size_t n) {
  std::string bytes(n, '\0');
  if (!corio::detail::seeded_secret(bytes.data(), n) &&
      RAND_bytes(reinterpret_cast<unsigned char*>(bytes.data()), static_cast<int>(n)) != 1) {
    fail("no randomness for PKCE");
  }
  return base64url(bytes);
}

std::string s256_challenge(std::string_view verifier) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(verifier.data(), verifier.size(), digest, &len, EVP_sha256(), nullptr);
  return base64url(std::string_view(reinterpret_cast<const char*>(digest), len));
}

void fail(const std::string& why) { throw RpcError(error_code::internal_error, "authorization: " + why); }

}  // namespace corio::mcp::detail
