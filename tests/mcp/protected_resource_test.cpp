// ProtectedResource in front of a real Streamable HTTP endpoint: the
// metadata document, 401 and 403 with the challenges clients discover
// from, and corio's own OAuth client getting through (client credentials
// from an authorization server on the same loopback server).
#include <corio/http/client.hpp>
#include <corio/http/server.hpp>
#include <corio/mcp/auth.hpp>
#include <corio/mcp/protected_resource.hpp>
#include <corio/mcp/streamable_http.hpp>
#include <corio/mcp/streamable_http_client.hpp>

#include "mcp/mcp_support.hpp"

namespace corio_mcp_test {
namespace {

using corio::http::Request;
using corio::http::Response;
using corio::mcp::ProtectedResource;
using corio::mcp::TokenInfo;

Coro<std::optional<TokenInfo>> verify(std::string token) {
  if (token == "strong") co_return TokenInfo{{"mcp", "other"}, "svc"};
  if (token == "weak") co_return TokenInfo{{"other"}, "svc"};
  co_return std::nullopt;
}

struct Guarded {
  corio::mcp::Server mcp{"guarded", "1"};
  corio::http::Server http{[] {
    corio::http::ServerOptions o;
    o.access_log = {};
    return o;
  }()};
  corio::mcp::StreamableHttp endpoint{mcp};
  ProtectedResource guard{{.resource = "/mcp", .authorization_servers = {}, .scopes_supported = {"mcp"},
                           .required_scopes = {"mcp"}},
                          verify};
  std::vector<std::string> token_forms;

  Guarded() {
    guard.mount(http);
    endpoint.mount(http);
    http.get("/.well-known/oauth-authorization-server", [this](Request&) { return as_metadata(); });
    http.post("/token", [this](Request& r) { return token(r); });
  }
  std::string base() const { return "http://127.0.0.1:" + std::to_string(http.port()); }
  Coro<Response> as_metadata() {
    co_return Response::json({{"issuer", base()}, {"token_endpoint", base() + "/token"},
                              {"grant_types_supported", {"client_credentials"}}});
  }
  Coro<Response> token(Request& r) {
    token_forms.push_back(co_await r.read());
    co_return Response::json({{"access_token", "strong"}, {"token_type", "Bearer"}});
  }
};

Coro<void> protected_endpoint() {
  Guarded g;
  co_await g.http.start("127.0.0.1", 0);
  corio::http::ClientSession http;
  const std::string metadata_url = g.base() + g.guard.metadata_path();
  corio::http::ClientResponse prm = co_await http.get(metadata_url);
  const json metadata = co_await prm.json();
  EXPECT_EQ(metadata["resource"], g.base() + "/mcp");
  EXPECT_EQ(metadata["scopes_supported"], json::array({"mcp"}));

  const json init = {{"jsonrpc", "2.0"}, {"id", 1}, {"method", "initialize"},
                     {"params", {{"protocolVersion", "2025-11-25"}, {"capabilities", json::object()},
                                 {"clientInfo", {{"name", "t"}, {"version", "1"}}}}}};
  for (const auto& [token, status] : std::vector<std::pair<std::string, int>>{{"", 401}, {"bogus", 401}, {"weak", 403}}) {
    corio::http::RequestOptions opts;
    opts.headers.set("Accept", "application/json, text/event-stream");
    if (!token.empty()) opts.headers.set("Authorization", "Bearer " + token);
    opts.json = init;
    corio::http::ClientResponse r = co_await http.post(g.base() + "/mcp", std::move(opts));
    EXPECT_EQ(r.status(), status) << token;
    const std::string challenge(r.headers().get_or("WWW-Authenticate", ""));
    EXPECT_NE(challenge.find("resource_metadata=\"" + metadata_url + "\""), std::string::npos) << challenge;
    EXPECT_NE(challenge.find("scope=\"mcp\""), std::string::npos) << challenge;
    EXPECT_NE(challenge.find(status == 401 ? "invalid_token" : "insufficient_scope"), std::string::npos) << challenge;
    r.release();
  }
  co_await http.close();

  corio::mcp::OAuthOptions o;
  o.client = corio::mcp::OAuthClientInfo{.client_id = "svc", .client_secret = "s3cret"};
  o.client_credentials = true;
  corio::mcp::OAuth oauth(std::move(o));
  corio::mcp::StreamableHttpClient transport(g.base() + "/mcp");
  transport.set_authorization(&oauth);
  corio::mcp::Client client(transport);
  const json answer = co_await client.initialize();
  EXPECT_EQ(answer["serverInfo"]["name"], "guarded");
  CO_ASSERT(g.token_forms.size() == 1u);
  EXPECT_NE(g.token_forms[0].find("grant_type=client_credentials"), std::string::npos) << g.token_forms[0];
  EXPECT_NE(g.token_forms[0].find("scope=mcp"), std::string::npos) << "the scope from the challenge";
  co_await client.close();
  co_await transport.close();
  g.http.close();
}

TEST(ProtectedResource, ChallengesMetadataAndAClientGettingThrough) { run_test(protected_endpoint()); }

}  // namespace
}  // namespace corio_mcp_test
