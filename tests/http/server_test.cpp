// corio::http::Server through its API: routing, parameters, bodies, JSON,
// middleware, files, streams, the access log, workers, graceful shutdown.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "http/server_support.hpp"

namespace corio_http_test {
namespace {

using corio::http::HTTPException;
using corio::http::Next;

Coro<Response> user(Request& req) {
  nlohmann::json j{{"id", std::string(req.param("id"))}, {"path", req.path()}};
  for (const auto& [k, v] : req.query()) j["q"][k] = v;
  co_return Response::json(j);
}

Coro<Response> echo_json(Request& req) {
  nlohmann::json body = co_await req.json();
  body["seen"] = true;
  co_return Response::json(body, 201);
}

Coro<Response> echo_body(Request& req) { co_return Response::text(co_await req.read()); }

Coro<Response> count_chunks(Request& req) {
  std::size_t bytes = 0;
  for (;;) {
    const std::string piece = co_await req.read_chunk();
    if (piece.empty()) break;
    bytes += piece.size();
  }
  co_return Response::text(std::to_string(bytes));
}

Coro<Response> not_allowed_here(Request&) {
  throw HTTPException(409, "taken");
  co_return Response();
}

Coro<void> routing_body() {
  Server server(quiet());
  server.get("/hello", hello);
  server.get("/users/{id}", user);
  server.post("/users/{id}", echo_json);
  server.put("/conflict", not_allowed_here);
  co_await server.start("127.0.0.1", 0);
  const std::uint16_t port = server.port();

  Reply r = co_await exchange(port, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "Hello, World!");
  EXPECT_EQ(r.headers.get_or("Content-Length", ""), "13");
  EXPECT_EQ(r.headers.get_or("Server", ""), "corio");
  EXPECT_EQ(r.headers.get_or("Date", "").size(), 29u);
  EXPECT_EQ(r.headers.get_or("Content-Type", ""), "text/plain; charset=utf-8");

  r = co_await exchange(port, "GET /users/a%20b?x=1&y=z%21 HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(r.status, 200);
  const nlohmann::json j = nlohmann::json::parse(r.body);
  EXPECT_EQ(j["id"], "a b");
  EXPECT_EQ(j["path"], "/users/a b");
  EXPECT_EQ(j["q"]["y"], "z!");

  r = co_await exchange(port, "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(r.status, 404);
  r = co_await exchange(port, "GET /users HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(r.status, 404);
  r = co_await exchange(port, "DELETE /users/7 HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.headers.get_or("Allow", ""), "GET, POST, HEAD");
  r = co_await exchange(port, "PUT /conflict HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(r.status, 409);
  EXPECT_EQ(r.body, "taken");

  r = co_await exchange(port, "HEAD /hello HTTP/1.1\r\nHost: x\r\n\r\n", "HEAD");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.headers.get_or("Content-Length", ""), "13");
  EXPECT_EQ(r.body, "");
  co_await server.shutdown(1s);
}

TEST(HttpServer, RoutesParamsQueryAndErrors) { run_bounded(routing_body()); }

Coro<void> json_body() {
  Server server(quiet());
  server.post("/users/{id}", echo_json);
  co_await server.start("127.0.0.1", 0);
  const std::string doc = R"({"name":"ada"})";
  Reply r = co_await exchange(server.port(), "POST /users/1 HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                                                 std::to_string(doc.size()) + "\r\n\r\n" + doc);
  EXPECT_EQ(r.status, 201);
  EXPECT_EQ(nlohmann::json::parse(r.body), (nlohmann::json{{"name", "ada"}, {"seen", true}}));
  EXPECT_EQ(r.headers.get_or("Content-Type", ""), "application/json");
  r = co_await exchange(server.port(),
                        "POST /users/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n{bad}");
  EXPECT_EQ(r.status, 400);
  co_await server.shutdown(1s);
}

TEST(HttpServer, JsonBodiesAndBadJsonIs400) { run_bounded(json_body()); }

Coro<void> body_limit_body() {
  ServerOptions opts = quiet();
  opts.limits.max_body = 1000;
  Server server(std::move(opts));
  server.post("/echo", echo_body);
  server.post("/chunks", count_chunks);
  co_await server.start("127.0.0.1", 0);
  RawClient c = co_await connect(server.port());
  c.writer.write("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2000\r\n\r\n" +
                 std::string(2000, 'a'));
  Reply r = co_await read_reply(c.reader);
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(r.headers.get_or("Connection", ""), "close");
  EXPECT_TRUE(co_await closed_by_server(c.reader));

  const std::string big(900, 'b');
  r = co_await exchange(server.port(), "POST /chunks HTTP/1.1\r\nHost: x\r\nContent-Length: 900\r\n\r\n" + big);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "900");
  co_await server.shutdown(1s);
}

TEST(HttpServer, BodyOverMaxBodyIs413AndCloses) { run_bounded(body_limit_body()); }

Coro<Response> tag_outer(Request& req, Next next) {
  Response r = co_await next(req);
  r.headers.add("X-Order", "outer");
  co_return r;
}

Coro<Response> tag_inner(Request& req, Next next) {
  if (req.headers().contains("X-Deny")) co_return Response::text("denied", 403);
  Response r = co_await next(req);
  r.headers.add("X-Order", "inner");
  co_return r;
}

Coro<void> middleware_body() {
  Server server(quiet());
  server.use(tag_outer);
  server.use(tag_inner);
  server.get("/hello", hello);
  co_await server.start("127.0.0.1", 0);
  Reply r = co_await exchange(server.port(), "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(r.status, 200);
  const auto order = r.headers.get_all("X-Order");
  EXPECT_EQ(order, (std::vector<std::string_view>{"inner", "outer"}));
  r = co_await exchange(server.port(), "GET /hello HTTP/1.1\r\nHost: x\r\nX-Deny: 1\r\n\r\n");
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(r.headers.get_all("X-Order"), (std::vector<std::string_view>{"outer"}));
  co_await server.shutdown(1s);
}

TEST(HttpServer, MiddlewareRunsOutermostFirstAndCanAnswer) { run_bounded(middleware_body()); }

// A scratch directory with a big file, an index, and a symlink pointing out.
struct StaticTree {
  std::filesystem::path root, outside;
  std::string big;
  StaticTree() {
    const auto base = std::filesystem::temp_directory_path() /
                      ("corio-http-static-" + std::to_string(::getpid()));
    std::filesystem::remove_all(base);
    root = base / "www";
    outside = base / "secret.txt";
    std::filesystem::create_directories(root / "sub");
    for (std::size_t i = 0; big.size() < 3'000'000; ++i) big += std::to_string(i) + ",";
    std::ofstream(root / "big.bin", std::ios::binary) << big;
    std::ofstream(root / "sub" / "index.html") << "<p>index</p>";
    std::ofstream(outside) << "secret";
    std::filesystem::create_symlink(outside, root / "escape.txt");
    // Links that stay inside, and two that lead out: a directory and the
    // index's precompressed sibling.
    std::filesystem::create_symlink(root / "sub" / "index.html", root / "inner.html");
    std::filesystem::create_symlink(root / "sub", root / "alias");
    std::filesystem::create_symlink(base, root / "outdir");
    std::filesystem::create_symlink(outside, root / "sub" / "index.html.gz");
  }
  ~StaticTree() { std::filesystem::remove_all(root.parent_path()); }
};

Coro<void> static_body(const StaticTree* tree) {
  Server server(quiet());
  server.add_static("/", tree->root.string());
  co_await server.start("127.0.0.1", 0);
  const std::uint16_t port = server.port();
  RawClient c = co_await connect(port);
  // 3 MB outruns the loopback socket's buffers: sendfile meets EAGAIN and
  // takes its wait-for-room path.
  c.writer.write("GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\nGET /sub/ HTTP/1.1\r\nHost: x\r\n\r\n");
  Reply r = co_await read_reply(c.reader);
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(r.body == tree->big) << "size " << r.body.size();
  EXPECT_EQ(r.headers.get_or("Content-Type", ""), "application/octet-stream");
  r = co_await read_reply(c.reader);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "<p>index</p>");
  EXPECT_EQ(r.headers.get_or("Content-Type", ""), "text/html; charset=utf-8");
  c.writer.close();

  r = co_await exchange(port, "GET /missing.txt HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(r.status, 404);
  r = co_await exchange(port, "GET /escape.txt HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(r.status, 403);
  r = co_await exchange(port, "GET /sub/%2e%2e/%2e%2e/secret.txt HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(r.status, 403);
  r = co_await exchange(port, "HEAD /big.bin HTTP/1.1\r\nHost: x\r\n\r\n", "HEAD");
  EXPECT_EQ(r.headers.get_or("Content-Length", ""), std::to_string(tree->big.size()));
  EXPECT_EQ(r.body, "");
  co_await server.shutdown(1s);
}

TEST(HttpServer, StaticFilesWithSendfileStayUnderTheRoot) {
  StaticTree tree;
  run_bounded(static_body(&tree));
}

// Whichever component of the path is a link, what it leads to decides.
Coro<void> static_links_body(const StaticTree* tree) {
  Server server(quiet());
  server.add_static("/", tree->root.string());
  co_await server.start("127.0.0.1", 0);
  const std::uint16_t port = server.port();
  Reply r = co_await exchange(port, "GET /inner.html HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(r.body, "<p>index</p>");
  r = co_await exchange(port, "GET /alias/index.html HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(r.body, "<p>index</p>");
  r = co_await exchange(port, "GET /alias/ HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(r.body, "<p>index</p>");
  r = co_await exchange(port, "GET /outdir/secret.txt HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(r.status, 403);
  r = co_await exchange(port, "GET /sub/index.html HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n");
  EXPECT_EQ(r.body, "<p>index</p>") << "a sibling leading out is no sibling";
  EXPECT_FALSE(r.headers.contains("Content-Encoding"));
  r = co_await exchange(port, "GET /sub/nothing/here HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(r.status, 404);
  co_await server.shutdown(1s);
}

TEST(HttpServer, StaticFilesFollowLinksOnlyWithinTheRoot) {
  StaticTree tree;
  run_bounded(static_links_body(&tree));
}

Coro<void> produce(corio::http::StreamResponseWriter& out) {
  for (int i = 0; i < 3; ++i) {
    co_await out.write("piece" + std::to_string(i) + ";");
    co_await corio::sleep(1ms);
  }
}

Coro<Response> streamed(Request&) { co_return Response::stream(produce, 200, "text/plain"); }

Coro<void> stream_body() {
  Server server(quiet());
  server.get("/stream", streamed);
  co_await server.start("127.0.0.1", 0);
  RawClient c = co_await connect(server.port());
  c.writer.write("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
  Reply r = co_await read_reply(c.reader);
  EXPECT_EQ(r.headers.get_or("Transfer-Encoding", ""), "chunked");
  EXPECT_EQ(r.body, "piece0;piece1;piece2;");
  c.writer.write("GET /stream HTTP/1.0\r\n\r\n");  // no chunked in 1.0: until close
  r = co_await read_reply(c.reader);
  EXPECT_FALSE(r.headers.contains("Transfer-Encoding"));
  EXPECT_EQ(r.body, "piece0;piece1;piece2;");
  co_await server.shutdown(1s);
}

TEST(HttpServer, StreamedResponsesAreChunkedOrUntilClose) { run_bounded(stream_body()); }

struct LogLines {
  std::vector<std::string> lines;
};

Coro<void> access_log_body(LogLines* log, std::string root) {
  ServerOptions opts = quiet();
  opts.access_log = [log](const corio::http::AccessLogEntry& e) {
    log->lines.push_back(std::string(e.method) + " " + std::string(e.target) + " " +
                         std::to_string(e.status) + " " + std::to_string(e.bytes));
  };
  Server server(std::move(opts));
  server.get("/hello", hello);
  server.add_static("/files", std::move(root));
  co_await server.start("127.0.0.1", 0);
  co_await exchange(server.port(), "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
  co_await exchange(server.port(), "GET /x HTTP/1.1\r\nHost: x\r\n\r\n");
  // A directory without index.html: the 404 that was sent, not the 200
  // the static handler's file response started as.
  const Reply r = co_await exchange(server.port(), "GET /files/empty/ HTTP/1.1\r\nHost: x\r\n\r\n");
  co_await server.shutdown(1s);
  EXPECT_EQ(log->lines, (std::vector<std::string>{"GET /hello 200 13", "GET /x 404 9",
                                                  "GET /files/empty/ " + std::to_string(r.status) +
                                                      " " + std::to_string(r.body.size())}));
  EXPECT_EQ(r.status, 404);
}

TEST(HttpServer, AccessLogHasOneLinePerRequestWithTheStatusSent) {
  LogLines log;
  StaticTree tree;
  std::filesystem::create_directories(tree.root / "empty");
  run_bounded(access_log_body(&log, tree.root.string()));
}

Coro<Response> thread_id(Request&) {
  co_return Response::text(std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id())));
}

Coro<void> workers_body() {
  ServerOptions opts = quiet();
  opts.workers = 2;
  Server server(std::move(opts));
  server.get("/tid", thread_id);
  co_await server.start("127.0.0.1", 0);
  std::set<std::string> threads;
  for (int i = 0; i < 64 && threads.size() < 2; ++i) {
    Reply r = co_await exchange(server.port(), "GET /tid HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_EQ(r.status, 200);
    threads.insert(r.body);
  }
  // The kernel hashes connections over the listeners: 64 tries all landing
  // on one is a 2^-63 event.
  EXPECT_EQ(threads.size(), 2u);
  co_await server.shutdown(1s);
}

TEST(HttpServer, WorkersServeFromSeveralThreads) { run_bounded(workers_body()); }

Coro<Response> tagged(Request&) {
  Response r = Response::text("tagged", 201, "application/vnd.corio.test+json; v=1");
  r.headers.add("X-Tag", "a value long enough to live on the heap, then in the spares");
  co_return r;
}

// Answers made and dropped one after another reuse their header storage
// (headers.hpp): each carries its own fields, none of the one before.
Coro<void> reuse_body() {
  Server server(quiet());
  server.get("/tagged", tagged);
  server.get("/hello", hello);
  server.post("/json", echo_json);
  co_await server.start("127.0.0.1", 0);
  RawClient c = co_await connect(server.port());
  c.writer.write("GET /tagged HTTP/1.1\r\nHost: x\r\n\r\n" + kGetHello);
  Reply first = co_await read_reply(c.reader);
  Reply second = co_await read_reply(c.reader);
  EXPECT_EQ(first.status, 201);
  EXPECT_EQ(first.headers.get("Content-Type"), "application/vnd.corio.test+json; v=1");
  EXPECT_EQ(first.headers.count("X-Tag"), 1u);
  EXPECT_EQ(second.status, 200);
  EXPECT_EQ(second.headers.get("Content-Type"), "text/plain; charset=utf-8");
  EXPECT_FALSE(second.headers.contains("X-Tag"));
  EXPECT_EQ(second.body, "Hello, World!");
  c.writer.write("POST /json HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}");
  Reply third = co_await read_reply(c.reader);
  EXPECT_EQ(third.status, 201);
  EXPECT_EQ(third.headers.get_all("Content-Type"), std::vector<std::string_view>{"application/json"});
  co_await close_then_shutdown(server, std::move(c));
}

TEST(HttpServer, AnswersCarryTheirOwnHeadersOnly) { run_bounded(reuse_body()); }

}  // namespace
}  // namespace corio_http_test
