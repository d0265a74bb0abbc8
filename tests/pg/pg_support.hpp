// What the pg tests share: the executable's PostgreSQL server, a connect
// helper, and a run with a real-time safety net (the tests talk to a real
// server, so virtual time cannot stand in; 60 s is far above any test).
#pragma once

#include <chrono>
#include <string>

#include <gtest/gtest.h>

#include <corio/run.hpp>
#include <corio/timeout.hpp>
#include <corio/pg.hpp>

#include "common/db_server.hpp"

namespace pg_testing {

using namespace std::chrono_literals;

inline std::string conninfo() { return corio_testing::shared_db_address("pg"); }

inline corio::Coro<corio::pg::Connection> connect() {
  return corio::pg::Connection::connect(conninfo());
}

template <class T>
T run_pg(corio::Coro<T> main) {
  return corio::run(corio::wait_for(std::move(main), 60s));
}

}  // namespace pg_testing
