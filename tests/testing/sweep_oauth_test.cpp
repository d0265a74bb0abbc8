// The cancellation sweep over MCP authorization: the client's OAuth flow
// (OAuth::on_refused: discovery, registration, the user's consent, the
// token requests, a refresh) and the server's ProtectedResource guard
// with a token verifier that suspends. After each cancel the token store
// holds only tokens the authorization server issued, whole; the next
// on_refused gets its own, current token; the guard answers the next
// request by its own token; no verifier or handler is left running.
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include <corio/http.hpp>
#include <corio/mcp/auth.hpp>
#include <corio/mcp/jsonrpc.hpp>
#include <corio/mcp/protected_resource.hpp>
#include <corio/sleep.hpp>
#include <corio/streams.hpp>

#include "testing/sim_support.hpp"

using namespace std::chrono_literals;
using corio::Coro;
using corio::http::Request;
using corio::http::Response;
using corio::mcp::json;
using corio::testing::Simulation;
using corio::testing::SweepRun;
using corio::testing::cancellation_sweep;
using sim_support::expect_clean;
using sim_support::require;

namespace {

const std::string origin = "http://10.0.0.1:9000";
const std::string resource = origin + "/mcp";
const std::string challenge = "Bearer error=\"invalid_token\", resource_metadata=\"" + origin +
                              "/.well-known/oauth-protected-resource/mcp\"";

// The authorization server's state, shared with the test (the hosts are one process).
struct Issuer {
  int consents = 0;           // the user's, each one code
  int registrations = 0;
  int refreshes = 0;
  int verifying = 0;          // verifiers running now
  int handled = 0;            // requests the guard let through
  std::set<std::string> issued;  // every access token ever issued
  std::string current;        // the newest access token
  std::string refresh_token;  // the one valid refresh token (rotated on use)

  Coro<Response> token(const corio::http::QueryParams& form) {
    auto param = [&form](const char* name) {
      for (const auto& [k, v] : form) {
        if (k == name) return v;
      }
      return std::string();
    };
    const std::string grant = param("grant_type");
    const bool refresh = grant == "refresh_token" && param("refresh_token") == refresh_token;
    const bool code = grant == "authorization_code" && param("code") == "code-" + std::to_string(consents);
    if (!refresh && !code) co_return Response::json({{"error", "invalid_grant"}}, 400);
    refreshes += refresh ? 1 : 0;
    const std::string n = std::to_string(issued.size() + 1);
    current = "tok-" + n;
    refresh_token = "r-" + n;
    issued.insert(current);
    co_return Response::json({{"access_token", current}, {"token_type", "Bearer"}, {"refresh_token", refresh_token}});
  }
};

// Counts a verifier in for as long as it runs, unwinding included.
struct Counted {
  explicit Counted(int& n) : n_(n) { ++n_; }
  ~Counted() { --n_; }
  int& n_;
};

// The verifier asks the issuer, which takes 10 ms: it suspends.
corio::mcp::TokenVerifier verifier(std::shared_ptr<Issuer> as) {
  return [as](std::string token) -> Coro<std::optional<corio::mcp::TokenInfo>> {
    Counted counted(as->verifying);
    co_await corio::sleep(10ms);
    if (!as->issued.contains(token)) co_return std::nullopt;
    co_return corio::mcp::TokenInfo{.scopes = {"mcp"}, .subject = token};
  };
}

Coro<Response> ready(Response r) { co_return r; }

void add_issuer_routes(corio::http::Server& http, std::shared_ptr<Issuer> as) {
  http.get("/.well-known/oauth-authorization-server/as", [](Request&) {
    return ready(Response::json({{"issuer", origin + "/as"},
                                 {"authorization_endpoint", origin + "/as/authorize"},
                                 {"token_endpoint", origin + "/as/token"},
                                 {"registration_endpoint", origin + "/as/register"},
                                 {"code_challenge_methods_supported", {"S256"}},
                                 {"token_endpoint_auth_methods_supported", {"none"}}}));
  });
  http.post("/as/register", [as](Request& r) -> Coro<Response> {
    const json body = co_await r.json();
    ++as->registrations;
    co_return Response::json({{"client_id", "c-" + std::to_string(as->registrations)},
                              {"redirect_uris", body["redirect_uris"]}}, 201);
  });
  http.post("/as/token", [as](Request& r) -> Coro<Response> {
    const corio::http::QueryParams form = corio::http::parse_query(co_await r.read());
    co_return co_await as->token(form);
  });
}

// The MCP server's host: a ProtectedResource in front of /mcp, and the
// authorization server at /as, on 10.0.0.1:9000 until cancelled.
Coro<void> auth_service(std::shared_ptr<Issuer> as) {
  corio::http::Server http(sim_support::quiet());
  corio::mcp::ProtectedResource guard({.resource = resource, .authorization_servers = {origin + "/as"}},
                                      verifier(as));
  guard.mount(http);
  http.post("/mcp", [as](Request& r) -> Coro<Response> {
    co_await r.read();
    ++as->handled;
    co_return Response::text("through");
  });
  add_issuer_routes(http, as);
  co_await http.start("0.0.0.0", 9000);
  co_await http.serve_forever();
}

// ---- OAuth::on_refused ------------------------------------------------------------------------

// The user's consent: a redirect back with the next code, 5 ms later.
Coro<std::string> consent(std::shared_ptr<Issuer> as, std::string url) {
  const corio::http::QueryParams q = corio::http::parse_query(corio::http::Url::parse(url).query);
  std::string state, redirect;
  for (const auto& [k, v] : q) {
    if (k == "state") state = v;
    if (k == "redirect_uri") redirect = v;
  }
  co_await corio::sleep(5ms);
  ++as->consents;
  co_return redirect + "?code=code-" + std::to_string(as->consents) + "&state=" + corio::http::percent_encode(state);
}

struct Signer {
  std::shared_ptr<Issuer> as;
  std::shared_ptr<corio::mcp::MemoryTokenStore> store = std::make_shared<corio::mcp::MemoryTokenStore>();
  std::unique_ptr<corio::mcp::OAuth> oauth;
  corio::http::ClientSession http;

