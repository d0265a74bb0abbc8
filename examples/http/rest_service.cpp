// A small REST service: JSON bodies, path parameters, proper status codes,
// and a graceful shutdown on Ctrl-C / SIGTERM.
//
//   GET    /items        -> 200 [{"id": 1, "name": "..."}, ...]
//   GET    /items/{id}   -> 200 {"id": 1, "name": "..."} or 404
//   POST   /items        <- {"name": "..."}  -> 201 {"id": 2, "name": "..."}; 400 without a name
//   DELETE /items/{id}   -> 204 or 404
//
// Usage: example_rest_service [--port P]   (default 8080; 0 picks a free one)
//        example_rest_service --self-test  (serves on a free port, calls every
//                                           endpoint with ClientSession, exits)
//
//   curl -s localhost:8080/items -d '{"name": "ball"}' -H 'Content-Type: application/json'
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include <corio/corio.hpp>
#include <corio/http.hpp>

#include "common/serve_or_self_test.hpp"

using corio::Coro;
using nlohmann::json;
using namespace corio::http;

namespace {

// The store: one loop, one thread, so no lock (workers = 1).
struct Items {
  std::map<int, std::string> names{{1, "first item"}};
  int next_id = 2;

  static json item(int id, const std::string& name) { return {{"id", id}, {"name", name}}; }
};

// The {id} parameter as a number, or nullopt (then the route answers 404).
std::optional<int> item_id(const Request& req) {
  const std::string id(req.param("id"));
  char* end = nullptr;
  const long n = std::strtol(id.c_str(), &end, 10);
  if (id.empty() || *end != '\0' || n <= 0 || n > 1'000'000'000) return std::nullopt;
  return static_cast<int>(n);
}

void add_routes(Server& server, Items& items) {
  server.get("/items", [&items](Request&) -> Coro<Response> {
    json all = json::array();
    for (const auto& [id, name] : items.names) all.push_back(Items::item(id, name));
    co_return Response::json(all);
  });
  server.get("/items/{id}", [&items](Request& req) -> Coro<Response> {
    const auto id = item_id(req);
    if (!id || !items.names.contains(*id)) co_return Response::json({{"error", "no such item"}}, 404);
    co_return Response::json(Items::item(*id, items.names[*id]));
  });
  server.post("/items", [&items](Request& req) -> Coro<Response> {
    const json body = co_await req.json();  // not JSON: 400
    if (!body.is_object() || !body.contains("name") || !body["name"].is_string()) {
      co_return Response::json({{"error", "a JSON object with a string \"name\" is needed"}}, 400);
    }
    const int id = items.next_id++;
    items.names[id] = body["name"].get<std::string>();
    co_return Response::json(Items::item(id, items.names[id]), 201);
  });
  server.del("/items/{id}", [&items](Request& req) -> Coro<Response> {
    const auto id = item_id(req);
    if (!id || items.names.erase(*id) == 0) co_return Response::json({{"error", "no such item"}}, 404);
    co_return Response::text("", 204);
  });
}

// Every endpoint once, as a client would call them; true if all answered right.
Coro<bool> self_test(std::uint16_t port) {
  ClientSession s;
  const std::string base = "http://127.0.0.1:" + std::to_string(port) + "/items";
  RequestOptions create;
  create.json = json{{"name", "ball"}};
  ClientResponse made = co_await s.post(base, std::move(create));
  const json ball = co_await made.json();
  ClientResponse listed = co_await s.get(base);
  const json all = co_await listed.json();
  ClientResponse missing = co_await s.get(base + "/999");
  co_await missing.read();
  ClientResponse deleted = co_await s.del(base + "/" + std::to_string(ball["id"].get<int>()));
  co_await deleted.read();
  RequestOptions bad;
  bad.data = "not json";
  ClientResponse refused = co_await s.post(base, std::move(bad));
  co_await refused.read();
  std::printf("POST %d %s\nGET %d %s\nGET /999 %d\nDELETE %d\nPOST (not JSON) %d\n", made.status(),
              ball.dump().c_str(), listed.status(), all.dump().c_str(), missing.status(), deleted.status(),
              refused.status());
  co_await s.close();
  co_return made.status() == 201 && all.size() == 2 && missing.status() == 404 &&
      deleted.status() == 204 && refused.status() == 400;
}

Coro<int> serve(std::uint16_t port, bool test) {
  Items items;
  ServerOptions opts;
  if (test) opts.access_log = nullptr;
  Server server(opts);
  add_routes(server, items);
  co_return co_await corio_examples::serve_or_self_test(server, port, test, "REST service",
                                                        self_test);
}

}  // namespace

int main(int argc, char** argv) {
  std::uint16_t port = 8080;
  bool test = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--self-test")) {
      test = true;
    } else if (!std::strcmp(argv[i], "--port") && i + 1 < argc) {
      port = static_cast<std::uint16_t>(std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: %s [--port P] [--self-test]\n", argv[0]);
      return 2;
    }
  }
  return corio::run_main(serve(port, test));
}
