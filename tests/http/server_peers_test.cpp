// The server driven by real clients, started by the tests on loopback:
// curl (keep-alive, chunked upload, 100-continue, HTTP/1.0), Python's
// http.client, and wrk for a bounded 10-second load with zero errors.
//
// Each peer runs as a subprocess of the test, on the loop that serves it,
// with a time bound; a peer that is not installed skips its test
// (scripts/setup installs them all).
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "common/programs.hpp"
#include "http/server_support.hpp"

namespace corio_http_test {
namespace {

using corio_testing::Ran;
using corio_testing::run_program;

Coro<Response> json_hello(Request&) {
  co_return Response::json(nlohmann::json{{"message", "Hello, World!"}});
}

Coro<Response> count(Request& req) {
  std::size_t bytes = 0;
  for (;;) {
    const std::string piece = co_await req.read_chunk();
    if (piece.empty()) break;
    bytes += piece.size();
  }
  const std::string framing = req.headers().contains("Transfer-Encoding") ? "chunked" : "length";
  co_return Response::text(std::to_string(bytes) + " " + framing);
}

Coro<Response> echo_json(Request& req) {
  nlohmann::json body = co_await req.json();
  co_return Response::json(nlohmann::json{{"got", body}}, 201);
}

Coro<void> start(Server& server) {
  server.get("/hello", hello);
  server.get("/json", json_hello);
  server.post("/count", count);
  server.post("/echo", echo_json);
  co_await server.start("127.0.0.1", 0);
}

std::string url(const Server& server, const char* path) {
  return "http://127.0.0.1:" + std::to_string(server.port()) + path;
}

// A file of n bytes, removed with the object.
struct TempFile {
  std::string path;
  explicit TempFile(std::size_t n)
      : path("/tmp/corio-http-upload-" + std::to_string(::getpid())) {
    std::ofstream(path, std::ios::binary) << std::string(n, 'u');
  }
  ~TempFile() { std::filesystem::remove(path); }
};

Coro<void> curl_keep_alive_body() {
  Server server(quiet());
  co_await start(server);
  const std::vector<std::string> args = {"-sS", "-v", url(server, "/hello"), url(server, "/json")};
  Ran r = co_await run_program("curl", args);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, R"(Hello, World!{"message":"Hello, World!"})");
  EXPECT_NE(r.err.find("Re-using existing connection"), std::string::npos) << r.err;
  co_await server.shutdown(1s);
}

TEST(HttpServerPeers, CurlKeepsTheConnectionForTwoUrls) {
  REQUIRE_PROGRAM("curl");
  run_bounded(curl_keep_alive_body(), 60s);
}

Coro<void> curl_upload_body(const TempFile* file) {
  Server server(quiet());
  co_await start(server);
  const std::string data = "@" + file->path;
  const std::vector<std::string> chunked = {"-sS", "-H", "Transfer-Encoding: chunked",
                                            "--data-binary", data, url(server, "/count")};
  Ran r = co_await run_program("curl", chunked);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "300000 chunked");

  const std::vector<std::string> expect = {"-sS", "-v", "-H", "Expect: 100-continue",
                                           "--data-binary", data, url(server, "/count")};
  r = co_await run_program("curl", expect);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "300000 length");
  EXPECT_NE(r.err.find("HTTP/1.1 100 Continue"), std::string::npos) << r.err;
  co_await server.shutdown(1s);
}

TEST(HttpServerPeers, CurlChunkedUploadAndExpectContinue) {
  REQUIRE_PROGRAM("curl");
  TempFile file(300000);
  run_bounded(curl_upload_body(&file), 60s);
}

Coro<void> curl_http10_body() {
  Server server(quiet());
  co_await start(server);
  const std::vector<std::string> args = {"-sS", "-i", "--http1.0", url(server, "/hello")};
  Ran r = co_await run_program("curl", args);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Connection: close\r\n"), std::string::npos) << r.out;
  EXPECT_TRUE(r.out.ends_with("\r\n\r\nHello, World!")) << r.out;
  co_await server.shutdown(1s);
}

TEST(HttpServerPeers, CurlHttp10) {
  REQUIRE_PROGRAM("curl");
  run_bounded(curl_http10_body(), 60s);
}

constexpr const char* kPythonClient = R"(
import http.client, json, sys
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=10)
for method, path, body in [("GET", "/hello", None), ("POST", "/echo", json.dumps({"a": 1})),
                           ("GET", "/missing", None), ("GET", "/json", None)]:
    c.request(method, path, body=body, headers={"Content-Type": "application/json"} if body else {})
    r = c.getresponse()
    print(r.status, r.read().decode())
print("reused" if c.sock is not None else "closed")
)";

