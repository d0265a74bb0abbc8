// What the simulation's tests share: a line echo server.
#pragma once

#include <cstdint>
#include <string>

#include <corio/server.hpp>
#include <corio/streams.hpp>

namespace sim_support {

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

}  // namespace sim_support
