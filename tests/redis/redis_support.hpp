// What the redis tests share: the executable's redis-server and a run with
// a real-time safety net (a real server: virtual time cannot stand in).
#pragma once

#include <chrono>
#include <string>

#include <gtest/gtest.h>

#include <corio/redis.hpp>
#include <corio/run.hpp>
#include <corio/timeout.hpp>

#include "common/db_server.hpp"

namespace redis_testing {

using namespace std::chrono_literals;

// "127.0.0.1:PORT" into options.
inline corio::redis::ClientOptions options_for(const std::string& address) {
  corio::redis::ClientOptions o;
  const auto colon = address.rfind(':');
  o.host = address.substr(0, colon);
  o.port = std::stoi(address.substr(colon + 1));
  return o;
}

inline corio::redis::ClientOptions options() {
  return options_for(corio_testing::shared_db_address("redis"));
}

template <class T>
T run_redis(corio::Coro<T> main) {
  return corio::run(corio::wait_for(std::move(main), 60s));
}

}  // namespace redis_testing
