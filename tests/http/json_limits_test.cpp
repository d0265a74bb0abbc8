// parse_json's two users in the http layer: Request::json() answers a body
// past the limits with 400, ClientResponse::json() raises JsonError.
#include <nlohmann/json.hpp>

#include "http/server_support.hpp"
#include "json/json_support.hpp"
#include <corio/http/client.hpp>
#include <corio/json/parse.hpp>

namespace corio_http_test {
namespace {

using corio::http::JsonError;
using corio_json_test::nested_arrays;
using corio_json_test::nested_objects;

Coro<Response> echo_json(Request& req) {
  nlohmann::json body = co_await req.json();
  co_return Response::json(body);
}

Coro<Response> deep_reply(Request&) {
  co_return Response::text(nested_arrays(100'000), 200, "application/json");
}

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
