// FastAPI-class handlers: typed path and query parameters (Request::path_as,
// query_as, the query as a struct) and constraints in a field list, each
// failure answered with a 422 in FastAPI's shape; the entries are what
// FastAPI 0.115 with pydantic 2.13 answers for the same declarations.
#include <nlohmann/json.hpp>

#include <corio/http/client.hpp>
#include <corio/http/json_as.hpp>

#include "http/server_support.hpp"

namespace typed_params_test {

struct Page {
  int after = 0;
  int limit = 10;
  std::vector<std::string> tag;
  std::string q;
};

// Its list inside the struct, as a pydantic model carries its fields.
struct Order {
  std::string sku;
  int count = 1;
  std::string speed = "normal";
  std::optional<double> weight;
  static constexpr auto fields = std::tuple{
      corio::http::field("sku", &Order::sku, "Stock keeping unit").min_length(3).max_length(8).pattern("^[A-Z0-9-]+$"),
      corio::http::field("count", &Order::count).ge(1).le(100).optional(),
      corio::http::field("speed", &Order::speed).one_of("normal", "express").optional(),
      corio::http::field("weight", &Order::weight).gt(0)};
};

}  // namespace typed_params_test

template <>
struct corio::http::Fields<typed_params_test::Page> {
  using P = typed_params_test::Page;
  static constexpr auto list = std::tuple{field("after", &P::after).ge(0).optional(),
                                          field("limit", &P::limit).ge(1).le(100).optional(),
                                          field("tag", &P::tag).max_length(2).optional(), field("q", &P::q)};
};


