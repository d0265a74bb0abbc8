// ProtectedResource (see protected_resource.hpp): RFC 9728 metadata and
// RFC 6750 bearer checks in front of an MCP endpoint.
#include <corio/mcp/protected_resource.hpp>

#include <algorithm>

#include <corio/http/url.hpp>
#include <corio/mcp/jsonrpc.hpp>

namespace corio::mcp {

namespace {

std::string joined(const std::vector<std::string>& scopes) {
  std::string out;
  for (const std::string& s : scopes) out += (out.empty() ? "" : " ") + s;
  return out;
}

// A quoted-string's content (RFC 9110 section 5.6.4).
std::string quoted_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

bool has_all(const std::vector<std::string>& granted, const std::vector<std::string>& needed) {
  return std::all_of(needed.begin(), needed.end(), [&](const std::string& s) {
    return std::find(granted.begin(), granted.end(), s) != granted.end();
  });
}

}  // namespace

ProtectedResource::ProtectedResource(ProtectedResourceOptions options, TokenVerifier verifier)
    : options_(std::move(options)), verifier_(std::move(verifier)) {
  if (options_.resource.starts_with('/')) {
    path_ = options_.resource;
  } else {
    const http::Url url = http::Url::parse(options_.resource);
    origin_ = url.origin();
    path_ = url.path;
  }
  // RFC 9728 section 3.1: the well-known name goes before the path.
  metadata_path_ = "/.well-known/oauth-protected-resource" + (path_ == "/" ? std::string() : path_);
}

std::string ProtectedResource::origin(const http::Request& req) const {
  if (!origin_.empty()) return origin_;
  return scheme_ + "://" + std::string(req.headers().get_or("Host", "localhost"));
}

void ProtectedResource::mount(http::Server& http) {
  if (http.options().ssl) scheme_ = "https";
  http.get(metadata_path_, [this](http::Request& req) {
    json metadata = {{"resource", origin(req) + path_},
                     {"authorization_servers", options_.authorization_servers},
                     {"bearer_methods_supported", {"header"}}};
    if (!options_.scopes_supported.empty()) metadata["scopes_supported"] = options_.scopes_supported;
    return ready(http::Response::json(metadata));
  });
  http.use([this](http::Request& req, http::Next next) { return guard(req, next); });
}

Coro<http::Response> ProtectedResource::ready(http::Response r) { co_return r; }

http::Response ProtectedResource::refusal(const http::Request& req, int status, const char* error) const {
  http::Response r = http::Response::json({{"error", error}}, status);
  std::string challenge = "Bearer error=" + quoted_string(error) +
                          ", resource_metadata=" + quoted_string(origin(req) + metadata_path_);
  if (!options_.required_scopes.empty()) challenge += ", scope=" + quoted_string(joined(options_.required_scopes));
  r.headers.set("WWW-Authenticate", challenge);
  return r;
}

Coro<http::Response> ProtectedResource::guard(http::Request& req, http::Next next) {
  if (req.path() != path_) co_return co_await next(req);
  const std::string_view header = req.headers().get_or("Authorization", "");
  // RFC 6750 section 2.1; the scheme is case-insensitive.
  const bool bearer = header.size() > 7 && (header.substr(0, 7) == "Bearer " || header.substr(0, 7) == "bearer ");
  std::optional<TokenInfo> info;
  if (bearer) info = co_await verifier_(std::string(header.substr(7)));
  if (!info) co_return refusal(req, 401, "invalid_token");
  if (!has_all(info->scopes, options_.required_scopes)) co_return refusal(req, 403, "insufficient_scope");
  co_return co_await next(req);
}

}  // namespace corio::mcp
