#include <corio/redis/pool.hpp>

#include <corio/errors.hpp>

namespace corio::redis {

Coro<Pool> Pool::create(ClientOptions options, std::size_t size) {
  if (size == 0) throw ValueError("a redis pool needs at least one connection");
  std::vector<Client> clients;
  clients.reserve(size);
  for (std::size_t i = 0; i < size; ++i) clients.push_back(co_await Client::connect(options));
  co_return Pool(std::move(clients));
}

Client& Pool::get() noexcept {
  Client* best = &clients_.front();
  for (Client& c : clients_) {
    if (c.in_flight() < best->in_flight()) best = &c;
  }
  return *best;
}

}  // namespace corio::redis
