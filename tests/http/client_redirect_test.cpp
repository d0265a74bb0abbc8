// Redirects: each status's method rule, relative Locations, the limit, and
// Authorization kept within an origin only.
#include <nlohmann/json.hpp>

#include "http/client_support.hpp"

namespace corio_http_test {
namespace {

using corio::http::ClientResponse;
using corio::http::ClientSession;
using corio::http::RequestOptions;
using nlohmann::json;

struct Case {
  int code;
  const char* method;
  const char* expect_method;
  bool body_kept;
};

Coro<void> method_rules(const ScriptedPeer* peer) {
  ClientSession s;
  const Case cases[] = {{301, "POST", "GET", false}, {302, "POST", "GET", false},
                        {303, "PUT", "GET", false},  {303, "HEAD", "HEAD", false},
                        {301, "PUT", "PUT", true},   {307, "POST", "POST", true},
                        {308, "PATCH", "PATCH", true}};
  for (const Case& c : cases) {
    RequestOptions opts;
    opts.data = "payload";
    const std::string url = peer->url("/redirect?code=" + std::to_string(c.code) + "&to=echo");
    ClientResponse r = co_await s.request(c.method, url, std::move(opts));
    EXPECT_EQ(r.status(), 200) << c.code << " " << c.method;
    EXPECT_EQ(r.history().size(), 1u);
    EXPECT_EQ(r.history()[0].status, c.code);
    EXPECT_EQ(r.url().path, "/echo");
    EXPECT_EQ(r.method(), c.expect_method);
    if (std::string(c.method) == "HEAD") continue;
    json e = co_await r.json();
    EXPECT_EQ(e["method"], c.expect_method) << c.code << " " << c.method;
    EXPECT_EQ(e["body"], c.body_kept ? "payload" : "") << c.code << " " << c.method;
    EXPECT_EQ(e["headers"].contains("content-type"), c.body_kept);
  }
  EXPECT_EQ(s.open_connections(), 1u);  // small redirect bodies are read: the connection stays
}

TEST(ClientRedirect, MethodAndBodyRules) {
  ScriptedPeer peer;
  run_bounded(method_rules(&peer), 30s);
}

Coro<void> limits(const ScriptedPeer* peer) {
  ClientSession s;
  RequestOptions few;
  few.max_redirects = 3;
  bool thrown = false;
  try {
    co_await s.get(peer->url("/loop"), std::move(few));
  } catch (const corio::http::TooManyRedirects&) {
    thrown = true;
  }
  EXPECT_TRUE(thrown);

  RequestOptions none;
  none.allow_redirects = false;
  ClientResponse r = co_await s.get(peer->url("/redirect?code=302&to=/echo"), std::move(none));
  EXPECT_EQ(r.status(), 302);
  EXPECT_EQ(r.headers().get_or("Location", ""), "/echo");
  EXPECT_TRUE(r.history().empty());
}

TEST(ClientRedirect, LimitAndOptOut) {
  ScriptedPeer peer;
  run_bounded(limits(&peer), 20s);
}

Coro<void> authorization(const ScriptedPeer* peer) {
  ClientSession s;
  const std::string port = std::to_string(peer->port);
  RequestOptions same;
  same.headers.add("Authorization", "Bearer secret");
  ClientResponse r1 = co_await s.get(peer->url("/redirect?code=302&to=/echo"), std::move(same));
  json e1 = co_await r1.json();
  EXPECT_EQ(e1["headers"]["authorization"], "Bearer secret");

  // 127.0.0.1 -> localhost: the same server, another origin.
  RequestOptions cross;
  cross.headers.add("Authorization", "Bearer secret");
  const std::string to = "http://localhost:" + port + "/echo";
  ClientResponse r2 = co_await s.get(peer->url("/redirect?code=302&to=" + corio::http::percent_encode(to)),
                                     std::move(cross));
  EXPECT_EQ(r2.url().host, "localhost");
  json e2 = co_await r2.json();
  EXPECT_FALSE(e2["headers"].contains("authorization"));
  EXPECT_EQ(e2["headers"]["host"], "localhost:" + port);
}

TEST(ClientRedirect, AuthorizationDroppedAcrossOrigins) {
  ScriptedPeer peer;
  run_bounded(authorization(&peer), 20s);
}

}  // namespace
}  // namespace corio_http_test
