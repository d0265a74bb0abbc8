/// \file
/// corio::mcp::OAuth: MCP authorization (2025-11-25) on the client side,
/// OAuth 2.1 as the spec profiles it, for StreamableHttpClient.
///
/// <!-- doc: body (std::function<corio::Coro<std::string>(std::string)> open_browser_and_wait_for_redirect, std::string url) -->
///     corio::mcp::OAuthOptions o;
///     o.redirect_uri = "http://localhost:3000/callback";
///     o.authorize = open_browser_and_wait_for_redirect;   // the interactive step
///     corio::mcp::OAuth oauth(std::move(o));
///     corio::mcp::StreamableHttpClient transport(url);
///     transport.set_authorization(&oauth);
///
/// What happens on a refusal (the transport calls on_refused() for a 401,
/// or a 403 whose error is insufficient_scope, then repeats the request):
/// <!-- doc: text -->
///     1. the challenge's WWW-Authenticate is read: resource_metadata, scope;
///     2. the protected resource's metadata (RFC 9728) from resource_metadata,
///        else the well-known URIs (path-based first, then the root); its
///        resource must be this server, or the flow stops (a server must not
///        get tokens minted for another);
///     3. the authorization server's metadata: RFC 8414 and OpenID discovery
///        at the URIs the spec orders (path-inserted first); a 2025-03-26
///        server with no metadata at all gets its root's /authorize, /token
///        and /register;
///     4. a client id: the pre-registered one, the one stored for this
///        authorization server, the client ID metadata document's URL when
///        the server supports those, else dynamic registration (RFC 7591);
///     5. tokens: a refresh when a refresh token is held (a 401 only), else
///        the client credentials grant (client_credentials), the identity
///        provider's assertion (enterprise, SEP-990) or the
///        authorization code grant with PKCE S256, its authorization URL
///        handed to authorize() and the code read from the redirect it
///        returns (state checked); the scope is the challenge's, else the
///        resource's scopes_supported, else none; the resource indicator
///        (RFC 8707) goes with every request; the client authenticates to
///        the token endpoint as registered (client_secret_basic, _post,
///        private_key_jwt with a key, or none, whichever the server supports).
/// Tokens and registrations go to a TokenStore (in memory by default).
///
/// Suspends: on_refused() for the HTTP exchanges and authorize(). Resumed
/// by: the loop (the connections), whatever authorize() awaits.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <corio/coro.hpp>
#include <corio/http/client.hpp>

namespace corio::mcp {

/// What an authorization server's token endpoint issued.
struct OAuthTokens {
  std::string access_token;  ///< the bearer token requests carry
  std::string refresh_token;  ///< "" if none was issued
  std::string scope;          ///< as granted, if the server said
};

/// This client as an authorization server knows it: registered
/// beforehand, dynamically (RFC 7591), or by its metadata document.
struct OAuthClientInfo {
  std::string client_id = {};  ///< the id the authorization server gave (or knows) it by
  std::string client_secret = {};  ///< "" for a public client
  /// client_secret_basic, client_secret_post, private_key_jwt or none;
  /// "" to choose from what the client has and the server supports.
  std::string token_endpoint_auth_method = {};
  /// For private_key_jwt: the client's key (PEM) and its JWS algorithm
  /// (ES256 or RS256).
  std::string private_key_pem = {};
  std::string signing_algorithm = "ES256";  ///< the JWS algorithm for private_key_pem
};

/// Where tokens (by resource) and client registrations (by authorization
/// server issuer) are kept between runs: implement it over a keychain or a
/// file to keep a user signed in.
class TokenStore {
 public:
  virtual ~TokenStore() = default;
  /// The tokens kept for this MCP server (the resource's URL), if any.
  virtual std::optional<OAuthTokens> tokens(const std::string& resource) = 0;
  /// Keeps the tokens for resource.
  virtual void save_tokens(const std::string& resource, const OAuthTokens& tokens) = 0;
  /// The registration kept for this authorization server, if any.
  virtual std::optional<OAuthClientInfo> client(const std::string& issuer) = 0;
  /// Keeps the registration for issuer.
  virtual void save_client(const std::string& issuer, const OAuthClientInfo& client) = 0;
};

/// A TokenStore in memory, for one run (the default).
class MemoryTokenStore final : public TokenStore {
 public:
  /// TokenStore::tokens().
  std::optional<OAuthTokens> tokens(const std::string& resource) override;
  /// TokenStore::save_tokens().
  void save_tokens(const std::string& resource, const OAuthTokens& tokens) override;
  /// TokenStore::client().
  std::optional<OAuthClientInfo> client(const std::string& issuer) override;
  /// TokenStore::save_client().
  void save_client(const std::string& issuer, const OAuthClientInfo& client) override;