  explicit Signer(std::shared_ptr<Issuer> issuer) : as(std::move(issuer)) {
    corio::mcp::OAuthOptions o;
    o.redirect_uri = "http://localhost:1/callback";
    o.authorize = [a = as](std::string url) { return consent(a, std::move(url)); };
    o.store = store;
    oauth = std::make_unique<corio::mcp::OAuth>(std::move(o));
  }

  Coro<void> refused() {
    require(co_await oauth->on_refused(http, resource, 401, challenge), "on_refused gave up");
  }

  // What the store holds is whole and issued: no token of its own making.
  void check_store() {
    const std::optional<corio::mcp::OAuthTokens> held = store->tokens(resource);
    if (!held) return;
    require(as->issued.contains(held->access_token), "the store holds '" + held->access_token + "'");
    require(!held->refresh_token.empty(), "the store holds an access token without its refresh token");
  }
};

// The whole flow from a 401 (discovery, registration, consent, the code's
// token request), then a refresh; cancelled anywhere, the store holds
// nothing half written, the next on_refused stores the issuer's newest
// token, which the guard takes.
TEST(SweepMcpOAuth, OnRefusedWholeFlowThenRefresh) {
  expect_clean(cancellation_sweep([](Simulation& sim) {
    auto as = std::make_shared<Issuer>();
    sim.host("server").spawn(auth_service(as));
    auto signer = std::make_shared<Signer>(as);
    auto op = [signer]() -> Coro<void> {
      co_await signer->refused();
      co_await signer->refused();
    };
    auto after = [signer, as]() -> Coro<void> {
      signer->check_store();
      co_await signer->refused();
      signer->check_store();
      const std::string header = signer->oauth->authorization(resource);
      require(header == "Bearer " + as->current, "authorization is '" + header + "', not the newest token");
      require(as->registrations <= 2, std::to_string(as->registrations) + " registrations");
      corio::http::RequestOptions req;
      req.headers.set("Authorization", header);
      corio::http::ClientResponse r = co_await signer->http.post(resource, std::move(req));
      require(r.status() == 200, "the guard refused the stored token: " + std::to_string(r.status()));
      co_await signer->http.close();
    };
    return SweepRun{&sim.host("client"), op, after};
  }), 7);
}

// ---- ProtectedResource::guard -----------------------------------------------------------------

Coro<int> post_with(corio::http::ClientSession& http, std::string token) {
  corio::http::RequestOptions req;
  req.headers.set("Authorization", "Bearer " + token);
  corio::http::ClientResponse r = co_await http.post(resource, std::move(req));
  co_await r.read();
  co_return r.status();
}

// A POST by hand, so that the client has a wait of its own that begins
// while the server's verifier is suspended (a ClientSession's waits all
// begin before its request reaches the server): a cancel there closes the
// connection under the verifier.
Coro<void> post_while_verifying(std::shared_ptr<Issuer> as) {
  auto [reader, writer] = co_await corio::open_connection("10.0.0.1", 9000);
  writer.write("POST /mcp HTTP/1.1\r\nHost: 10.0.0.1:9000\r\nAuthorization: Bearer good\r\n"
               "Content-Length: 0\r\nConnection: close\r\n\r\n");
  co_await writer.drain();
  while (as->verifying == 0) co_await corio::sleep(1ms);
  co_await corio::sleep(1ms);
  const std::string status = co_await reader.readline();
  require(status.starts_with("HTTP/1.1 200"), "the guard answered '" + status + "'");
  writer.close();
  co_await writer.wait_closed();
}

// A request whose verifier suspends, cancelled anywhere (the client goes
// away while the verifier runs): the verifier ends (the server may finish
// the request for nobody, as a handler whose client went away does), the
// handler behind the guard ran at most once, and the next requests are
// verified by their own tokens: a bad one 401, a good one through.
TEST(SweepMcpOAuth, GuardWithASuspendingVerifier) {
  expect_clean(cancellation_sweep([](Simulation& sim) {
    auto as = std::make_shared<Issuer>();
    as->issued = {"good"};
    sim.host("server").spawn(auth_service(as));
    auto http = std::make_shared<corio::http::ClientSession>();
    auto op = [as]() -> Coro<void> { co_await post_while_verifying(as); };
    auto after = [http, as]() -> Coro<void> {
      co_await corio::sleep(100ms);  // the cancelled request's verifier (and handler) ends
      require(as->verifying == 0, "a verifier is still running");
      require(as->handled <= 1, std::to_string(as->handled) + " requests handled");
      const int before = as->handled;
      require(co_await post_with(*http, "bad") == 401, "a bad token was not refused");
      require(co_await post_with(*http, "good") == 200, "a good token was refused");
      require(as->handled == before + 1, "the good request was not handled once");
      co_await http->close();
    };
    return SweepRun{&sim.host("client"), op, after};
  }), 4);
}

}  // namespace
