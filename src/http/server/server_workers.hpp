// The extra loops of a Server with workers > 1: one thread each, running
// its own LoopServer on a reuse_port listener of the same port.
//
// Cross-thread rule: the only calls into a worker's loop are
// call_soon_threadsafe() posts, made under the worker's mutex while its
// loop pointer is set (the worker clears it before its loop closes).
#pragma once

#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <corio/coro.hpp>
#include <corio/event_loop.hpp>

#include "http/server/server_connection.hpp"

namespace corio::http::detail {

class Workers {
 public:
  Workers(std::shared_ptr<const ServerShared> shared, std::string host, std::uint16_t port,
          int count);
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;
  ~Workers();  // stop_now(), then joins

  // Until every worker listens; the first worker's error, if one failed.
  Coro<void> start();
  void stop_now();
  void begin_shutdown(std::chrono::milliseconds deadline);
  Coro<void> join();  // until every thread ended (waits on the thread pool)

  struct Worker {
    std::thread thread;
    std::mutex mutex;
    EventLoop* loop = nullptr;  // while the worker serves
    std::shared_ptr<LoopServer> server;
    std::promise<void> listening;
  };

 private:
  void post(std::function<void(LoopServer&)> fn);

  std::shared_ptr<const ServerShared> shared_;
  std::string host_;
  std::uint16_t port_;
  std::vector<std::unique_ptr<Worker>> workers_;
};

}  // namespace corio::http::detail
