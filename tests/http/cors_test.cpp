// The CORS middleware over real connections: preflights answered (or
// refused) whatever the routes, simple requests' answers (errors too)
// stamped, wildcard and credentials, a predicate, Vary: Origin.
#include <corio/http/cors.hpp>

#include "http/server_support.hpp"

namespace corio_http_test {
namespace {

using corio::http::CorsOptions;

std::string preflight(std::string_view origin, std::string_view method,
                      std::string_view headers = {}) {
  std::string req = "OPTIONS /items HTTP/1.1\r\nHost: x\r\nOrigin: " + std::string(origin) +
                    "\r\nAccess-Control-Request-Method: " + std::string(method) + "\r\n";
  if (!headers.empty()) req += "Access-Control-Request-Headers: " + std::string(headers) + "\r\n";
  return req + "\r\n";
}

std::string get(std::string_view path, std::string_view origin) {
  std::string req = "GET " + std::string(path) + " HTTP/1.1\r\nHost: x\r\n";
  if (!origin.empty()) req += "Origin: " + std::string(origin) + "\r\n";
  return req + "\r\n";
}

Coro<void> listed_origins_body() {
  CorsOptions cors;
  cors.allow_origins = {"https://app.example"};
  cors.allow_origin = [](std::string_view o) { return o.ends_with(".trusted.example"); };
  cors.allow_methods = {"GET", "POST"};
  cors.allow_headers = {"Content-Type", "X-Token"};
  cors.expose_headers = {"X-Request-Id", "X-Total"};
  cors.allow_credentials = true;
  cors.max_age = std::chrono::seconds(600);
  Server server(quiet());
  server.use(corio::http::cors(std::move(cors)));
  server.get("/items", hello);
  co_await server.start("127.0.0.1", 0);
  const std::uint16_t port = server.port();

  Reply r = co_await exchange(port, preflight("https://app.example", "POST", "content-type, x-token"));
  EXPECT_EQ(r.status, 204) << "no OPTIONS route needed";
  EXPECT_EQ(r.headers.get_or("Access-Control-Allow-Origin", ""), "https://app.example");
  EXPECT_EQ(r.headers.get_or("Access-Control-Allow-Methods", ""), "GET, POST");
  EXPECT_EQ(r.headers.get_or("Access-Control-Allow-Headers", ""), "Content-Type, X-Token");
  EXPECT_EQ(r.headers.get_or("Access-Control-Allow-Credentials", ""), "true");
  EXPECT_EQ(r.headers.get_or("Access-Control-Max-Age", ""), "600");
  EXPECT_EQ(r.headers.get_or("Vary", ""), "Origin");

  r = co_await exchange(port, preflight("https://evil.example", "GET"));
  EXPECT_EQ(r.status, 403);
  EXPECT_FALSE(r.headers.contains("Access-Control-Allow-Origin"));
  r = co_await exchange(port, preflight("https://app.example", "DELETE"));
  EXPECT_EQ(r.status, 403) << "method not allowed";
  r = co_await exchange(port, preflight("https://app.example", "POST", "X-Other"));
  EXPECT_EQ(r.status, 403) << "header not allowed";
  r = co_await exchange(port, preflight("https://a.trusted.example", "GET"));
  EXPECT_EQ(r.status, 204) << "the predicate allows it";
  EXPECT_EQ(r.headers.get_or("Access-Control-Allow-Origin", ""), "https://a.trusted.example");

  r = co_await exchange(port, get("/items", "https://app.example"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "Hello, World!");
  EXPECT_EQ(r.headers.get_or("Access-Control-Allow-Origin", ""), "https://app.example");
  EXPECT_EQ(r.headers.get_or("Access-Control-Allow-Credentials", ""), "true");
  EXPECT_EQ(r.headers.get_or("Access-Control-Expose-Headers", ""), "X-Request-Id, X-Total");
  EXPECT_EQ(r.headers.get_or("Vary", ""), "Origin");

  r = co_await exchange(port, get("/missing", "https://app.example"));
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.headers.get_or("Access-Control-Allow-Origin", ""), "https://app.example")
      << "error answers are stamped too, so the browser lets the page read them";

  r = co_await exchange(port, get("/items", "https://evil.example"));
  EXPECT_EQ(r.status, 200);
  EXPECT_FALSE(r.headers.contains("Access-Control-Allow-Origin"));
  EXPECT_EQ(r.headers.get_or("Vary", ""), "Origin");

  r = co_await exchange(port, get("/items", ""));
  EXPECT_FALSE(r.headers.contains("Access-Control-Allow-Origin")) << "not a CORS request";
  EXPECT_FALSE(r.headers.contains("Vary"));
  co_await server.shutdown(1s);
}

TEST(HttpCors, ListedOriginsPredicateCredentialsAndPreflight) { run_bounded(listed_origins_body()); }

Coro<void> wildcard_body(bool credentials) {
  CorsOptions cors;
  cors.allow_origins = {"*"};
  cors.allow_headers = {"*"};
  cors.allow_credentials = credentials;
  Server server(quiet());
  server.use(corio::http::cors(std::move(cors)));
  server.get("/items", hello);
  co_await server.start("127.0.0.1", 0);
  const std::uint16_t port = server.port();
  Reply r = co_await exchange(port, get("/items", "https://any.example"));
  EXPECT_EQ(r.headers.get_or("Access-Control-Allow-Origin", ""),
            credentials ? "https://any.example" : "*");
  EXPECT_EQ(r.headers.contains("Vary"), credentials);
  r = co_await exchange(port, preflight("https://any.example", "PATCH", "X-Anything, X-Else"));
  EXPECT_EQ(r.status, 204);
  EXPECT_EQ(r.headers.get_or("Access-Control-Allow-Headers", ""), "X-Anything, X-Else");
  EXPECT_FALSE(r.headers.contains("Access-Control-Max-Age"));
  co_await server.shutdown(1s);
}

TEST(HttpCors, WildcardIsStarWithoutCredentialsAndEchoedWithThem) {
  run_bounded(wildcard_body(false));
  run_bounded(wildcard_body(true));
}

}  // namespace
}  // namespace corio_http_test