Coro<void> python_body() {
  Server server(quiet());
  co_await start(server);
  const std::vector<std::string> args = {"-c", kPythonClient, std::to_string(server.port())};
  Ran r = co_await run_program("python3", args);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "200 Hello, World!\n201 {\"got\":{\"a\":1}}\n404 Not Found\n"
            "200 {\"message\":\"Hello, World!\"}\nreused\n");
  co_await server.shutdown(1s);
}

TEST(HttpServerPeers, PythonHttpClient) {
  REQUIRE_PROGRAM("python3");
  run_bounded(python_body(), 60s);
}

// A throwaway certificate for 127.0.0.1, made with the openssl tool.
struct TlsFiles {
  std::string dir = "/tmp/corio-http-tls-" + std::to_string(::getpid());
  std::string cert = dir + "/cert.pem", key = dir + "/key.pem";
  TlsFiles() { std::filesystem::create_directories(dir); }
  ~TlsFiles() { std::filesystem::remove_all(dir); }
};

Coro<bool> make_certificate(const TlsFiles* tls) {
  const std::vector<std::string> req = {"req", "-x509", "-newkey", "rsa:2048", "-nodes",
                                        "-keyout", tls->key, "-out", tls->cert, "-days", "1",
                                        "-subj", "/CN=127.0.0.1"};
  Ran made = co_await run_program("openssl", req);
  co_return made.code == 0;
}

Coro<void> tls_body(const TlsFiles* tls, const TempFile* file) {
  CO_ASSERT(co_await make_certificate(tls));
  ServerOptions opts = quiet();
  opts.ssl = corio::SslContext::server(tls->cert, tls->key);
  Server server(std::move(opts));
  server.add_static("/files", std::filesystem::path(file->path).parent_path().string());
  co_await start(server);
  const std::string base = "https://127.0.0.1:" + std::to_string(server.port());
  const std::string name = std::filesystem::path(file->path).filename().string();
  // A file over TLS cannot be sendfile'd: it goes through the read+write path.
  const std::vector<std::string> args = {
      "-sS", "--cacert", tls->cert, "-w", "%{http_code} %{size_download}\n", "-o", "/dev/null",
      "-o", "/dev/null", base + "/hello", base + "/files/" + name};
  Ran r = co_await run_program("curl", args);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "200 13\n200 300000\n") << r.err;
  // A range over TLS: the read+write path from an offset.
  const std::string file_url = base + "/files/" + name;
  const std::vector<std::string> range = {
      "-sS", "--cacert",  tls->cert, "-r", "1000-250999", "-w", "%{http_code} %{size_download}",
      "-o",  "/dev/null", file_url};
  r = co_await run_program("curl", range);
  EXPECT_EQ(r.out, "206 250000") << r.err;
  co_await server.shutdown(1s);
}

TEST(HttpServerPeers, CurlOverTls) {
  REQUIRE_PROGRAM("curl");
  REQUIRE_PROGRAM("openssl");
  TlsFiles tls;
  TempFile file(300000);
  run_bounded(tls_body(&tls, &file), 60s);
}

// A client that connects and never starts its TLS handshake is closed at
// tls_handshake_timeout (it was a fixed 60 s).
Coro<void> tls_handshake_timeout_body(const TlsFiles* tls) {
  CO_ASSERT(co_await make_certificate(tls));
  ServerOptions opts = quiet();
  opts.ssl = corio::SslContext::server(tls->cert, tls->key);
  opts.tls_handshake_timeout = 200ms;
  Server server(std::move(opts));
  co_await start(server);
  RawClient silent = co_await connect(server.port());  // plain TCP, silent
  const double took = co_await seconds_until_closed(silent.reader);
  EXPECT_GE(took, 0.0) << "closed";
  EXPECT_LT(took, 5.0);
  co_await server.shutdown(1s);
}

TEST(HttpServerPeers, TlsHandshakeTimeoutIsAnOption) {
  REQUIRE_PROGRAM("openssl");
  TlsFiles tls;
  run_bounded(tls_handshake_timeout_body(&tls), 30s);
}

Coro<void> wrk_body() {
  Server server(quiet());
  co_await start(server);
  const std::vector<std::string> args = {"-t1", "-c100", "-d10s", url(server, "/hello")};
  Ran r = co_await run_program("wrk", args, 40s);
  EXPECT_EQ(r.code, 0) << r.err;
  // "  516340 requests in 10.06s, 71.4MB read"
  const std::size_t at = r.out.find(" requests in ");
  CO_ASSERT(at != std::string::npos);
  const std::size_t start = r.out.find_last_of(" \n", at - 1) + 1;
  EXPECT_GT(std::stoll(r.out.substr(start, at - start)), 1000) << r.out;
  EXPECT_EQ(r.out.find("Socket errors"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("Non-2xx"), std::string::npos) << r.out;
  co_await server.shutdown(1s);
}

TEST(HttpServerPeers, WrkLoadWithoutErrors) {
  REQUIRE_PROGRAM("wrk");
  run_bounded(wrk_body(), 90s);
}

}  // namespace
}  // namespace corio_http_test
