// JSON request validation on the server: Request::json_as<T>() (the
// struct's field list as its schema, then decoded) and Request::json(schema)
// for a raw schema; a body that does not match is a 422 listing every
// problem in FastAPI's shape, in the fields' declared order, through the
// server's error hook; one that is not JSON (or none) FastAPI's 422 too.
#include <nlohmann/json.hpp>

#include <corio/http/client.hpp>
#include <corio/http/json_as.hpp>

#include "http/server_support.hpp"

namespace json_body_test {

struct Address {
  std::string city;
  std::optional<std::string> zip;
};

struct Signup {
  std::string name;
  int age = 0;
  Address address;
  std::vector<std::string> tags;
};

}  // namespace json_body_test

template <>
struct corio::http::Fields<json_body_test::Address> {
  static constexpr auto list =
      std::tuple{field("city", &json_body_test::Address::city), field("zip", &json_body_test::Address::zip)};
};

template <>
struct corio::http::Fields<json_body_test::Signup> {
  using S = json_body_test::Signup;
  static constexpr auto list = std::tuple{field("name", &S::name, "Who signs up"), field("age", &S::age),
                                          field("address", &S::address), field("tags", &S::tags)};
};

namespace corio_http_test {
namespace {

using corio::http::ClientResponse;
using corio::http::ClientSession;
using corio::http::HTTPException;
using corio::http::RequestOptions;
using json_body_test::Signup;
using nlohmann::json;

TEST(JsonFields, TheSchemaAndTheDecodingComeFromTheFieldList) {
  EXPECT_EQ(corio::http::json_schema_of<Signup>(), json::parse(R"({"type": "object",
      "properties": {
        "name": {"type": "string", "description": "Who signs up"},
        "age": {"type": "integer"},
        "address": {"type": "object",
                    "properties": {"city": {"type": "string"}, "zip": {"type": "string"}},
                    "required": ["city"]},
        "tags": {"type": "array", "items": {"type": "string"}}},
      "required": ["name", "age", "address", "tags"]})"));
  const Signup s = corio::http::decode_json<Signup>(
      json::parse(R"({"name": "ada", "age": 36, "address": {"city": "London"}, "tags": ["a", "b"]})"));
  EXPECT_EQ(s.name, "ada");
  EXPECT_EQ(s.age, 36);
  EXPECT_EQ(s.address.city, "London");
  EXPECT_EQ(s.address.zip, std::nullopt);
  EXPECT_EQ(s.tags, (std::vector<std::string>{"a", "b"}));
}

Coro<Response> signup(Request& req) {
  const Signup s = co_await req.json_as<Signup>();
  co_return Response::text(s.name + " " + std::to_string(s.age) + " " + s.address.city + " " +
                           s.address.zip.value_or("-") + " " + std::to_string(s.tags.size()));
}

Coro<Response> rename(Request& req) {
  const json schema = {{"type", "object"},
                       {"properties", {{"to", {{"type", "string"}, {"maxLength", 3}}}}},
                       {"additionalProperties", false}};
  const json body = co_await req.json(schema);
  co_return Response::text("renamed to " + body["to"].get<std::string>());
}

Coro<Response> echo_json(Request& req) { co_return Response::json(co_await req.json()); }

// An API's error hook: the status, and what the error said, as JSON.
Response wrapped(const Request&, const HTTPException& e) {
  return Response::json({{"status", e.status()}, {"said", json::parse(e.body())}}, e.status());
}

Coro<ClientResponse> post(ClientSession& s, std::uint16_t port, std::string path, std::string body) {
  RequestOptions opts;
  opts.data = std::move(body);
  opts.headers.set("Content-Type", "application/json");
  co_return co_await s.post("http://127.0.0.1:" + std::to_string(port) + path, std::move(opts));
}

Coro<void> start_api(Server& server) {
  server.post("/signup", signup);
  server.post("/rename", rename);
  co_await server.start("127.0.0.1", 0);
}

Coro<void> validation_body() {
  Server server(quiet());
  co_await start_api(server);
  ClientSession s;
  ClientResponse r = co_await post(s, server.port(), "/signup",
                                   R"({"name": "ada", "age": 36, "address": {"city": "London", "zip": "N1"},
                                       "tags": ["x"]})");
  EXPECT_EQ(r.status(), 200);
  EXPECT_EQ(co_await r.text(), "ada 36 London N1 1");