 private:
  std::map<std::string, OAuthTokens> tokens_;
  std::map<std::string, OAuthClientInfo> clients_;
};

/// Enterprise-managed authorization (SEP-990, cross-app access): the
/// user's identity provider vouches for them. Its ID token is exchanged
/// there (RFC 8693) for an identity assertion grant (ID-JAG) meant for the
/// MCP server's authorization server, which takes it as a JWT bearer grant
/// (RFC 7523) from the client authenticated with `client`.
struct EnterpriseIdentity {
  std::string idp_token_endpoint;  ///< the identity provider's token endpoint (the exchange)
  std::string idp_client_id;  ///< this client at the identity provider
  std::string id_token;       ///< the user's, from signing in there
};

/// How OAuth signs this client in: who it is, which grant, and where the
/// tokens are kept.
struct OAuthOptions {
  std::string client_name = "corio";  ///< client_name in the metadata it registers with
  /// Where the authorization server sends the user back (the code grant).
  std::string redirect_uri = "http://localhost:3000/callback";
  /// An HTTPS URL serving this client's metadata document: the client id
  /// where the authorization server supports client ID metadata documents.
  std::string client_metadata_url;
  /// Credentials registered beforehand (no dynamic registration then).
  std::optional<OAuthClientInfo> client;
  /// Machine to machine: the client credentials grant with `client`,
  /// no user and no authorize().
  bool client_credentials = false;
  /// Cross-app access instead of the user's consent at the authorization
  /// server (with `client`).
  std::optional<EnterpriseIdentity> enterprise;
  /// The interactive step: show the user this authorization URL; the
  /// result is the URL the authorization server redirected back to
  /// (redirect_uri with code and state). Needed for the code grant.
  std::function<Coro<std::string>(std::string authorization_url)> authorize;
  /// Where tokens and registrations are kept; null: in memory.
  std::shared_ptr<TokenStore> store;
};

/// The client side of MCP authorization (2025-11-25), for a
/// StreamableHttpClient (set_authorization()): discovery, registration,
/// the grants and refresh, run when a server refuses a request.
class OAuth {
 public:
  /// Nothing is sent before a server refuses a request (on_refused()).
  explicit OAuth(OAuthOptions options);
  OAuth(const OAuth&) = delete;
  OAuth& operator=(const OAuth&) = delete;
  ~OAuth();

  /// The Authorization header for requests to this MCP server URL, "" while
  /// there is no token for it.
  std::string authorization(const std::string& server_url);
  /// The server refused a request (status 401 or 403, its WWW-Authenticate
  /// challenge): true once fresh tokens are stored and the request should be
  /// repeated, false when this refusal is not one authorization can cure (a
  /// 403 for anything but insufficient_scope). Throws RpcError with the
  /// reason when a step fails (discovery, registration, the grant).
  Coro<bool> on_refused(http::ClientSession& http, std::string server_url, int status,
                        std::string challenge);

 private:
  struct Flow;
  std::unique_ptr<Flow> flow_;
};

}  // namespace corio::mcp
