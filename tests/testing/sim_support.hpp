// What the simulation's tests share: a line echo server, and how a sweep's
// report is checked.
#pragma once

#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include <corio/testing/cancellation_sweep.hpp>

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
