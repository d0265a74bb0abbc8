// CRUD on one PostgreSQL table over a connection pool, FastAPI-style: typed
// path and query parameters, a body checked against its field list's
// constraints, every refusal a 422 in FastAPI's shape. products_api.py
// beside it is the FastAPI + asyncpg program this one answers (docs/pg.md,
// "A REST API on PostgreSQL, beside FastAPI's", compares them).
//
//   GET    /products?after=ID&limit=N  -> 200 [{"id", "name", "stock", "kind"}, ...]
//   GET    /products/{product_id}      -> 200 the product, or 404
//   POST   /products                   <- {"name", "stock", "kind"?} -> 201 the product
//   PUT    /products/{product_id}      <- the same -> 200 the product, or 404
//   DELETE /products/{product_id}      -> 204, or 404
//
// Usage: DSN="host=... dbname=..." PORT=8000 example_products_api  (no DSN:
// libpq's defaults, the PG* environment variables). Ctrl-C stops it.
#include <cstdio>
#include <cstdlib>

#include <corio/corio.hpp>
#include <corio/http.hpp>
#include <corio/http/json_as.hpp>
#include <corio/pg.hpp>

using corio::Coro;
using namespace corio::http;
namespace pg = corio::pg;

struct Product {
  std::string name;
  int stock = 0;
  std::string kind = "part";
  static constexpr auto fields =
      std::tuple{field("name", &Product::name).min_length(1).max_length(80),
                 field("stock", &Product::stock).ge(0),
                 field("kind", &Product::kind).one_of("tool", "part", "kit").optional()};
};

Response found(const pg::Result& r) {
  if (r.empty()) throw HTTPException::json(404, {{"detail", "no such product"}});
  return Response::json(r[0]);
}

Coro<Response> list_products(pg::Pool& pool, Request& req) {
  const int after = req.query_as<int>("after", 0, {.ge = 0});
  const int limit = req.query_as<int>("limit", 10, {.ge = 1, .le = 100});
  co_return Response::json(co_await pool.query(
      "SELECT * FROM products WHERE id > $1 ORDER BY id LIMIT $2", after, limit));
}

Coro<Response> get_product(pg::Pool& pool, Request& req) {
  co_return found(
      co_await pool.query("SELECT * FROM products WHERE id = $1", req.path_as<int>("product_id")));
}

Coro<Response> create_product(pg::Pool& pool, Request& req) {
  const Product p = co_await req.json_as<Product>();
  const pg::Result r = co_await pool.query(
      "INSERT INTO products (name, stock, kind) VALUES ($1, $2, $3) RETURNING *", p.name, p.stock,
      p.kind);
  co_return Response::json(r[0], 201);
}

Coro<Response> update_product(pg::Pool& pool, Request& req) {
  const Product p = co_await req.json_as<Product>();
  co_return found(co_await pool.query(
      "UPDATE products SET name = $2, stock = $3, kind = $4 WHERE id = $1 RETURNING *",
      req.path_as<int>("product_id"), p.name, p.stock, p.kind));
}

Coro<Response> delete_product(pg::Pool& pool, Request& req) {
  const pg::Result r =
      co_await pool.query("DELETE FROM products WHERE id = $1", req.path_as<int>("product_id"));
  if (r.affected() == 0) throw HTTPException::json(404, {{"detail", "no such product"}});
  co_return Response::text("", 204);
}

Coro<void> serve(const char* dsn, int port) {
  const pg::PoolOptions options{.conninfo = dsn != nullptr ? dsn : "", .max_size = 4};
  pg::Pool pool = co_await pg::Pool::create(options);
  co_await pool.execute(
      "CREATE TABLE IF NOT EXISTS products (id serial PRIMARY KEY, name text NOT NULL,"
      " stock int NOT NULL, kind text NOT NULL)");
  Server server;
  server.get("/products", [&pool](Request& req) { return list_products(pool, req); });
  server.get("/products/{product_id}", [&pool](Request& req) { return get_product(pool, req); });
  server.post("/products", [&pool](Request& req) { return create_product(pool, req); });
  server.put("/products/{product_id}", [&pool](Request& req) { return update_product(pool, req); });
  server.del("/products/{product_id}", [&pool](Request& req) { return delete_product(pool, req); });
  co_await server.start("127.0.0.1", static_cast<std::uint16_t>(port));
  std::fprintf(stderr, "serving on http://127.0.0.1:%u\n", server.port());
  co_await run_until_signal(server);
}

int main() {
  const char* port = std::getenv("PORT");
  return corio::run_main(serve(std::getenv("DSN"), port != nullptr ? std::atoi(port) : 8000));
}
