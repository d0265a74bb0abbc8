// `corio serve`: an HTTP server on corio::http: static files under --root,
// plus /hello ("Hello, World!") and /json ({"message": "Hello, World!"}),
// the endpoints the benchmarks load with wrk; HTTPS with --tls-cert and
// --tls-key. HTTP/2 too (the library's default): h2c with prior knowledge,
// and h2 by ALPN over TLS; --no-http2 keeps to HTTP/1.1. SIGINT or SIGTERM shuts it
// down gracefully: in-flight requests finish (within 10 s), then it exits.
// Every timeout and limit of the server is an option, its default the
// library's.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <corio/corio.hpp>
#include <corio/http/server.hpp>

#include "commands.hpp"

namespace corio_cli {
namespace {

namespace http = corio::http;

// The server's timeouts, each an option in seconds whose default is the
// library's (ServerOptions), so that --help cannot drift from it.
struct Timeout {
  const char* flag;
  std::chrono::milliseconds http::ServerOptions::*field;
  const char* what;
};

constexpr Timeout kTimeouts[] = {
    {"--header-timeout", &http::ServerOptions::header_timeout,
     "from a request head's first byte to its end"},
    {"--idle-timeout", &http::ServerOptions::idle_timeout,
     "keep-alive: between two requests on a connection"},
    {"--body-timeout", &http::ServerOptions::body_timeout, "between two reads of a request body"},
    {"--send-timeout", &http::ServerOptions::send_timeout,
     "for each wait for the client to take what was sent"},
    {"--lingering-time", &http::ServerOptions::lingering_time,
     "after an error answer, reading and dropping what the client still sends"},
    {"--lingering-timeout", &http::ServerOptions::lingering_timeout, "the same, between two reads"},
    {"--min-send-rate-window", &http::ServerOptions::min_send_rate_window,
     "the waiting for the client --min-send-rate is measured over"},
};
constexpr std::size_t kTimeoutCount = std::size(kTimeouts);

double seconds(std::chrono::milliseconds ms) { return std::chrono::duration<double>(ms).count(); }

struct ServeArgs {
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string root;
  std::string tls_cert, tls_key;  // both or neither: HTTPS
  int workers = 1;
  bool quiet = false;
  bool no_http2 = false;
  std::array<double, kTimeoutCount> timeouts{};  // seconds, as kTimeouts
  // The options' values, as the parser fills ints (bytes and counts).
  int max_header_size = 0;
  int max_body = 0;
  int max_connections = 0;
  int min_send_rate = 0;
};

// A byte count or a count as an int option (what the parser fills), its
// default the library's; 2 GiB - 1 at most.
int as_option(std::uint64_t value) {
  return static_cast<int>(std::min<std::uint64_t>(value, std::numeric_limits<int>::max()));
}

void declare_limits(Options& o, ServeArgs& a) {
  const http::ServerOptions defaults;
  constexpr int kMax = std::numeric_limits<int>::max();
  a.max_header_size = as_option(defaults.limits.max_head_bytes);
  a.max_body = as_option(defaults.limits.max_body);
  a.max_connections = as_option(defaults.max_connections);
  a.min_send_rate = as_option(defaults.min_send_rate);
  o.option("--max-header-size", a.max_header_size,
           fmt::format("bytes of a request's line and header fields; over it: 431 (default {})",
                       a.max_header_size),
           1024, kMax);
  o.option("--max-body", a.max_body,
           fmt::format("bytes of a request body; over it: 413 (default {})", a.max_body), 0, kMax);
  o.option("--max-connections", a.max_connections,
           fmt::format("connections at once per worker; at the cap accepting pauses (default {}, "
                       "no cap)",
                       a.max_connections),
           0, kMax);
  o.option("--min-send-rate", a.min_send_rate,
           fmt::format("bytes/s a client must take a response at, measured over "
                       "--min-send-rate-window, or it is closed (default {}, off)",
                       a.min_send_rate),
           0, kMax);
}

void declare_timeouts(Options& o, ServeArgs& a) {
  const http::ServerOptions defaults;
  for (std::size_t i = 0; i < kTimeoutCount; ++i) {
    const Timeout& t = kTimeouts[i];
    a.timeouts[i] = seconds(defaults.*t.field);
    o.option(t.flag, a.timeouts[i],
             fmt::format("{}, in seconds (default {})", t.what, a.timeouts[i]), 0.001, 86400.0);
  }
}

http::ServerOptions server_options(const ServeArgs& a) {
  http::ServerOptions opts;
  for (std::size_t i = 0; i < kTimeoutCount; ++i) {
    opts.*kTimeouts[i].field = std::chrono::milliseconds(std::llround(a.timeouts[i] * 1000));
  }
  opts.limits.max_head_bytes = static_cast<std::size_t>(a.max_header_size);
  opts.limits.max_body = static_cast<std::uint64_t>(a.max_body);
  opts.max_connections = static_cast<std::size_t>(a.max_connections);
  opts.min_send_rate = static_cast<std::uint64_t>(a.min_send_rate);
  opts.workers = a.workers;
  if (a.quiet) opts.access_log = {};
  opts.http2 = !a.no_http2;
  if (!a.tls_cert.empty()) opts.ssl = corio::SslContext::server(a.tls_cert, a.tls_key);
  return opts;
}

corio::Coro<http::Response> hello(http::Request&) {
  co_return http::Response::text("Hello, World!");
}

corio::Coro<http::Response> json(http::Request&) {
  co_return http::Response::json(nlohmann::json{{"message", "Hello, World!"}});
}

corio::Coro<> serve(const ServeArgs* args) {
  http::Server server(server_options(*args));
  server.get("/hello", hello);
  server.get("/json", json);
  if (!args->root.empty()) server.add_static("/", args->root);
  co_await server.start(args->host, static_cast<std::uint16_t>(args->port));
  // The first line names the port (useful with --port 0).
  fmt::print("listening on {}://{}:{} ({} worker{})\n", args->tls_cert.empty() ? "http" : "https",
             args->host, server.port(),
             args->workers, args->workers == 1 ? "" : "s");
  std::fflush(stdout);
  co_await http::run_until_signal(server);
  fmt::print("shut down\n");
}

}  // namespace

Command serve_command() {
  static ServeArgs args;
  return Command{
      "serve",
      "HTTP server: static files under --root, /hello and /json",
      "corio serve --root ./public --port 8080",
      [](Options& o) {
        o.option("--host", args.host, "address to listen on (default 127.0.0.1)");
        o.option("--port", args.port, "port (0: any free port; default 8080)", 0, 65535);
        o.option("--root", args.root, "directory to serve files from (default: none)");
        o.option("--tls-cert", args.tls_cert, "HTTPS: certificate chain (PEM), with --tls-key");
        o.option("--tls-key", args.tls_key, "HTTPS: the certificate's private key (PEM)");
        o.option("--workers", args.workers, "event loops, one thread each (default 1)", 1, 256);
        o.flag("--quiet", args.quiet, "no access log on stderr");
        o.flag("--no-http2", args.no_http2,
               "HTTP/1.1 only (default: h2c with prior knowledge on TCP, h2 by ALPN with --tls-cert)");
        declare_timeouts(o, args);
        declare_limits(o, args);
      },
      [] {
        if (args.tls_cert.empty() != args.tls_key.empty()) {
          fmt::print(stderr, "corio serve: --tls-cert and --tls-key go together\n");
          return 2;
        }
        return corio::run_main(serve(&args));
      }};
}

}  // namespace corio_cli
