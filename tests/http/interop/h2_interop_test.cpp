// HTTP/2 with other implementations: curl (h2c with prior knowledge, h2
// over TLS by ALPN), nghttp (many streams on one connection) and python3-h2
// (peers/h2_client.py: protocol checks a friendly client does not make).
// Part of the interop suite (corio_http_interop_tests, label interop).
#include <corio/http/server.hpp>

#include "http/client_support.hpp"
#include "http/server_support.hpp"
#include "net/tls_support.hpp"

namespace corio_http_test {
namespace {

std::string url(std::uint16_t port, std::string_view path, std::string_view scheme = "http") {
  return std::string(scheme) + "://" + (scheme == "https" ? "localhost" : "127.0.0.1") + ":" +
         std::to_string(port) + std::string(path);
}

// A child's stdout, once it exited; its exit status is checked.
Coro<std::string> output_of(std::string program, std::vector<std::string> args) {
  corio::SubprocessOptions opts;
  opts.out = corio::Redirect::pipe;
  opts.err = corio::Redirect::devnull;
  corio::Process p = co_await corio::create_subprocess_exec(program, args, opts);
  const std::pair<std::string, std::string> out = co_await p.communicate();
  EXPECT_EQ(co_await p.wait(), 0) << program;
  co_return out.first;
}

Coro<Response> hello(Request& req) {
  co_return Response::text("Hello, World! " + std::to_string(req.version().major));
}

Coro<Response> echo(Request& req) { co_return Response::text(co_await req.read()); }

std::string sample(std::size_t n) {
  std::string s;
  for (std::size_t i = 0; s.size() < n; ++i) s += std::to_string(i * 2654435761u % 1000003) + ",";
  s.resize(n);
  return s;
}

// curl's arguments for h2 (or HTTP/1.1) to a server on `port`, then `more`.
template <class... More>
std::vector<std::string> curl_args(std::uint16_t port, bool tls, bool h2, const More&... more) {
  std::vector<std::string> args = {"-s", "--resolve",
                                   "localhost:" + std::to_string(port) + ":127.0.0.1"};
  if (!h2) {
    args.push_back("--http1.1");
  } else {
    args.push_back(tls ? "--http2" : "--http2-prior-knowledge");
  }
  if (tls) {
    args.push_back("--cacert");
    args.push_back(corio_net_test::pki().ca_cert);
  }
  (args.emplace_back(more), ...);
  return args;
}

Coro<void> curl_body(const TempDir* dir, bool tls) {
  const std::string body = sample(300'000);
  const std::string file = (dir->path() / "body.txt").string();
  write_file(file, body);
  ServerOptions opts = quiet();
  if (tls) opts.ssl = corio_net_test::test_server();
  Server server(opts);
  server.get("/hello", hello);
  server.post("/echo", echo);
  server.add_static("/files", dir->path().string());
  co_await server.start("127.0.0.1", 0);
  const std::uint16_t port = server.port();
  const std::string scheme = tls ? "https" : "http";
  const std::string version_format = " %{http_version}";
  EXPECT_EQ(co_await output_of("curl", curl_args(port, tls, true, "-w", version_format, url(port, "/hello", scheme))),
            "Hello, World! 2 2");
  EXPECT_EQ(co_await output_of("curl", curl_args(port, tls, true, "--data-binary", "@" + file, url(port, "/echo", scheme))),
            body);
  EXPECT_EQ(co_await output_of("curl", curl_args(port, tls, true, url(port, "/files/body.txt", scheme))),
            body);
  const std::string range = "10-19";
  EXPECT_EQ(co_await output_of("curl", curl_args(port, tls, true, "-r", range, url(port, "/files/body.txt", scheme))),
            body.substr(10, 10));
  // HTTP/1.1 still, on the same server.
  EXPECT_EQ(co_await output_of("curl", curl_args(port, tls, false, url(port, "/hello", scheme))),
            "Hello, World! 1");
  co_await server.shutdown(1s);
}

TEST(H2Interop, CurlWithPriorKnowledge) {
  TempDir dir;
  run_bounded(curl_body(&dir, false), 60s);
}

TEST(H2Interop, CurlOverTlsByAlpn) {
  TempDir dir;
  run_bounded(curl_body(&dir, true), 60s);
}

// Every handler waits at a barrier that opens only when all kStreams
// requests are in flight at once: one connection carries them together.
constexpr std::size_t kStreams = 50;

Coro<Response> together(corio::Barrier* barrier, Request& req) {
  co_await barrier->wait();
  co_return Response::text(std::to_string(req.version().major) + "\n");
}

Coro<void> nghttp_body() {
  corio::Barrier barrier(kStreams);
  Server server(quiet());
  server.get("/together", [&barrier](Request& req) { return together(&barrier, req); });
  co_await server.start("127.0.0.1", 0);
  std::vector<std::string> args = {"-m", std::to_string(kStreams), url(server.port(), "/together")};
  const std::string out = co_await output_of("nghttp", std::move(args));
  std::string expected;
  for (std::size_t i = 0; i < kStreams; ++i) expected += "2\n";
  EXPECT_EQ(out, expected);
  co_await server.shutdown(1s);
}

TEST(H2Interop, NghttpManyStreamsOnOneConnection) { run_bounded(nghttp_body(), 60s); }

// The python3-h2 peer: its lines, read as they come.
struct H2Peer {
  corio::Process process;
  static Coro<H2Peer> start(std::uint16_t port, std::string scenario) {
    corio::SubprocessOptions opts;
    opts.out = corio::Redirect::pipe;
    opts.err = corio::Redirect::devnull;
    std::vector<std::string> args;
    args.push_back("-u");
    args.push_back((peers_dir() / "h2_client.py").string());
    args.push_back(std::to_string(port));
    args.push_back(std::move(scenario));
    // Named first: g++ 12 destroys an aggregate's temporary inside a co_await twice.
    corio::Process process = co_await corio::create_subprocess_exec(python(), std::move(args), opts);
    co_return H2Peer{std::move(process)};
  }
  Coro<std::string> line() {
    std::string l = co_await process.out.readline();
    if (!l.empty() && l.back() == '\n') l.pop_back();
    co_return l;
  }
};

Coro<void> bad_preface_body() {
  Server server(quiet());
  server.get("/hello", hello);
  co_await server.start("127.0.0.1", 0);
  H2Peer peer = co_await H2Peer::start(server.port(), "bad-preface");
  EXPECT_EQ(co_await peer.line(), "closed");
  EXPECT_EQ(co_await peer.process.wait(), 0);
  // The server goes on serving.
  EXPECT_EQ(co_await output_of("curl", curl_args(server.port(), false, true, url(server.port(), "/hello"))),
            "Hello, World! 2");
  co_await server.shutdown(1s);
}

TEST(H2Interop, BadPrefaceClosesThatConnectionOnly) { run_bounded(bad_preface_body(), 60s); }

// The body's read fails in the handler when the peer resets the stream;
// the connection's other streams go on.
Coro<Response> sink(std::string* seen, Request& req) {
  try {
    co_await req.read();
    *seen = "read the whole body";
  } catch (const std::system_error&) {
    *seen = "reset";
  }
  co_return Response::text("unseen");
}

Coro<void> reset_body() {
  std::string seen;
  Server server(quiet());
  server.get("/hello", hello);
  server.post("/sink", [&seen](Request& req) { return sink(&seen, req); });
  co_await server.start("127.0.0.1", 0);
  H2Peer peer = co_await H2Peer::start(server.port(), "reset-mid-body");
  EXPECT_EQ(co_await peer.line(), "GET 200");
  EXPECT_EQ(co_await peer.process.wait(), 0);
  co_await server.shutdown(1s);
  EXPECT_EQ(seen, "reset");
}

TEST(H2Interop, StreamResetMidBody) { run_bounded(reset_body(), 60s); }

// A producer far ahead of a peer whose window stays shut: it suspends in
// its write with no more than the stream's buffer (64 KiB) and one piece
// accepted, rather than run through its 8 MiB.
constexpr std::size_t kPiece = 16 * 1024;

struct Flood {
  std::uint64_t accepted = 0;  // bytes whose write() returned
  bool finished = false;
};

Coro<void> flood_body(Flood* flood, corio::http::StreamResponseWriter& w) {
  const std::string piece(kPiece, 'x');
  for (int i = 0; i < 512; ++i) {
    co_await w.write(piece);
    flood->accepted += piece.size();
  }
  flood->finished = true;
}

Coro<Response> flood_answer(Flood* flood) {
  co_return Response::stream(
      [flood](corio::http::StreamResponseWriter& w) { return flood_body(flood, w); });
}

Coro<void> closed_window_body() {
  Flood flood;
  Server server(quiet());
  server.get("/flood", [&flood](Request&) { return flood_answer(&flood); });
  co_await server.start("127.0.0.1", 0);
  H2Peer peer = co_await H2Peer::start(server.port(), "closed-window");
  EXPECT_EQ(co_await peer.line(), "headers 200");
  EXPECT_EQ(co_await peer.line(), "ready");
  // The head went out after the producer's first run: it has suspended.
  EXPECT_FALSE(flood.finished);
  EXPECT_LE(flood.accepted, 64 * 1024 + kPiece);
  server.close();
  EXPECT_EQ(co_await peer.line(), "closed");
  EXPECT_EQ(co_await peer.process.wait(), 0);
}

TEST(H2Interop, ClosedWindowSuspendsTheProducer) { run_bounded(closed_window_body(), 60s); }

// shutdown() sends GOAWAY (NO_ERROR) at once, and the stream in flight
// still finishes before the connection closes.
Coro<void> slow_body(corio::Event* release, corio::http::StreamResponseWriter& w) {
  co_await release->wait();
  co_await w.write("done");
}

Coro<Response> slow_answer(corio::Event* release) {
  co_return Response::stream(
      [release](corio::http::StreamResponseWriter& w) { return slow_body(release, w); });
}

Coro<void> goaway_body() {
  corio::Event release;
  Server server(quiet());
  server.get("/slow", [&release](Request&) { return slow_answer(&release); });
  co_await server.start("127.0.0.1", 0);
  H2Peer peer = co_await H2Peer::start(server.port(), "goaway");
  EXPECT_EQ(co_await peer.line(), "ready");
  corio::Task<void> shutdown = corio::create_task(server.shutdown(10s));
  EXPECT_EQ(co_await peer.line(), "goaway 0");
  release.set();
  EXPECT_EQ(co_await peer.line(), "body done");
  EXPECT_EQ(co_await peer.line(), "closed");
  co_await shutdown;
  EXPECT_EQ(co_await peer.process.wait(), 0);
}

TEST(H2Interop, GoawayOnShutdownLetsTheStreamInFlightFinish) { run_bounded(goaway_body(), 60s); }

}  // namespace
}  // namespace corio_http_test
