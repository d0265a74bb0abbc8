// `corio echo-server`: a TCP echo server on corio's streams (the benchmarks'
// corio peer, bench/run --suite echo). Every byte received is sent back;
// Ctrl-C stops it (run() turns SIGINT into cancellation).
#include <fmt/core.h>

#include <corio/corio.hpp>
#include <corio/streams.hpp>

#include "commands.hpp"

namespace corio_cli {
namespace {

struct EchoServerArgs {
  std::string host = "127.0.0.1";
  int port = 8888;
  std::string cert, key;  // both given: TLS (the idle-memory measurement's TLS server)
};

// A peer that resets its connection ends only that connection, and the
// server takes that for the ordinary end it is (server.hpp): nothing to
// catch here.
corio::Coro<> echo(corio::StreamReader reader, corio::StreamWriter writer) {
  for (;;) {
    std::string data = co_await reader.read(65536);
    if (data.empty()) break;
    writer.write(data);
    co_await writer.drain();
  }
  writer.close();
  co_await writer.wait_closed();
}

corio::Coro<> serve(const EchoServerArgs* args) {
  corio::ClientConnected handler = echo;  // named: see streams.hpp on g++ 12
  corio::ServerOptions opts;
  if (!args->cert.empty() || !args->key.empty()) opts.ssl = corio::SslContext::server(args->cert, args->key);
  corio::Server server =
      co_await corio::start_server(handler, args->host, static_cast<std::uint16_t>(args->port), opts);
  // The first line names the port (useful with --port 0).
  fmt::print("listening on {}\n", server.sockets().front().to_string());
  std::fflush(stdout);
  co_await server.serve_forever();
}

}  // namespace

Command echo_server_command() {
  static EchoServerArgs args;
  return Command{
      "echo-server",
      "TCP echo server on corio streams (the benchmarks' corio peer)",
      "corio echo-server --port 9000",
      [](Options& o) {
        o.option("--host", args.host, "address to listen on (default 127.0.0.1)");
        o.option("--port", args.port, "port (0: any free port; default 8888)", 0, 65535);
        o.option("--cert", args.cert, "TLS: certificate chain (PEM); with --key");
        o.option("--key", args.key, "TLS: private key (PEM); with --cert");
      },
      [] { return corio::run_main(serve(&args)); }};  // Ctrl-C: 130
}

}  // namespace corio_cli
