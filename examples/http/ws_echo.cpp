// A WebSocket echo server: text comes back as text, binary as binary, at
// /ws, with permessage-deflate when the client offers it. SIGINT or
// SIGTERM closes every WebSocket with 1001 (going away), then the server,
// and the program exits with 0.
//
// Two styles (docs/websocket.md): by default a route handler that loops
// on receive(), suspended between messages; with --handlers a handler set
// (Server::ws), run per message, with nothing suspended once idle
// (the server's shutdown says 1001 to those itself).
//
// Usage: example_ws_echo [--port P] [--handlers]   (port 8080 by default; 0 picks a free one)
//
// The first line on stdout is "listening on ws://127.0.0.1:PORT/ws".
//
//   python3 -m websockets ws://127.0.0.1:8080/ws
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <vector>

#include <corio/corio.hpp>
#include <corio/http.hpp>

using corio::Coro;
using namespace corio::http;

namespace {

// The open WebSockets, for the shutdown; one loop, so no lock.
using Open = std::set<WebSocket*>;

// Keeps ws in the set while its handler runs, however the handler ends.
struct Registered {
  Open& open;
  WebSocket* ws;
  Registered(Open& o, WebSocket* w) : open(o), ws(w) { open.insert(ws); }
  ~Registered() { open.erase(ws); }
};

Coro<Response> echo(Request& req, Open& open) {
  WebSocket ws = co_await WebSocketResponse::prepare(req);
  const Registered registered(open, &ws);
  while (std::optional<WsMessage> msg = co_await ws.receive()) co_await ws.send(*msg);
  co_return Response{};  // dropped: the connection was the WebSocket's
}

// The handler-set style: this runs per message.
Coro<void> echo_message(ServerWebSocket<> ws, WsMessage msg) { co_await ws.send(msg); }

Coro<void> close_all(Open& open) {
  std::vector<Coro<void>> closing;
  for (WebSocket* ws : open) closing.push_back(ws->close(ws_close::going_away, "server shutting down"));
  co_await corio::gather(std::move(closing));
}

Coro<int> serve(std::uint16_t port, bool handlers) {
  Open open;
  ServerOptions opts;
  opts.access_log = {};
  Server server(opts);
  if (handlers) {
    server.ws("/ws", {.message = echo_message});
  } else {
    server.get("/ws", [&open](Request& req) { return echo(req, open); });
  }
  co_await server.start("127.0.0.1", port);
  std::printf("listening on ws://127.0.0.1:%u/ws\n", static_cast<unsigned>(server.port()));
  std::fflush(stdout);

  corio::EventLoop& loop = corio::get_running_loop();
  corio::Event signalled;
  loop.add_signal_handler(SIGINT, [&signalled] { signalled.set(); });
  loop.add_signal_handler(SIGTERM, [&signalled] { signalled.set(); });
  co_await signalled.wait();
  loop.remove_signal_handler(SIGINT);
  loop.remove_signal_handler(SIGTERM);
  co_await close_all(open);
  co_await server.shutdown(std::chrono::seconds(5));
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