  r = co_await post(s, server.port(), "/signup", R"({"name": 7, "age": "old", "address": {}, "tags": [1]})");
  EXPECT_EQ(r.status(), 422);
  EXPECT_EQ(r.headers().get_or("Content-Type", ""), "application/json");
  const json answer = json::parse(co_await r.text());
  EXPECT_EQ(answer, json::parse(R"({"detail": [
      {"type": "string_type", "loc": ["body", "name"], "msg": "Input should be a valid string", "input": 7},
      {"type": "int_type", "loc": ["body", "age"], "msg": "Input should be a valid integer", "input": "old"},
      {"type": "missing", "loc": ["body", "address", "city"], "msg": "Field required", "input": {}},
      {"type": "string_type", "loc": ["body", "tags", 0], "msg": "Input should be a valid string", "input": 1}]})"))
      << "every problem in FastAPI's shape, in the fields' declared order (pydantic's)";

  r = co_await post(s, server.port(), "/rename", R"({"to": "bob"})");
  EXPECT_EQ(co_await r.text(), "renamed to bob");
  r = co_await post(s, server.port(), "/rename", R"({"to": "robert", "why": 1})");
  EXPECT_EQ(r.status(), 422);
  EXPECT_EQ(json::parse(co_await r.text())["detail"], json::parse(R"([
      {"type": "string_too_long", "loc": ["body", "to"], "msg": "String should have at most 3 characters",
       "input": "robert", "ctx": {"max_length": 3}},
      {"type": "extra_forbidden", "loc": ["body", "why"], "msg": "Extra inputs are not permitted", "input": 1}])"));

  co_await s.close();
  co_await server.shutdown(1s);
}

TEST(HttpJsonBody, JsonAsAndRawSchemasAnswer422WithEveryProblem) { run_bounded(validation_body()); }

// pydantic walks a model's fields in their declared order, a missing one
// where it stands; the body's other keys come after.
Coro<void> declared_order_body() {
  Server server(quiet());
  co_await start_api(server);
  ClientSession s;
  ClientResponse r = co_await post(s, server.port(), "/signup", R"({"zzz": 1, "tags": "x", "name": "ada"})");
  EXPECT_EQ(r.status(), 422);
  const json answer = json::parse(co_await r.text());
  json locs = json::array();
  for (const json& e : answer["detail"]) locs.push_back(e["loc"]);
  EXPECT_EQ(locs, json::parse(R"([["body", "age"], ["body", "address"], ["body", "tags"]])"));
  co_await s.close();
  co_await server.shutdown(1s);
}

TEST(HttpJsonBody, ProblemsComeInTheFieldsDeclaredOrder) { run_bounded(declared_order_body()); }

// A body that is not JSON is FastAPI's 422 json_invalid, at the byte where
// the parser stopped (Python's JSONDecodeError.pos there); none is a 422
// missing; both for json_as and json(schema). json() alone stays a 400.
Coro<void> not_json_body() {
  Server server(quiet());
  server.post("/plain", echo_json);
  co_await start_api(server);
  ClientSession s;
  for (const char* path : {"/signup", "/rename"}) {
    ClientResponse r = co_await post(s, server.port(), path, R"({"name": "ada", "age": })");
    EXPECT_EQ(r.status(), 422) << path;
    EXPECT_EQ(json::parse(co_await r.text()), json::parse(R"({"detail": [{"type": "json_invalid",
        "loc": ["body", 23], "msg": "JSON decode error", "input": {},
        "ctx": {"error": "syntax error at byte 23"}}]})")) << path;
    r = co_await post(s, server.port(), path, "");
    EXPECT_EQ(r.status(), 422) << path;
    EXPECT_EQ(json::parse(co_await r.text()), json::parse(R"({"detail": [{"type": "missing",
        "loc": ["body"], "msg": "Field required", "input": null}]})")) << path;
  }
  ClientResponse r = co_await post(s, server.port(), "/plain", "{not json");
  EXPECT_EQ(r.status(), 400) << "json() without a schema: not JSON is a 400";
  co_await s.close();
  co_await server.shutdown(1s);
}

TEST(HttpJsonBody, ABodyThatIsNotJsonIsFastApis422) { run_bounded(not_json_body()); }

Coro<void> hooked_body() {
  Server server(quiet());
  server.on_error(wrapped);
  co_await start_api(server);
  ClientSession s;
  ClientResponse r =
      co_await post(s, server.port(), "/signup", R"({"name": "ada", "age": 36, "address": {"city": 1}, "tags": []})");
  EXPECT_EQ(r.status(), 422);
  const json hooked = json::parse(co_await r.text());
  EXPECT_EQ(hooked["status"], 422) << "the 422 goes through the error hook";
  EXPECT_EQ(hooked["said"]["detail"][0]["loc"], json::parse(R"(["body", "address", "city"])"));
  co_await s.close();
  co_await server.shutdown(1s);
}

TEST(HttpJsonBody, The422GoesThroughTheErrorHook) { run_bounded(hooked_body()); }

}  // namespace
}  // namespace corio_http_test
