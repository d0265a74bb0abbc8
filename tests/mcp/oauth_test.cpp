// corio::mcp::OAuth on StreamableHttpClient against an MCP server and an
// authorization server played by one corio http::Server: the code flow
// from a 401 (discovery, registration, PKCE S256, the resource indicator),
// refresh on an expired token, step-up on 403 insufficient_scope with a
// limit, and a resource metadata document naming another server refused.
#include <openssl/evp.h>

#include <corio/http/server.hpp>
#include <corio/http/url.hpp>
#include <corio/mcp/auth.hpp>
#include <corio/mcp/streamable_http_client.hpp>

#include "mcp/mcp_support.hpp"

namespace corio_mcp_test {
namespace {

using corio::http::Request;
using corio::http::Response;
using corio::mcp::Client;
using corio::mcp::OAuth;
using corio::mcp::OAuthOptions;
using corio::mcp::StreamableHttpClient;

std::string param(const corio::http::QueryParams& q, std::string_view name) {
  for (const auto& [k, v] : q) {
    if (k == name) return v;
  }
  return {};
}

std::string s256(const std::string& verifier) {
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(verifier.data(), verifier.size(), d, &n, EVP_sha256(), nullptr);
  std::string b64(4 * ((n + 2) / 3), '\0');
  b64.resize(static_cast<std::size_t>(EVP_EncodeBlock(reinterpret_cast<unsigned char*>(b64.data()), d, static_cast<int>(n))));
  while (!b64.empty() && b64.back() == '=') b64.pop_back();
  for (char& c : b64) c = c == '+' ? '-' : c == '/' ? '_' : c;
  return b64;
}

struct AuthWorld {
  corio::http::Server http{[] {
    corio::http::ServerOptions o;
    o.access_log = {};
    return o;
  }()};
  std::string prm_resource;          // "" : this server's /mcp
  std::string required_scope = "read";
  bool always_403 = false;
  int registrations = 0, authorizations = 0, refreshes = 0;
  std::string challenge, issued = "tok-1", refresh_token = "r-1";
  std::vector<corio::http::QueryParams> token_requests;
  std::vector<std::string> granted_scopes;  // of each authorization

  AuthWorld() {
    http.post("/mcp", [this](Request& r) { return mcp(r); });
    http.get("/.well-known/oauth-protected-resource/mcp", [this](Request&) { return prm(); });
    http.get("/.well-known/oauth-authorization-server/as", [this](Request&) { return as_metadata(); });
    http.post("/as/register", [this](Request& r) { return reg(r); });
    http.post("/as/token", [this](Request& r) { return token(r); });
  }
  std::string base() const { return "http://127.0.0.1:" + std::to_string(http.port()); }
  static Coro<Response> ready(Response r) { co_return r; }

  Coro<Response> mcp(Request& r) {
    const json body = co_await r.json();
    const std::string bearer(r.headers().get_or("Authorization", ""));
    if (bearer != "Bearer " + issued) {
      Response no(401);
      no.headers.set("WWW-Authenticate", "Bearer error=\"invalid_token\", resource_metadata=\"" + base() +
                                             "/.well-known/oauth-protected-resource/mcp\", scope=\"" + required_scope + "\"");
      co_return no;
    }
    const bool enough = granted_scopes.back().find(required_scope) != std::string::npos;
    if (always_403 || !enough) {
      Response no(403);
      no.headers.set("WWW-Authenticate", "Bearer error=\"insufficient_scope\", scope=\"" + required_scope + "\"");
      co_return no;
    }
    if (!body.contains("id")) co_return Response(202);
    co_return Response::json(corio::mcp::make_response(
        body["id"], body["method"] == "initialize"
                        ? json{{"protocolVersion", "2025-11-25"}, {"capabilities", json::object()},
                               {"serverInfo", {{"name", "guarded"}, {"version", "1"}}}}
                        : json{{"tools", json::array()}}));
  }
  Coro<Response> prm() {
    co_return Response::json({{"resource", prm_resource.empty() ? base() + "/mcp" : prm_resource},
                              {"authorization_servers", {base() + "/as"}}});
  }
  Coro<Response> as_metadata() {
    co_return Response::json({{"issuer", base() + "/as"},
                              {"authorization_endpoint", base() + "/as/authorize"},
                              {"token_endpoint", base() + "/as/token"},
                              {"registration_endpoint", base() + "/as/register"},
                              {"code_challenge_methods_supported", {"S256"}},
                              {"token_endpoint_auth_methods_supported", {"none"}}});
  }
  Coro<Response> reg(Request& r) {
    const json body = co_await r.json();
    ++registrations;
    co_return Response::json({{"client_id", "c-1"}, {"redirect_uris", body["redirect_uris"]}}, 201);
  }
  Coro<Response> token(Request& r) {
    const corio::http::QueryParams form = corio::http::parse_query(co_await r.read());
    token_requests.push_back(form);
    const std::string grant = param(form, "grant_type");
    if (grant == "refresh_token") {
      if (param(form, "refresh_token") != refresh_token) co_return Response::json({{"error", "invalid_grant"}}, 400);
      ++refreshes;
    } else if (grant != "authorization_code" || param(form, "code") != "code-" + std::to_string(authorizations)) {
      co_return Response::json({{"error", "invalid_grant"}}, 400);
    }
    issued = "tok-" + std::to_string(authorizations + refreshes);
    co_return Response::json({{"access_token", issued}, {"token_type", "Bearer"}, {"refresh_token", refresh_token}});
  }
};

// The user's browser, without a browser: checks the authorization request
// and redirects back with a code.
struct User {
  AuthWorld& world;
  std::vector<corio::http::QueryParams> asked = {};
  Coro<std::string> authorize(std::string url) {
    const corio::http::QueryParams q = corio::http::parse_query(corio::http::Url::parse(url).query);
    asked.push_back(q);
    world.granted_scopes.push_back(param(q, "scope"));
    ++world.authorizations;
    co_return param(q, "redirect_uri") + "?code=code-" + std::to_string(world.authorizations) +
        "&state=" + corio::http::percent_encode(param(q, "state"));
  }
};

OAuthOptions options_for(User& user) {
  OAuthOptions o;
  o.redirect_uri = "http://localhost:1/callback";
  o.authorize = [&user](std::string url) { return user.authorize(std::move(url)); };
  return o;
}

// A client of world's MCP server, signed in through OAuth as user.
struct Guarded {
  AuthWorld& world;
  User user{world};
  OAuth oauth{options_for(user)};
  StreamableHttpClient transport;
  Client client{transport};

