// http::parse_json (json.hpp): JSON from a peer within a depth and a size
// limit, and its two users in the layer: Request::json() (400) and
// ClientResponse::json() (JsonError). 100,000 levels overflowed the stack
// in a copy before the limit; now each is an error and the process lives.
#include <nlohmann/json.hpp>

#include <corio/http/client.hpp>
#include <corio/http/json.hpp>

#include "http/server_support.hpp"

namespace corio_http_test {
namespace {

using corio::http::JsonError;
using corio::http::JsonLimits;
using corio::http::parse_json;

std::string nested_arrays(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

std::string nested_objects(std::size_t depth) {
  std::string text;
  for (std::size_t i = 0; i < depth; ++i) text += "{\"a\":";
  text += "1";
  text += std::string(depth, '}');
  return text;
}

JsonError::Kind kind_of(std::string_view text, const JsonLimits& limits = {}) {
  try {
    parse_json(text, limits);
  } catch (const JsonError& e) {
    return e.kind();
  }
  ADD_FAILURE() << "accepted: " << text.substr(0, 40);
  return JsonError::Kind::syntax;
}

TEST(Json, DeepNestingIsRefusedWithoutRecursion) {
  EXPECT_EQ(kind_of(nested_arrays(100'000)), JsonError::Kind::too_deep);
  EXPECT_EQ(kind_of(nested_objects(100'000)), JsonError::Kind::too_deep);
  EXPECT_EQ(kind_of("[" + nested_objects(100'000) + "]"), JsonError::Kind::too_deep);
}

TEST(Json, TheDepthLimitIsExactAndConfigurable) {
  const JsonLimits defaults;
  EXPECT_EQ(parse_json(nested_arrays(defaults.max_depth)).size(), 1u);
  EXPECT_EQ(kind_of(nested_arrays(defaults.max_depth + 1)), JsonError::Kind::too_deep);
  EXPECT_NO_THROW(parse_json(nested_objects(3), {.max_depth = 3}));
  EXPECT_EQ(kind_of(nested_objects(4), {.max_depth = 3}), JsonError::Kind::too_deep);
  // Brackets inside strings are no nesting, nor are escaped quotes ends of one.
  const std::string in_string = "[\"" + std::string(1000, '[') + "\\\"{{{\"]";
  EXPECT_EQ(parse_json(in_string, {.max_depth = 2})[0].get<std::string>().size(), 1004u);
}

TEST(Json, SizeNulAndGarbageAreErrorsInOurOwnWords) {
  EXPECT_EQ(kind_of(std::string(100, ' ') + "{}", {.max_size = 50}), JsonError::Kind::too_large);
  EXPECT_EQ(kind_of(std::string("{}\0", 3)), JsonError::Kind::syntax);
  EXPECT_EQ(kind_of(std::string("{\"a\":1}\0garbage", 15)), JsonError::Kind::syntax);
  EXPECT_EQ(kind_of("{} x"), JsonError::Kind::syntax);
  EXPECT_EQ(kind_of("1e9999"), JsonError::Kind::syntax);
  try {
    parse_json("{\"a\": tru}");
    ADD_FAILURE() << "accepted";
  } catch (const JsonError& e) {
    EXPECT_EQ(std::string(e.what()).find("json.exception"), std::string::npos) << e.what();
  }
}

Coro<Response> echo_json(Request& req) {
  nlohmann::json body = co_await req.json();
  co_return Response::json(body);
}

Coro<Response> deep_reply(Request&) { co_return Response::text(nested_arrays(100'000), 200, "application/json"); }

std::string post(std::string_view body) {
  return "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + std::string(body);
}

Coro<void> deep_request_bodies_get_400() {
  Server server(quiet());
  server.post("/echo", echo_json);
  co_await server.start("127.0.0.1", 0);
  for (const std::string& body : {nested_arrays(100'000), nested_objects(100'000)}) {
    const Reply r = co_await exchange(server.port(), post(body));
    EXPECT_EQ(r.status, 400);
  }
  const Reply ok = co_await exchange(server.port(), post(R"({"still": "alive"})"));
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(nlohmann::json::parse(ok.body)["still"], "alive");
  co_await server.shutdown(1s);
}

TEST(Json, ADeepRequestBodyIs400AndTheServerLivesOn) { run_bounded(deep_request_bodies_get_400()); }

Coro<void> deep_response_bodies_raise() {
  Server server(quiet());
  server.get("/deep", deep_reply);
  co_await server.start("127.0.0.1", 0);
  corio::http::ClientSession client;
  corio::http::ClientResponse r =
      co_await client.get("http://127.0.0.1:" + std::to_string(server.port()) + "/deep");
  bool refused = false;
  try {
    co_await r.json();
  } catch (const JsonError& e) {
    refused = e.kind() == JsonError::Kind::too_deep;
  }
  EXPECT_TRUE(refused);
  co_await client.close();
  co_await server.shutdown(1s);
}

TEST(Json, ADeepResponseBodyIsAJsonError) { run_bounded(deep_response_bodies_raise()); }

}  // namespace
}  // namespace corio_http_test
