// The server's conveniences for JSON APIs: QueryParams lookups,
// HTTPException with any body and headers, the error hook (on_error) that
// shapes every error answer, and middleware running for unmatched routes.
#include <nlohmann/json.hpp>

#include <corio/http/url.hpp>

#include "http/server_support.hpp"

namespace corio_http_test {
namespace {

using corio::http::HTTPException;
using corio::http::Next;
using corio::http::QueryParams;

TEST(QueryParams, GetGivesTheFirstValueOrNothing) {
  const QueryParams q = corio::http::parse_query("page=2&tag=a&tag=b&empty=");
  EXPECT_EQ(q.get("page"), std::optional<std::string_view>("2"));
  EXPECT_EQ(q.get("tag"), std::optional<std::string_view>("a"));
  EXPECT_EQ(q.get("empty"), std::optional<std::string_view>(""));
  EXPECT_EQ(q.get("missing"), std::nullopt);
  EXPECT_EQ(q.get("Page"), std::nullopt) << "names are case-sensitive";
  EXPECT_EQ(q.get("sort", "name"), "name");
  EXPECT_EQ(q.get("page", "1"), "2");
  EXPECT_EQ(q.get_all("tag"), (std::vector<std::string_view>{"a", "b"}));
  EXPECT_TRUE(q.get_all("missing").empty());
  EXPECT_TRUE(q.contains("empty"));
  EXPECT_FALSE(q.contains("missing"));
}

Coro<Response> search(Request& req) {
  const QueryParams& q = req.query();
  nlohmann::json j{{"q", std::string(q.get("q", ""))}, {"limit", std::string(q.get("limit", "10"))}};
  for (std::string_view tag : q.get_all("tag")) j["tags"].push_back(std::string(tag));
  co_return Response::json(j);
}

Coro<Response> validate(Request& req) {
  const nlohmann::json body = co_await req.json();
  if (!body.contains("name")) {
    throw HTTPException::json(422, {{"detail", "name is required"}}, Headers{{"X-Error", "missing"}});
  }
  if (body["name"] == "admin") {
    throw HTTPException(401, "log in first", Headers{{"WWW-Authenticate", "Bearer"}});
  }
  if (body["name"] == "csv") throw HTTPException::with_body(409, "a,b\n", "text/csv");
  co_return Response::json(body, 201);
}

Coro<Response> crash(Request&) {
  throw std::runtime_error("boom");
  co_return Response();
}

std::string post(std::string_view path, std::string_view json) {
  return "POST " + std::string(path) + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
         "Content-Length: " + std::to_string(json.size()) + "\r\n\r\n" + std::string(json);
}

Coro<void> exceptions_body() {
  Server server(quiet());
  server.get("/search", search);
  server.post("/users", validate);
  co_await server.start("127.0.0.1", 0);
  const std::uint16_t port = server.port();
  Reply r = co_await exchange(port, "GET /search?q=x&tag=a&tag=b HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(nlohmann::json::parse(r.body),
            (nlohmann::json{{"q", "x"}, {"limit", "10"}, {"tags", {"a", "b"}}}));

  r = co_await exchange(port, post("/users", "{}"));
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(r.headers.get_or("Content-Type", ""), "application/json");
  EXPECT_EQ(r.headers.get_or("X-Error", ""), "missing");
  EXPECT_EQ(nlohmann::json::parse(r.body), (nlohmann::json{{"detail", "name is required"}}));

  r = co_await exchange(port, post("/users", R"({"name":"admin"})"));
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(r.headers.get_or("WWW-Authenticate", ""), "Bearer");
  EXPECT_EQ(r.body, "log in first");
  EXPECT_EQ(r.headers.get_or("Content-Type", ""), "text/plain; charset=utf-8");

  r = co_await exchange(port, post("/users", R"({"name":"csv"})"));
  EXPECT_EQ(r.status, 409);
  EXPECT_EQ(r.headers.get_or("Content-Type", ""), "text/csv");
  EXPECT_EQ(r.body, "a,b\n");
  co_await server.shutdown(1s);
}

TEST(HttpServerErrors, HTTPExceptionCarriesBodyAndHeaders) { run_bounded(exceptions_body()); }

// A JSON API's hook: every error as {"status": N, "error": "..."}.
Response json_errors(const Request& req, const HTTPException& e) {
  nlohmann::json j{{"status", e.status()}, {"error", e.body()}, {"method", req.method()}};
  return Response::json(j, e.status());
}

Coro<void> hook_body() {
  Server server(quiet());
  server.on_error(json_errors);
  server.get("/hello", hello);
  server.post("/users", validate);
  server.get("/crash", crash);
  co_await server.start("127.0.0.1", 0);
  const std::uint16_t port = server.port();

  Reply r = co_await exchange(port, "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.headers.get_or("Content-Type", ""), "application/json");
  EXPECT_EQ(nlohmann::json::parse(r.body),
            (nlohmann::json{{"status", 404}, {"error", "Not Found"}, {"method", "GET"}}));

  r = co_await exchange(port, "DELETE /hello HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.headers.get_or("Allow", ""), "GET, HEAD") << "the error's headers survive the hook";
  EXPECT_EQ(nlohmann::json::parse(r.body)["error"], "Method Not Allowed");

  r = co_await exchange(port, post("/users", R"({"name":"admin"})"));
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(r.headers.get_or("WWW-Authenticate", ""), "Bearer");
  EXPECT_EQ(nlohmann::json::parse(r.body)["error"], "log in first");

  r = co_await exchange(port, post("/users", "{not json"));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(nlohmann::json::parse(r.body)["status"], 400);

  corio::get_running_loop().set_exception_handler([](corio::EventLoop&, const corio::ExceptionContext&) {});
  r = co_await exchange(port, "GET /crash HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(nlohmann::json::parse(r.body)["error"], "Internal Server Error");

  // A request the server cannot read at all is shaped too.
  r = co_await exchange(port, "GET /hello HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.headers.get_or("Content-Type", ""), "application/json");
  EXPECT_EQ(r.headers.get_or("Connection", ""), "close");

  r = co_await exchange(port, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(r.status, 200) << "successes are not the hook's";
  EXPECT_EQ(r.body, "Hello, World!");
  co_await server.shutdown(1s);
}

TEST(HttpServerErrors, HookShapesEveryErrorAnswer) { run_bounded(hook_body()); }

Response broken_hook(const Request&, const HTTPException&) { throw std::logic_error("hook bug"); }

Coro<void> broken_hook_body() {
  Server server(quiet());
  server.on_error(broken_hook);
  co_await server.start("127.0.0.1", 0);
  int reported = 0;
  corio::get_running_loop().set_exception_handler(
      [&reported](corio::EventLoop&, const corio::ExceptionContext&) { ++reported; });
  const Reply r = co_await exchange(server.port(), "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.body, "Not Found");
  EXPECT_EQ(reported, 1);
  co_await server.shutdown(1s);
}

TEST(HttpServerErrors, AThrowingHookFallsBackToTheErrorsOwnAnswer) {
  run_bounded(broken_hook_body());
}

Coro<Response> stamp(Request& req, Next next) {
  Response r = co_await next(req);
  r.headers.add("X-Stamp", std::to_string(r.status));
  co_return r;
}

Coro<Response> guard(Request& req, Next next) {
  if (req.headers().contains("X-Forbid")) throw HTTPException(403, "forbidden");
  co_return co_await next(req);
}

Coro<void> middleware_body() {
  Server server(quiet());
  server.on_error(json_errors);
  server.use(stamp);
  server.use(guard);
  server.get("/hello", hello);
  server.post("/users", validate);
  co_await server.start("127.0.0.1", 0);
  const std::uint16_t port = server.port();

  Reply r = co_await exchange(port, "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.headers.get_or("X-Stamp", ""), "404") << "middleware runs for unmatched routes";
  EXPECT_EQ(nlohmann::json::parse(r.body)["error"], "Not Found");

  r = co_await exchange(port, "PUT /hello HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.headers.get_or("X-Stamp", ""), "405");
  EXPECT_EQ(r.headers.get_or("Allow", ""), "GET, HEAD");

  r = co_await exchange(port, post("/users", "{}"));
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(r.headers.get_or("X-Stamp", ""), "422") << "a handler's HTTPException reaches middleware as an answer";
  EXPECT_EQ(r.headers.get_or("X-Error", ""), "missing");

  r = co_await exchange(port, "GET /hello HTTP/1.1\r\nHost: x\r\nX-Forbid: 1\r\n\r\n");
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(r.headers.get_or("X-Stamp", ""), "") << "the outer middleware saw the inner one throw";
  EXPECT_EQ(nlohmann::json::parse(r.body)["error"], "forbidden");
  co_await server.shutdown(1s);
}

TEST(HttpServerErrors, MiddlewareSeesUnmatchedRoutesAndHandlerErrors) {
  run_bounded(middleware_body());
}

}  // namespace
}  // namespace corio_http_test
