// Redirects: each status's method rule, relative Locations, the limit, and
// the caller's secrets kept within an origin only.
#include <nlohmann/json.hpp>

#include "http/client_support.hpp"

namespace corio_http_test {
namespace {

using corio::http::ClientOptions;
using corio::http::ClientResponse;
using corio::http::ClientSession;
using corio::http::RequestOptions;
using corio::http::Url;
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

// The caller's secrets on a request: Authorization, Cookie,
// Proxy-Authorization (no proxy here: it could only reach an origin) and
// headers marked sensitive, for the request and for the session; X-Plain is
// not one of them.
RequestOptions with_secrets() {
  RequestOptions o;
  o.headers.add("Authorization", "Bearer secret");
  o.headers.add("Cookie", "sid=caller");
  o.headers.add("Proxy-Authorization", "Basic cHJveHk=");
  o.headers.add("X-Api-Key", "key");
  o.headers.add("X-Plain", "plain");
  o.sensitive_headers = {"x-api-key"};
  return o;
}

ClientOptions session_with_secret() {
  ClientOptions co;
  co.headers.add("X-Session-Key", "session");
  co.sensitive_headers = {"X-Session-Key"};
  return co;
}

constexpr const char* kSecrets[] = {"authorization", "proxy-authorization", "x-api-key",
                                    "x-session-key"};

std::string redirect_to(const ScriptedPeer* from, const std::string& to) {
  return from->url("/redirect?code=302&to=" + corio::http::percent_encode(to));
}

// The headers the echo at the end of the redirects from `url` received,
// the response's URL being `end`.
Coro<json> echoed_headers(ClientSession* s, std::string url, std::string end) {
  ClientResponse r = co_await s->get(std::move(url), with_secrets());
  EXPECT_EQ(r.url().to_string(), end);
  json e = co_await r.json();
  co_return e["headers"];
}

Coro<void> secrets(const ScriptedPeer* peer, const ScriptedPeer* other) {
  ClientSession s(session_with_secret());
  const std::string localhost = "http://localhost:" + std::to_string(peer->port);
  // The jar's own cookie for the new origin still goes there.
  s.cookie_jar().update_cookies({"jar=1"}, Url::parse(localhost + "/"));
  const std::string same = redirect_to(peer, "/echo");
  json kept = co_await echoed_headers(&s, same, peer->url("/echo"));
  for (const char* name : kSecrets) {
    EXPECT_TRUE(kept.contains(name)) << name << " kept within the origin";
  }
  EXPECT_EQ(kept.value("cookie", "-"), "sid=caller");

  // Another host (127.0.0.1 -> localhost: the same server), another port.
  const std::pair<std::string, std::string> hops[] = {{localhost + "/echo", "jar=1"},
                                                      {other->url("/echo"), "-"}};
  for (const auto& [to, cookie] : hops) {
    const std::string from = redirect_to(peer, to);
    json h = co_await echoed_headers(&s, from, to);
    for (const char* name : kSecrets) {
      EXPECT_FALSE(h.contains(name)) << name << " sent on to " << to;
    }
    EXPECT_EQ(h.value("cookie", "-"), cookie) << "the caller's Cookie sent on to " << to;
    EXPECT_EQ(h["x-plain"], "plain");
    EXPECT_EQ(h["host"], Url::parse(to).host_header());
  }
}

TEST(ClientRedirect, SecretsDroppedAcrossOrigins) {
  ScriptedPeer peer;
  ScriptedPeer other;
  run_bounded(secrets(&peer, &other), 20s);
}

}  // namespace
}  // namespace corio_http_test
