// Helpers shared by the handler-set tests (ws_handlers_test.cpp,
// ws_handlers_hot_test.cpp): an echo route whose callbacks record into a Log,
// and the count of the loop's tasks (a parked connection has none).
#pragma once

#include <set>

#include "http/ws_support.hpp"
#include <corio/http/ws_handlers.hpp>

namespace corio_ws_test {

using corio::http::ServerWebSocket;
using corio::http::WsHandlers;

// What the server's callbacks saw.
struct Log {
  std::vector<std::string> messages;
  std::vector<std::pair<int, std::string>> closes;
  std::set<ServerWebSocket<>> open;  // the broadcast list
  corio::Event closed;
  corio::Event gate;  // slow(): each message waits for it
  std::size_t bytes = 0;
};

inline Coro<void> echo(ServerWebSocket<> ws, WsMessage msg, Log& log) {
  log.messages.push_back(msg.data);
  if (msg.data == "quit") {
    ws.close(4001, "asked to");
    co_return;
  }
  if (msg.data == "throw") throw std::runtime_error("the handler failed");
  co_await ws.send(msg);
}

inline Coro<void> remember(ServerWebSocket<> ws, Request&, Log& log) {
  log.open.insert(ws);
  co_return;
}

inline void forget(ServerWebSocket<> ws, int code, std::string_view reason, Log& log) {
  log.open.erase(ws);
  log.closes.emplace_back(code, std::string(reason));
  log.closed.set();
}

// Echo at /ws, with every callback recording into log.
inline WsHandlers<> echo_handlers(Log& log, WsOptions opts = {}) {
  WsHandlers<> h;
  h.open = [&log](ServerWebSocket<> ws, Request& req) { return remember(std::move(ws), req, log); };
  h.message = [&log](ServerWebSocket<> ws, WsMessage m) { return echo(std::move(ws), std::move(m), log); };
  h.close = [&log](ServerWebSocket<> ws, int code, std::string_view why) { forget(std::move(ws), code, why, log); };
  h.options = std::move(opts);
  return h;
}

// log's echo at /ws on a free port.
inline Coro<void> serve_echo(Server& server, Log& log, WsOptions opts = {}) {
  server.ws("/ws", echo_handlers(log, std::move(opts)));
  co_await server.start("127.0.0.1", 0);
}

// Ten-second heartbeats, in virtual time.
inline WsOptions heartbeat_10s() {
  WsOptions opts;
  opts.heartbeat = 10s;
  return opts;
}

inline std::size_t tasks_alive() { return corio::get_running_loop().stats().tasks_alive; }

// Until at most n tasks are alive; false after 5 s.
inline Coro<bool> tasks_down_to(std::size_t n) {
  for (int i = 0; i < 500 && tasks_alive() > n; ++i) co_await corio::sleep(10ms);
  co_return tasks_alive() <= n;
}

}  // namespace corio_ws_test