namespace corio_http_test {
namespace {

using corio::http::ClientResponse;
using corio::http::ClientSession;
using corio::http::RequestOptions;
using nlohmann::json;
using typed_params_test::Order;
using typed_params_test::Page;

TEST(JsonFields, ConstraintsBecomeTheSchemasKeywords) {
  EXPECT_EQ(corio::http::json_schema_of<Order>(), json::parse(R"({"type": "object",
      "properties": {
        "sku": {"type": "string", "description": "Stock keeping unit", "minLength": 3, "maxLength": 8,
                "pattern": "^[A-Z0-9-]+$"},
        "count": {"type": "integer", "minimum": 1, "maximum": 100, "default": 1},
        "speed": {"type": "string", "enum": ["normal", "express"], "default": "normal"},
        "weight": {"type": "number", "exclusiveMinimum": 0}},
      "required": ["sku"]})"));
  EXPECT_EQ(corio::http::json_schema_of<Page>()["properties"]["tag"],
            json::parse(R"({"type": "array", "items": {"type": "string"}, "maxItems": 2, "default": []})"))
      << "a vector's length bounds are minItems / maxItems";
  const Order o = corio::http::decode_json<Order>(json::parse(R"({"sku": "AB-1"})"));
  EXPECT_EQ(o.count, 1) << "an optional() field left out keeps the struct's default";
  EXPECT_EQ(o.speed, "normal");
}

Coro<Response> item(Request& req) { co_return Response::text(std::to_string(req.path_as<int>("id"))); }

Coro<Response> code(Request& req) {
  co_return Response::text(req.path_as<std::string>("code", {.min_length = 2, .pattern = "^[a-z]+$"}));
}

Coro<Response> search(Request& req) {
  const std::string q = req.query_as<std::string>("q");
  const int limit = req.query_as<int>("limit", 10, {.ge = 1, .le = 100});
  const std::optional<bool> full = req.query_as<std::optional<bool>>("full");
  const double min = req.query_as<double>("min", 0.5);
  co_return Response::text(q + " " + std::to_string(limit) + " " + (full ? (*full ? "full" : "short") : "-") +
                           " " + std::to_string(min).substr(0, 4));
}

Coro<Response> page(Request& req) {
  const Page p = req.query_as<Page>();
  std::string tags;
  for (const std::string& t : p.tag) tags += t + ",";
  co_return Response::text(p.q + " " + std::to_string(p.after) + " " + std::to_string(p.limit) + " " + tags);
}

Coro<Response> order(Request& req) {
  const Order o = co_await req.json_as<Order>();
  co_return Response::text(o.sku + " " + std::to_string(o.count) + " " + o.speed);
}

// The answer's status and body ("" / JSON text).
Coro<std::pair<int, std::string>> call(ClientSession& s, std::uint16_t port, std::string target,
                                       std::string body = {}) {
  RequestOptions opts;
  const char* method = body.empty() ? "GET" : "POST";
  if (!body.empty()) opts.data = std::move(body);
  opts.headers.set("Content-Type", "application/json");
  ClientResponse r = co_await s.request(method,
                                        "http://127.0.0.1:" + std::to_string(port) + target, std::move(opts));
  co_return std::pair{r.status(), co_await r.text()};
}

// The one entry of a 422's detail.
json only_problem(const std::pair<int, std::string>& answer) {
  EXPECT_EQ(answer.first, 422) << answer.second;
  const json detail = json::parse(answer.second)["detail"];
  EXPECT_EQ(detail.size(), 1u) << detail.dump();
  return detail.empty() ? json() : detail[0];
}

Coro<void> path_and_query_body() {
  Server server(quiet());
  server.get("/items/{id}", item);
  server.get("/codes/{code}", code);
  server.get("/search", search);
  co_await server.start("127.0.0.1", 0);
  ClientSession s;
  const std::uint16_t port = server.port();
  EXPECT_EQ(co_await call(s, port, "/items/42"), (std::pair<int, std::string>{200, "42"}));
  EXPECT_EQ(co_await call(s, port, "/items/-7"), (std::pair<int, std::string>{200, "-7"}));
  EXPECT_EQ(only_problem(co_await call(s, port, "/items/abc")), json::parse(R"({"type": "int_parsing",
      "loc": ["path", "id"], "msg": "Input should be a valid integer, unable to parse string as an integer",
      "input": "abc"})"));
  EXPECT_EQ(only_problem(co_await call(s, port, "/items/4.5"))["type"], "int_parsing");
  EXPECT_EQ(only_problem(co_await call(s, port, "/items/99999999999"))["type"], "int_parsing_size")
      << "past int's range";
  EXPECT_EQ(co_await call(s, port, "/codes/abc"), (std::pair<int, std::string>{200, "abc"}));
  EXPECT_EQ(only_problem(co_await call(s, port, "/codes/ab1")), json::parse(R"({"type": "string_pattern_mismatch",
      "loc": ["path", "code"], "msg": "String should match pattern '^[a-z]+$'", "input": "ab1",
      "ctx": {"pattern": "^[a-z]+$"}})"));

  EXPECT_EQ(co_await call(s, port, "/search?q=tea"), (std::pair<int, std::string>{200, "tea 10 - 0.50"}));
  EXPECT_EQ(co_await call(s, port, "/search?q=tea&limit=3&full=Yes&min=2.25"),
            (std::pair<int, std::string>{200, "tea 3 full 2.25"}));
  EXPECT_EQ(co_await call(s, port, "/search?q=tea&full=off"), (std::pair<int, std::string>{200, "tea 10 short 0.50"}));
  EXPECT_EQ(only_problem(co_await call(s, port, "/search?q=tea&limit=0")), json::parse(R"({"type": "greater_than_equal",
      "loc": ["query", "limit"], "msg": "Input should be greater than or equal to 1", "input": "0",
      "ctx": {"ge": 1}})"));
  EXPECT_EQ(only_problem(co_await call(s, port, "/search")), json::parse(R"({"type": "missing",
      "loc": ["query", "q"], "msg": "Field required", "input": null})"));
  EXPECT_EQ(only_problem(co_await call(s, port, "/search?q=tea&full=maybe")), json::parse(R"({"type": "bool_parsing",
      "loc": ["query", "full"], "msg": "Input should be a valid boolean, unable to interpret input",
      "input": "maybe"})"));
  EXPECT_EQ(only_problem(co_await call(s, port, "/search?q=tea&min=x")), json::parse(R"({"type": "float_parsing",
      "loc": ["query", "min"], "msg": "Input should be a valid number, unable to parse string as a number",
      "input": "x"})"));
  co_await s.close();
  co_await server.shutdown(1s);
}

TEST(HttpTypedParams, PathAndQueryParametersAreConvertedOr422) { run_bounded(path_and_query_body()); }

Coro<void> models_body() {
  Server server(quiet());
  server.get("/page", page);
  server.post("/orders", order);
  co_await server.start("127.0.0.1", 0);
  ClientSession s;
  const std::uint16_t port = server.port();
  EXPECT_EQ(co_await call(s, port, "/page?q=x"), (std::pair<int, std::string>{200, "x 0 10 "}));
  EXPECT_EQ(co_await call(s, port, "/page?q=x&after=5&limit=100&tag=a&tag=b&other=1"),
            (std::pair<int, std::string>{200, "x 5 100 a,b,"}));
  const auto bad = co_await call(s, port, "/page?after=-1&limit=500&tag=a&tag=b&tag=c");
  EXPECT_EQ(bad.first, 422);
  EXPECT_EQ(json::parse(bad.second), json::parse(R"({"detail": [
      {"type": "greater_than_equal", "loc": ["query", "after"], "msg": "Input should be greater than or equal to 0",
       "input": "-1", "ctx": {"ge": 0}},
      {"type": "less_than_equal", "loc": ["query", "limit"], "msg": "Input should be less than or equal to 100",
       "input": "500", "ctx": {"le": 100}},
      {"type": "too_long", "loc": ["query", "tag"], "msg": "List should have at most 2 items after validation, not 3",
       "input": ["a", "b", "c"], "ctx": {"field_type": "List", "max_length": 2, "actual_length": 3}},
      {"type": "missing", "loc": ["query", "q"], "msg": "Field required", "input": null}]})"))
      << "every problem at once, in the fields' declared order, each input the text as sent";
  EXPECT_EQ(only_problem(co_await call(s, port, "/page?q=x&limit=ten")), json::parse(R"({"type": "int_parsing",
      "loc": ["query", "limit"], "msg": "Input should be a valid integer, unable to parse string as an integer",
      "input": "ten"})")) << "a text that is not a number: that problem only";

