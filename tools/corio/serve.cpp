// `corio serve`: an HTTP server on corio::http: static files under --root,
// plus /hello ("Hello, World!") and /json ({"message": "Hello, World!"}),
// the endpoints the benchmarks load with wrk. SIGINT or SIGTERM shuts it
// down gracefully: in-flight requests finish (within 10 s), then it exits.
#include <cstdio>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <corio/corio.hpp>
#include <corio/http/server.hpp>

#include "commands.hpp"

namespace corio_cli {
namespace {

namespace http = corio::http;

struct ServeArgs {
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string root;
  int workers = 1;
  bool quiet = false;
};

corio::Coro<http::Response> hello(http::Request&) {
  co_return http::Response::text("Hello, World!");
}

corio::Coro<http::Response> json(http::Request&) {
  co_return http::Response::json(nlohmann::json{{"message", "Hello, World!"}});
}

corio::Coro<> serve(const ServeArgs* args) {
  http::ServerOptions opts;
  opts.workers = args->workers;
  if (args->quiet) opts.access_log = {};
  http::Server server(std::move(opts));
  server.get("/hello", hello);
  server.get("/json", json);
  if (!args->root.empty()) server.add_static("/", args->root);
  co_await server.start(args->host, static_cast<std::uint16_t>(args->port));
  // The first line names the port (useful with --port 0).
  fmt::print("listening on http://{}:{} ({} worker{})\n", args->host, server.port(),
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
        o.option("--workers", args.workers, "event loops, one thread each (default 1)", 1, 256);
        o.flag("--quiet", args.quiet, "no access log on stderr");
      },
      [] { return corio::run_main(serve(&args)); }};
}

}  // namespace corio_cli
