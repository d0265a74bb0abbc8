// OAuth (see corio/mcp/auth.hpp): the client's identity and the grants
// (steps 4 and 5); discovery is in oauth_discovery.cpp.
#include <corio/mcp/auth.hpp>

#include <algorithm>
#include <chrono>

#include <fmt/core.h>

#include <corio/errors.hpp>
#include <corio/http/url.hpp>

#include "mcp/oauth_internal.hpp"

namespace corio::mcp {

using detail::fail;

std::optional<OAuthTokens> MemoryTokenStore::tokens(const std::string& resource) {
  const auto it = tokens_.find(resource);
  return it == tokens_.end() ? std::nullopt : std::optional(it->second);
}
void MemoryTokenStore::save_tokens(const std::string& resource, const OAuthTokens& tokens) {
  tokens_[resource] = tokens;
}
std::optional<OAuthClientInfo> MemoryTokenStore::client(const std::string& issuer) {
  const auto it = clients_.find(issuer);
  return it == clients_.end() ? std::nullopt : std::optional(it->second);
}
void MemoryTokenStore::save_client(const std::string& issuer, const OAuthClientInfo& client) {
  clients_[issuer] = client;
}

namespace {

bool supports(const json& metadata, const char* list, std::string_view value) {
  const json l = metadata.value(list, json::array());
  return l.is_array() && std::find(l.begin(), l.end(), value) != l.end();
}

std::string joined(const json& list) {
  std::string out;
  for (const json& s : list.is_array() ? list : json::array()) {
    if (!s.is_string()) continue;
    if (!out.empty()) out += ' ';
    out += s.get<std::string>();
  }
  return out;
}

// How a client with (or without) a secret authenticates to this server's
// token endpoint: RFC 8414's default is client_secret_basic.
std::string auth_method_for(const json& server, bool has_secret) {
  if (!has_secret) return "none";
  if (!server.contains("token_endpoint_auth_methods_supported")) return "client_secret_basic";
  for (const char* m : {"client_secret_basic", "client_secret_post"}) {
    if (supports(server, "token_endpoint_auth_methods_supported", m)) return m;
  }
  return "none";
}

}  // namespace

struct OAuth::Flow {
  OAuthOptions opts;
  std::optional<detail::Discovered> found;
  std::string found_for;  // the resource_metadata URL `found` came from

  http::ClientSession* http = nullptr;  // during on_refused()

  // A token endpoint exchange: form plus the client's authentication.
  Coro<OAuthTokens> token_request(const OAuthClientInfo& client, http::QueryParams form) {
    const detail::Discovered& d = *found;
    http::RequestOptions req;
    form.emplace_back("resource", d.resource);
    if (client.token_endpoint_auth_method == "private_key_jwt") {
      form.emplace_back("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
      form.emplace_back("client_assertion", assertion(client));
    } else if (client.token_endpoint_auth_method == "client_secret_basic") {
      // RFC 6749 section 2.3.1: each part form-encoded, then Base64.
      const std::string pair = http::percent_encode(client.client_id) + ":" + http::percent_encode(client.client_secret);
      req.headers.set("Authorization", "Basic " + detail::base64(pair));
    } else {
      form.emplace_back("client_id", client.client_id);
      if (client.token_endpoint_auth_method == "client_secret_post") form.emplace_back("client_secret", client.client_secret);
    }
    req.headers.set("Accept", "application/json");
    req.form = std::move(form);
    http::ClientResponse r = co_await http->post(d.server_metadata.value("token_endpoint", ""), std::move(req));
    const std::string body = co_await r.read();
    const json j = json::parse(body, nullptr, false);
    if (!r.ok() || !j.is_object() || !j.value("access_token", json()).is_string()) {
      fail(fmt::format("the token endpoint answered {}: {}", r.status(), body));
    }
    co_return OAuthTokens{j["access_token"].get<std::string>(), j.value("refresh_token", ""), j.value("scope", "")};
  }

  // RFC 7523: the client is issuer and subject; the audience is the
  // authorization server's issuer identifier.
  std::string assertion(const OAuthClientInfo& client) const {
    const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch()).count();
    const json claims = {{"iss", client.client_id}, {"sub", client.client_id},
                         {"aud", found->server_metadata.value("issuer", found->issuer)},
                         {"iat", now}, {"exp", now + 300}, {"jti", detail::random_token(16)}};
    return detail::signed_jwt(claims, client.private_key_pem, client.signing_algorithm);
  }

