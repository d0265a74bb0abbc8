// What the OAuth client's steps share (see corio/mcp/auth.hpp): the
// challenge's parameters, the metadata discovery found, and the small
// pieces of encoding and randomness the flow needs.
#pragma once

#include <string>
#include <string_view>

#include <corio/coro.hpp>
#include <corio/http/client.hpp>
#include <corio/mcp/jsonrpc.hpp>

namespace corio::mcp::detail {

// A Bearer challenge's auth-params (RFC 6750 section 3, RFC 9728 section 5.1).
struct Challenge {
  std::string resource_metadata;
  std::string scope;
  std::string error;
};
Challenge parse_challenge(std::string_view www_authenticate);

// What discovery found for one MCP server.
struct Discovered {
  std::string resource;        // the resource indicator (RFC 8707)
  json resource_metadata;      // RFC 9728, null when the server has none
  json server_metadata;        // RFC 8414 / OpenID; its endpoints filled in
  std::string issuer;          // the authorization server, for the store
};
// Steps 2 and 3 of auth.hpp's list. RpcError when the resource metadata
// names another resource.
Coro<Discovered> discover(http::ClientSession& http, const std::string& server_url,
                          const std::string& resource_metadata_url);

// RFC 4648 section 5, without padding.
std::string base64url(std::string_view bytes);
std::string base64(std::string_view bytes);
// n bytes from the system's CSPRNG, base64url-encoded.
std::string random_token(std::size_t n);
// PKCE S256: BASE64URL(SHA256(verifier)).
std::string s256_challenge(std::string_view verifier);

// A JWT (compact JWS) of claims signed with the PEM private key; alg
// ES256 or RS256.
std::string signed_jwt(const json& claims, const std::string& private_key_pem, const std::string& alg);

// An OAuth failure, for the caller's RpcError.
[[noreturn]] void fail(const std::string& why);

}  // namespace corio::mcp::detail