  explicit Guarded(AuthWorld& w) : world(w), transport(w.base() + "/mcp") { transport.set_authorization(&oauth); }
  Coro<void> close() {
    co_await client.close();
    co_await transport.close();
    world.http.close();
  }
};

Coro<void> code_flow_from_a_401() {
  AuthWorld world;
  co_await world.http.start("127.0.0.1", 0);
  Guarded g(world);
  co_await g.client.initialize();
  co_await g.client.list_tools();
  EXPECT_EQ(world.registrations, 1);
  CO_ASSERT(g.user.asked.size() == 1u);
  const auto& q = g.user.asked[0];
  EXPECT_EQ(param(q, "client_id"), "c-1");
  EXPECT_EQ(param(q, "code_challenge_method"), "S256");
  EXPECT_EQ(param(q, "resource"), world.base() + "/mcp");
  EXPECT_EQ(param(q, "scope"), "read") << "the challenge's scope";
  CO_ASSERT(world.token_requests.size() == 1u);
  const auto& t = world.token_requests[0];
  EXPECT_EQ(s256(param(t, "code_verifier")), param(q, "code_challenge")) << "PKCE S256";
  EXPECT_EQ(param(t, "resource"), world.base() + "/mcp");
  EXPECT_EQ(param(t, "client_id"), "c-1");

  // The token expires: the refresh token gets a new one, no user asked.
  world.issued = "expired";
  co_await g.client.list_tools();
  EXPECT_EQ(world.refreshes, 1);
  EXPECT_EQ(g.user.asked.size(), 1u);
  co_await g.close();
}

TEST(OAuth, CodeFlowFromA401ThenRefresh) { run_test(code_flow_from_a_401()); }

Coro<void> step_up_and_its_limit() {
  AuthWorld world;
  co_await world.http.start("127.0.0.1", 0);
  Guarded g(world);
  co_await g.client.initialize();
  world.required_scope = "read write";
  co_await g.client.list_tools();
  CO_ASSERT(g.user.asked.size() == 2u);
  EXPECT_EQ(param(g.user.asked[1], "scope"), "read write") << "the 403's scope";

  world.always_403 = true;
  int code = 0;
  try {
    co_await g.client.list_tools();
  } catch (const corio::mcp::RpcError& e) {
    code = e.code();
  }
  EXPECT_NE(code, 0) << "a refusal that never ends fails the request";
  EXPECT_EQ(g.user.asked.size(), 5u) << "three more authorizations, no more";
  co_await g.close();
}

TEST(OAuth, StepUpOn403InsufficientScopeWithALimit) { run_test(step_up_and_its_limit()); }

Coro<void> mismatched_resource_refused() {
  AuthWorld world;
  world.prm_resource = "https://evil.example.com/mcp";
  co_await world.http.start("127.0.0.1", 0);
  Guarded g(world);
  std::string why;
  try {
    co_await g.client.initialize();
  } catch (const corio::mcp::RpcError& e) {
    why = e.what();
  }
  EXPECT_NE(why.find("evil.example.com"), std::string::npos) << why;
  EXPECT_TRUE(g.user.asked.empty()) << "no authorization for another resource";
  EXPECT_EQ(world.registrations, 0);
  co_await g.close();
}

TEST(OAuth, ResourceMetadataForAnotherServerIsRefused) { run_test(mismatched_resource_refused()); }

}  // namespace
}  // namespace corio_mcp_test
