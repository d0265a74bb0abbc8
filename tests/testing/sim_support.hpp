// What the simulation's tests share: a line echo server (and one that
// drips), a WebSocket echo server, and how a sweep's report is checked.
#pragma once

#include <cctype>
#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include <corio/testing/cancellation_sweep.hpp>

#include <corio/http.hpp>
#include <corio/server.hpp>
#include <corio/sleep.hpp>
#include <corio/streams.hpp>

namespace sim_support {

// A scenario's own check: a sweep reports the operation's (or after's)
// exception as a violation.
inline void require(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error(what);
}

// What a test's echo of upper case sends back.
inline std::string upper_cased(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

// An HTTP server's options without its access log (the sweeps run hundreds).
inline corio::http::ServerOptions quiet() {
  corio::http::ServerOptions options;
  options.access_log = nullptr;
  return options;
}

inline corio::Coro<void> echo_lines(corio::StreamReader r, corio::StreamWriter w) {
  for (;;) {
    std::string line = co_await r.readline();
    if (line.empty()) break;
    w.write(line);
    co_await w.drain();
  }
  w.close();
}

// Echoes lines on 0.0.0.0:port of its host until cancelled.
inline corio::Coro<void> echo_server(std::uint16_t port) {
  corio::Server server = co_await corio::start_server(echo_lines, "0.0.0.0", port);
  co_await server.serve_forever();
}

// Echoes each line a byte at a time, so that every read of the client's waits.
inline corio::Coro<void> drip_lines(corio::StreamReader r, corio::StreamWriter w) {
  for (std::string line = co_await r.readline(); !line.empty(); line = co_await r.readline()) {
    for (char c : line) {
      w.write(std::string(1, c));
      co_await w.drain();
      co_await corio::sleep(std::chrono::milliseconds(1));
    }
  }
  w.close();
}

inline corio::Coro<void> drip_server(std::uint16_t port) {
  corio::Server server = co_await corio::start_server(drip_lines, "0.0.0.0", port);
  co_await server.serve_forever();
}

// Echoes each WebSocket message 5 ms after it came (so that a client's
// receive() waits), on 0.0.0.0:8080/ws of its host until cancelled.
inline corio::Coro<corio::http::Response> ws_echo(corio::http::Request& req) {
  corio::http::WebSocket ws = co_await corio::http::WebSocketResponse::prepare(req);
  while (std::optional<corio::http::WsMessage> msg = co_await ws.receive()) {
    co_await corio::sleep(std::chrono::milliseconds(5));
    co_await ws.send(*msg);
  }
  co_return corio::http::Response{};
}

inline corio::Coro<void> ws_service() {
  corio::http::Server server(quiet());
  server.get("/ws", ws_echo);
  co_await server.start("0.0.0.0", 8080);
  co_await server.serve_forever();
}

// The sweep found nothing, over at least min_points suspension points; the
// count goes to the test's XML record ("points"), which is how the coverage
// in docs/simulation.md is counted.
inline void expect_clean(const corio::testing::SweepReport& report, int min_points) {
  ::testing::Test::RecordProperty("points", report.points);
  ::testing::Test::RecordProperty("woken_points", report.woken_points);
  EXPECT_GE(report.points, min_points);
  EXPECT_TRUE(report.ok()) << report.describe();
}

}  // namespace sim_support
