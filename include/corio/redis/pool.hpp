// corio::redis::Pool: a few Clients shared by many tasks. One Client
// already pipelines concurrent commands; a pool spreads them over `size`
// connections (Redis runs each connection's commands in order, so one slow
// command, a big MGET or a blocking BLPOP, holds up only its own).
//
//   redis::Pool pool = co_await redis::Pool::create({.port = port}, 4);
//   co_await pool.get().command("INCR", "hits");
//
// get() picks the client with the fewest commands in flight; each
// reconnects on its own.
#pragma once

#include <cstddef>
#include <vector>

#include <corio/coro.hpp>
#include <corio/redis/client.hpp>

namespace corio::redis {

class Pool {
 public:
  static Coro<Pool> create(ClientOptions options, std::size_t size);
  Client& get() noexcept;
  std::size_t size() const noexcept { return clients_.size(); }

 private:
  explicit Pool(std::vector<Client> clients) noexcept : clients_(std::move(clients)) {}
  std::vector<Client> clients_;
};

}  // namespace corio::redis
