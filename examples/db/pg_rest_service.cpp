// A REST service on PostgreSQL: every request is a task that borrows a
// pooled connection, queries with parameters, and gives it back.
//
//   GET    /items?after=ID&limit=N -> 200 {"items": [...], "next": ID or null}  (keyset pages)
//   GET    /items/{id}             -> 200 {"id", "name", "stock"} or 404
//   POST   /items                  <- {"name": "...", "stock": 3} -> 201 the item; 400 if malformed
//   DELETE /items/{id}             -> 204 or 404
//   POST   /items/{id}/take        <- {"count": 2} -> 200 the order; 409 short of stock
//                                     (one transaction: lock the row, check, update, record)
//
// Usage: example_pg_rest_service --dsn "host=... dbname=..." [--port P]
//        example_pg_rest_service --dsn-file FILE --self-test   (free port, calls every
//                                                               endpoint, exits 0 if right)
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include <corio/corio.hpp>
#include <corio/http.hpp>
#include <corio/pg.hpp>

#include "common/serve_or_self_test.hpp"

using corio::Coro;
using nlohmann::json;
using namespace corio::http;
namespace pg = corio::pg;

namespace {

json item_of(pg::Row row) {
  return {{"id", row.get<int>("id")}, {"name", row.get<std::string>("name")},
          {"stock", row.get<int>("stock")}};
}

int number(std::string_view text, int fallback) {
  int v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  return ec == std::errc() && end == text.data() + text.size() && v >= 0 ? v : fallback;
}

std::string query_value(const Request& req, std::string_view key) {
  for (const auto& [k, v] : req.query()) {
    if (k == key) return v;
  }
  return {};
}

Coro<Response> list_items(pg::Pool* pool, Request& req) {
  const int after = number(query_value(req, "after"), 0);
  const int limit = std::min(number(query_value(req, "limit"), 10), 100);
  pg::PooledConnection conn = co_await pool->acquire();
  pg::Result r = co_await conn->query(
      "SELECT id, name, stock FROM items WHERE id > $1 ORDER BY id LIMIT $2", after, limit);
  json page = {{"items", json::array()}, {"next", nullptr}};
  for (pg::Row row : r) page["items"].push_back(item_of(row));
  if (r.rows() == limit) page["next"] = r[r.rows() - 1].get<int>("id");
  co_return Response::json(page);
}

Coro<Response> get_item(pg::Pool* pool, Request& req) {
  pg::PooledConnection conn = co_await pool->acquire();
  pg::Result r = co_await conn->query("SELECT id, name, stock FROM items WHERE id = $1",
                                      number(req.param("id"), 0));
  if (r.empty()) co_return Response::json({{"error", "no such item"}}, 404);
  co_return Response::json(item_of(r[0]));
}

Coro<Response> create_item(pg::Pool* pool, Request& req) {
  const json body = co_await req.json();
  if (!body.is_object() || !body.value("name", json()).is_string() ||
      !body.value("stock", json()).is_number_integer()) {
    co_return Response::json({{"error", "need {\"name\": string, \"stock\": integer}"}}, 400);
  }
  pg::PooledConnection conn = co_await pool->acquire();
  pg::Result r = co_await conn->query(
      "INSERT INTO items (name, stock) VALUES ($1, $2) RETURNING id, name, stock",
      body["name"].get<std::string>(), body["stock"].get<int>());
  co_return Response::json(item_of(r[0]), 201);
}

Coro<Response> delete_item(pg::Pool* pool, Request& req) {
  pg::PooledConnection conn = co_await pool->acquire();
  pg::Result r = co_await conn->query("DELETE FROM items WHERE id = $1", number(req.param("id"), 0));
  if (r.affected() == 0) co_return Response::json({{"error", "no such item"}}, 404);
  co_return Response::text("", 204);
}

// The transaction: a failure (or a client gone mid-way, which cancels the
// task) anywhere before commit() rolls everything back.
Coro<Response> take_item(pg::Pool* pool, Request& req) {
  const json body = co_await req.json();
  const int count = body.is_object() ? body.value("count", 0) : 0;
  if (count <= 0) co_return Response::json({{"error", "need a positive \"count\""}}, 400);
  const int id = number(req.param("id"), 0);
  pg::PooledConnection conn = co_await pool->acquire();
  pg::Transaction tx = co_await pg::Transaction::begin(*conn);
  pg::Result stock = co_await conn->query("SELECT stock FROM items WHERE id = $1 FOR UPDATE", id);
  if (stock.empty()) co_return Response::json({{"error", "no such item"}}, 404);
  if (stock[0].get<int>(0) < count) co_return Response::json({{"error", "not enough stock"}}, 409);
  co_await conn->query("UPDATE items SET stock = stock - $2 WHERE id = $1", id, count);
  pg::Result order = co_await conn->query(
      "INSERT INTO orders (item, count) VALUES ($1, $2) RETURNING id", id, count);
  co_await tx.commit();
  co_return Response::json({{"order", order[0].get<int>(0)}, {"item", id}, {"count", count}});
}

void add_routes(Server& server, pg::Pool& pool) {
  server.get("/items", [&pool](Request& req) { return list_items(&pool, req); });
  server.get("/items/{id}", [&pool](Request& req) { return get_item(&pool, req); });
  server.post("/items", [&pool](Request& req) { return create_item(&pool, req); });
  server.del("/items/{id}", [&pool](Request& req) { return delete_item(&pool, req); });
  server.post("/items/{id}/take", [&pool](Request& req) { return take_item(&pool, req); });
}

// Bodies by pointer: g++ 12 mishandles a braced temporary inside a co_await.
Coro<int> status_of(ClientSession& s, std::string method, std::string url, const json* body,
                    json* out) {
  RequestOptions o;
  if (body) o.json = *body;
  ClientResponse r = co_await s.request(std::move(method), std::move(url), std::move(o));
  const std::string text = co_await r.text();
  if (out) *out = text.empty() ? json() : json::parse(text);
  std::printf("%d %s\n", r.status(), text.c_str());
  co_return r.status();
}

Coro<bool> self_test(std::uint16_t port) {
  ClientSession s;
  const std::string base = "http://127.0.0.1:" + std::to_string(port) + "/items";
  bool ok = true;
  json made, page, order;
  const json take_two = {{"count", 2}}, malformed = {{"name", 1}};
  for (int i = 0; i < 5; ++i) {
    // Parameters stay data: this name is stored as written.
    const json item = {{"name", "item '" + std::to_string(i) + "'; DROP TABLE items; --"},
                       {"stock", 3}};
    ok &= co_await status_of(s, "POST", base, &item, &made) == 201;
  }
  const std::string one = base + "/" + std::to_string(made["id"].get<int>());
  ok &= co_await status_of(s, "GET", base + "?limit=2", nullptr, &page) == 200;
  ok &= page["items"].size() == 2;
  ok &= co_await status_of(s, "GET", base + "?limit=2&after=" + page["next"].dump(), nullptr,
                           &page) == 200;
  ok &= page["items"].size() == 2;
  ok &= co_await status_of(s, "POST", one + "/take", &take_two, &order) == 200;
  ok &= co_await status_of(s, "POST", one + "/take", &take_two, nullptr) == 409;
  ok &= co_await status_of(s, "GET", one, nullptr, &made) == 200;
  ok &= made["stock"] == 1;
  ok &= co_await status_of(s, "POST", base, &malformed, nullptr) == 400;
  ok &= co_await status_of(s, "DELETE", one, nullptr, nullptr) == 204;
  ok &= co_await status_of(s, "GET", one, nullptr, nullptr) == 404;
  co_await s.close();
  co_return ok;
}

Coro<int> serve(std::string dsn, std::uint16_t port, bool test) {
  pg::PoolOptions po;
  po.conninfo = std::move(dsn);
  po.max_size = 4;
  pg::Pool pool = co_await pg::Pool::create(po);
  {
    pg::PooledConnection conn = co_await pool.acquire();
    co_await conn->execute(
        "CREATE TABLE IF NOT EXISTS items (id serial PRIMARY KEY, name text NOT NULL,"
        " stock int NOT NULL CHECK (stock >= 0));"
        "CREATE TABLE IF NOT EXISTS orders (id serial PRIMARY KEY, item int, count int)");
  }
  ServerOptions opts;
  if (test) opts.access_log = nullptr;
  Server server(opts);
  add_routes(server, pool);
  co_return co_await corio_examples::serve_or_self_test(server, port, test, "REST service",
                                                        self_test);
}

}  // namespace

int main(int argc, char** argv) {
  std::string dsn;
  std::uint16_t port = 8080;
  bool test = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--self-test")) {
      test = true;
    } else if (!std::strcmp(argv[i], "--dsn") && i + 1 < argc) {
      dsn = argv[++i];
    } else if (!std::strcmp(argv[i], "--dsn-file") && i + 1 < argc) {
      std::ifstream in(argv[++i]);
      std::getline(in, dsn);
    } else if (!std::strcmp(argv[i], "--port") && i + 1 < argc) {
      port = static_cast<std::uint16_t>(std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: %s --dsn DSN | --dsn-file FILE [--port P] [--self-test]\n", argv[0]);
      return 2;
    }
  }
  return corio::run_main(serve(dsn, port, test));
}