  // Step 4: who this client is to the authorization server.
  Coro<OAuthClientInfo> identity(TokenStore& store) {
    const detail::Discovered& d = *found;
    OAuthClientInfo c;
    if (opts.client) {
      c = *opts.client;
    } else if (auto stored = store.client(d.issuer)) {
      c = *stored;
    } else if (!opts.client_metadata_url.empty() &&
               d.server_metadata.value("client_id_metadata_document_supported", false)) {
      c.client_id = opts.client_metadata_url;  // a public client named by its document
      c.token_endpoint_auth_method = "none";
    } else {
      c = co_await register_client();
      store.save_client(d.issuer, c);
    }
    if (c.token_endpoint_auth_method.empty()) {
      c.token_endpoint_auth_method = !c.private_key_pem.empty()
                                         ? "private_key_jwt"
                                         : auth_method_for(d.server_metadata, !c.client_secret.empty());
    }
    co_return c;
  }

  // RFC 7591 dynamic registration.
  Coro<OAuthClientInfo> register_client() {
    const json& server = found->server_metadata;
    const std::string endpoint = server.value("registration_endpoint", "");
    if (endpoint.empty()) fail("the authorization server offers no registration and no client id was given");
    const std::string method = supports(server, "token_endpoint_auth_methods_supported", "none") ||
                                       !server.contains("token_endpoint_auth_methods_supported")
                                   ? "none"
                                   : auth_method_for(server, true);
    http::RequestOptions req;
    json metadata = json::parse(R"({"grant_types": ["authorization_code", "refresh_token"],
                                     "response_types": ["code"]})");
    metadata["client_name"] = opts.client_name;
    metadata["redirect_uris"] = json::array({opts.redirect_uri});
    metadata["token_endpoint_auth_method"] = method;
    req.json = metadata;
    http::ClientResponse r = co_await http->post(endpoint, std::move(req));
    const std::string body = co_await r.read();
    const json j = json::parse(body, nullptr, false);
    if (!r.ok() || !j.is_object() || !j.value("client_id", json()).is_string()) {
      fail(fmt::format("registration answered {}: {}", r.status(), body));
    }
    OAuthClientInfo c;
    c.client_id = j["client_id"].get<std::string>();
    c.client_secret = j.value("client_secret", "");
    c.token_endpoint_auth_method = j.value("token_endpoint_auth_method", method);
    co_return c;
  }

  // The scope to ask for: the challenge's, else what the resource lists
  // (offline_access added where the authorization server offers it, for
  // a refresh token), else none.
  std::string scope_for(const detail::Challenge& c) const {
    std::string scope = c.scope;
    if (scope.empty() && found->resource_metadata.is_object()) {
      scope = joined(found->resource_metadata.value("scopes_supported", json::array()));
    }
    if (!scope.empty() && scope.find("offline_access") == std::string::npos &&
        supports(found->server_metadata, "scopes_supported", "offline_access")) {
      scope += " offline_access";
    }
    return scope;
  }

  // Step 5 with a user: PKCE S256, authorize(), the code for tokens.
  Coro<OAuthTokens> authorization_code(const OAuthClientInfo& client, const std::string& scope) {
    if (!opts.authorize) fail("a user must authorize, and OAuthOptions::authorize is not set");
    const std::string verifier = detail::random_token(32), state = detail::random_token(16);
    http::QueryParams q = {{"response_type", "code"},
                           {"client_id", client.client_id},
                           {"redirect_uri", opts.redirect_uri},
                           {"code_challenge", detail::s256_challenge(verifier)},
                           {"code_challenge_method", "S256"},
                           {"state", state},
                           {"resource", found->resource}};
    if (!scope.empty()) q.emplace_back("scope", scope);
    std::string url = found->server_metadata.value("authorization_endpoint", "");
    url += (url.find('?') == std::string::npos ? "?" : "&") + http::encode_query(q);
    const std::string redirect = co_await opts.authorize(std::move(url));
    std::string code, returned_state, error;
    for (auto& [k, v] : http::parse_query(http::Url::parse(redirect).query)) {
      if (k == "code") code = v;
      if (k == "state") returned_state = v;
      if (k == "error") error = v;
    }
    if (!error.empty()) fail("the authorization server refused: " + error);
    if (returned_state != state) fail("the redirect's state is not the one sent");
    if (code.empty()) fail("the redirect carries no code");
    http::QueryParams form = {{"grant_type", "authorization_code"},
                              {"code", code},
                              {"redirect_uri", opts.redirect_uri},
                              {"code_verifier", verifier}};
    co_return co_await token_request(client, std::move(form));
  }

