/// \file
/// corio::mcp::ProtectedResource: MCP authorization (2025-11-25) on the
/// server side, for a Streamable HTTP endpoint: the server is an OAuth
/// resource server that checks bearer tokens an authorization server issued.
///
/// <!-- doc: body (corio::mcp::TokenVerifier verify_token, corio::http::Server& http, corio::mcp::StreamableHttp& endpoint) -->
///     corio::mcp::ProtectedResource guard(
///         {.resource = "https://mcp.example.com/mcp",
///          .authorization_servers = {"https://auth.example.com"},
///          .scopes_supported = {"mcp:tools"}},
///         verify_token);                         // the token-verifier hook
///     guard.mount(http);                         // before the endpoint's routes run
///     endpoint.mount(http);
///
/// mount() serves the protected resource metadata (RFC 9728) at
/// /.well-known/oauth-protected-resource plus the resource's path, and
/// installs a middleware on the resource's path: a request without a
/// bearer token, or with one the verifier refuses, gets 401 with
/// `WWW-Authenticate: Bearer error="invalid_token", resource_metadata=...,
/// scope=...` (what the client's discovery starts from); a valid token
/// without every required scope gets 403 with error="insufficient_scope"
/// and the scopes needed (what a client steps up on). Everything else goes
/// on to the endpoint. The verifier is the application's: introspection
/// (RFC 7662), a JWT check against the issuer's keys, a lookup.
///
/// Suspends: the middleware while the verifier runs. Resumed by: whatever
/// the verifier awaits.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <corio/coro.hpp>
#include <corio/http/server.hpp>

namespace corio::mcp {

/// What a valid token grants.
struct TokenInfo {
  std::vector<std::string> scopes;  ///< the scopes it grants
  std::string subject;  ///< who it was issued to, for the application's logs
};

/// nullopt: the token is not valid here (unknown, expired, for another
/// resource: the verifier must check its audience).
using TokenVerifier = std::function<Coro<std::optional<TokenInfo>>(std::string token)>;

/// What a ProtectedResource says of itself (its RFC 9728 metadata) and
/// what it requires.
struct ProtectedResourceOptions {
  /// This server's MCP URL, the tokens' audience. A path alone ("/mcp"):
  /// the origin each request was addressed to (its Host) goes before it,
  /// for a server that does not know its public name or port beforehand.
  std::string resource;
  std::vector<std::string> authorization_servers;  ///< the issuers whose tokens it takes
  std::vector<std::string> scopes_supported = {};  ///< the metadata's scopes_supported
  /// Scopes every request needs (403 insufficient_scope without them).
  std::vector<std::string> required_scopes = {};
};

/// The server side of MCP authorization on an http::Server: the protected
/// resource metadata (RFC 9728) served, and requests to the resource
/// without a valid token answered 401, without the required scopes 403.
class ProtectedResource {
 public:
  /// verifier checks each request's bearer token.
  ProtectedResource(ProtectedResourceOptions options, TokenVerifier verifier);
  ProtectedResource(const ProtectedResource&) = delete;
  ProtectedResource& operator=(const ProtectedResource&) = delete;

  /// The metadata route and the middleware; http must be started after,
  /// and this object must outlive it.
  void mount(http::Server& http);
  /// Where the metadata is served, on this server (the challenges name it
  /// with the origin in front).
  const std::string& metadata_path() const noexcept { return metadata_path_; }

 private:
  static Coro<http::Response> ready(http::Response r);
  Coro<http::Response> guard(http::Request& req, http::Next next);
  http::Response refusal(const http::Request& req, int status, const char* error) const;
  // The origin the resource is known by: the configured one, else req's.
  std::string origin(const http::Request& req) const;

  ProtectedResourceOptions options_;
  TokenVerifier verifier_;
  std::string origin_;  // "" when each request's Host says it
  std::string path_;    // the resource's path, which the middleware guards
  std::string metadata_path_;
  std::string scheme_ = "http";
};

}  // namespace corio::mcp