  EXPECT_EQ(co_await call(s, port, "/orders", R"({"sku": "AB-12", "weight": 1})"),
            (std::pair<int, std::string>{200, "AB-12 1 normal"}));
  const auto refused = co_await call(s, port, "/orders", R"({"sku": "ab", "count": 0, "speed": "slow", "weight": 0})");
  EXPECT_EQ(refused.first, 422);
  EXPECT_EQ(json::parse(refused.second), json::parse(R"({"detail": [
      {"type": "string_too_short", "loc": ["body", "sku"], "msg": "String should have at least 3 characters",
       "input": "ab", "ctx": {"min_length": 3}},
      {"type": "string_pattern_mismatch", "loc": ["body", "sku"], "msg": "String should match pattern '^[A-Z0-9-]+$'",
       "input": "ab", "ctx": {"pattern": "^[A-Z0-9-]+$"}},
      {"type": "greater_than_equal", "loc": ["body", "count"], "msg": "Input should be greater than or equal to 1",
       "input": 0, "ctx": {"ge": 1}},
      {"type": "enum", "loc": ["body", "speed"], "msg": "Input should be 'normal' or 'express'", "input": "slow",
       "ctx": {"expected": "'normal' or 'express'"}},
      {"type": "greater_than", "loc": ["body", "weight"], "msg": "Input should be greater than 0", "input": 0,
       "ctx": {"gt": 0}}]})"));
  co_await s.close();
  co_await server.shutdown(1s);
}

TEST(HttpTypedParams, QueryModelsAndBodiesAreCheckedWithTheirConstraints) { run_bounded(models_body()); }

}  // namespace
}  // namespace corio_http_test