  Coro<OAuthTokens> client_credentials(const OAuthClientInfo& client, const std::string& scope) {
    http::QueryParams form = {{"grant_type", "client_credentials"}};
    if (!scope.empty()) form.emplace_back("scope", scope);
    co_return co_await token_request(client, std::move(form));
  }

  // SEP-990: the ID token for an ID-JAG at the identity provider, the
  // ID-JAG for tokens here.
  Coro<OAuthTokens> cross_app(const OAuthClientInfo& client, const std::string& scope) {
    const EnterpriseIdentity& idp = *opts.enterprise;
    http::QueryParams exchange = {{"grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"},
                                  {"requested_token_type", "urn:ietf:params:oauth:token-type:id-jag"},
                                  {"audience", found->server_metadata.value("issuer", found->issuer)},
                                  {"resource", found->resource},
                                  {"subject_token", idp.id_token},
                                  {"subject_token_type", "urn:ietf:params:oauth:token-type:id_token"},
                                  {"client_id", idp.idp_client_id}};
    if (!scope.empty()) exchange.emplace_back("scope", scope);
    http::RequestOptions req;
    req.headers.set("Accept", "application/json");
    req.form = std::move(exchange);
    http::ClientResponse r = co_await http->post(idp.idp_token_endpoint, std::move(req));
    const std::string body = co_await r.read();
    const json j = json::parse(body, nullptr, false);
    if (!r.ok() || !j.is_object() || !j.value("access_token", json()).is_string()) {
      fail(fmt::format("the identity provider's token exchange answered {}: {}", r.status(), body));
    }
    http::QueryParams grant = {{"grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"},
                               {"assertion", j["access_token"].get<std::string>()}};
    co_return co_await token_request(client, std::move(grant));
  }

  Coro<bool> refresh(TokenStore& store, const OAuthTokens& held) {
    const OAuthClientInfo client = co_await identity(store);
    std::optional<OAuthTokens> fresh;
    try {
      http::QueryParams form = {{"grant_type", "refresh_token"}, {"refresh_token", held.refresh_token}};
      fresh = co_await token_request(client, std::move(form));
    } catch (const RpcError&) {
      // An expired or revoked refresh token: authorize afresh.
    }
    if (!fresh) co_return false;
    if (fresh->refresh_token.empty()) fresh->refresh_token = held.refresh_token;
    store.save_tokens(found->resource, *fresh);
    co_return true;
  }
};

OAuth::OAuth(OAuthOptions options) : flow_(std::make_unique<Flow>()) {
  if (!options.store) options.store = std::make_shared<MemoryTokenStore>();
  flow_->opts = std::move(options);
}

OAuth::~OAuth() = default;

std::string OAuth::authorization(const std::string& server_url) {
  const std::string resource = flow_->found ? flow_->found->resource : server_url;
  const auto tokens = flow_->opts.store->tokens(resource);
  return tokens ? "Bearer " + tokens->access_token : std::string();
}

Coro<bool> OAuth::on_refused(http::ClientSession& http, std::string server_url, int status,
                             std::string www_authenticate) {
  const detail::Challenge c = detail::parse_challenge(www_authenticate);
  if (status == 403 && c.error != "insufficient_scope") co_return false;
  Flow& f = *flow_;
  f.http = &http;
  TokenStore& store = *f.opts.store;
  if (!f.found || (!c.resource_metadata.empty() && c.resource_metadata != f.found_for)) {
    f.found = co_await detail::discover(http, server_url, c.resource_metadata);
    f.found_for = c.resource_metadata;
  }
  const std::optional<OAuthTokens> held = store.tokens(f.found->resource);
  if (status == 401 && held && !held->refresh_token.empty()) {
    const bool refreshed = co_await f.refresh(store, *held);
    if (refreshed) co_return true;
  }
  const OAuthClientInfo client = co_await f.identity(store);
  const std::string scope = f.scope_for(c);
  OAuthTokens tokens;
  if (f.opts.client_credentials) {
    tokens = co_await f.client_credentials(client, scope);
  } else if (f.opts.enterprise) {
    tokens = co_await f.cross_app(client, scope);
  } else {
    tokens = co_await f.authorization_code(client, scope);
  }
  store.save_tokens(f.found->resource, tokens);
  co_return true;
}

}  // namespace corio::mcp
