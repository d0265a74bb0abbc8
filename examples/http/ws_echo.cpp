// A WebSocket echo server: text comes back as text, binary as binary, at
// /ws, with permessage-deflate when the client offers it. SIGINT or
// SIGTERM closes every WebSocket with 1001 (going away), then the server,
// and the program exits with 0.
//
// Two styles (docs/websocket.md): by default a route handler that loops
// on receive(), suspended between messages; with --handlers a handler set
// (Server::ws), run per message, with nothing suspended once idle. The
// server's shutdown says 1001 to both.
//
// Usage: example_ws_echo [--port P] [--handlers]   (port 8080 by default; 0 picks a free one)
//
// The first line on stdout is "listening on ws://127.0.0.1:PORT/ws".
//
//   python3 -m websockets ws://127.0.0.1:8080/ws
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <corio/corio.hpp>
#include <corio/http.hpp>

using corio::Coro;
using namespace corio::http;

namespace {

Coro<Response> echo(Request& req) {
  WebSocket ws = co_await WebSocketResponse::prepare(req);
  while (std::optional<WsMessage> msg = co_await ws.receive()) co_await ws.send(*msg);
  co_return Response{};  // dropped: the connection was the WebSocket's
}

// The handler-set style: this runs per message.
Coro<void> echo_message(ServerWebSocket<> ws, WsMessage msg) { co_await ws.send(msg); }

Coro<int> serve(std::uint16_t port, bool handlers) {
  ServerOptions opts;
  opts.access_log = {};
  Server server(opts);
  if (handlers) {
    server.ws("/ws", {.message = echo_message});
  } else {
    server.get("/ws", echo);
  }
  co_await server.start("127.0.0.1", port);
  std::printf("listening on ws://127.0.0.1:%u/ws\n", static_cast<unsigned>(server.port()));
  std::fflush(stdout);
  // The shutdown closes every WebSocket with 1001, a handler's too, and
  // waits for a silent peer ServerOptions::ws_shutdown_timeout (1 s).
  co_await run_until_signal(server, std::chrono::seconds(5));
  co_return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint16_t port = 8080;
  bool handlers = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--port") && i + 1 < argc) {
      port = static_cast<std::uint16_t>(std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--handlers")) {
      handlers = true;
    } else {
      std::fprintf(stderr, "usage: %s [--port P] [--handlers]\n", argv[0]);
      return 2;
    }
  }
  return corio::run_main(serve(port, handlers));
}
