// corio::redis::Subscriber: pub/sub as an async sequence, on a connection of
// its own (a subscribed Redis connection takes no other commands).
//
//   redis::Subscriber sub = co_await redis::Subscriber::connect({.port = port});
//   co_await sub.subscribe({"news"});
//   for (;;) { redis::Message m = co_await sub.next(); ... }
//
// subscribe() returns once the server confirmed every channel, so a message
// published after it is never missed. next() suspends until a message
// arrives; it throws ConnectionError once the connection is gone and the
// messages queued before are taken.
//
// Back-pressure: at options.max_unread_bytes of messages next() has not
// taken, the subscriber stops reading its socket, and reads again once
// next() took it down to half; Redis keeps the rest, under its
// client-output-buffer-limit for pub/sub (past it, Redis disconnects us).
// A subscribe() while paused reads on until its confirmations, which follow
// what Redis held, so those messages are queued past the bound.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <corio/coro.hpp>
#include <corio/redis/client.hpp>

namespace corio::redis {

namespace detail {
struct Context;
}

class Subscriber {
 public:
  static Coro<Subscriber> connect(ClientOptions options);
  Subscriber(Subscriber&&) noexcept;
  Subscriber& operator=(Subscriber&&) noexcept;
  ~Subscriber();

  Coro<void> subscribe(std::vector<std::string> channels);
  Coro<void> psubscribe(std::vector<std::string> patterns);
  // Leave channels (patterns); return once the server confirmed each.
  // Messages published before are still delivered by next(). Empty: ValueError.
  Coro<void> unsubscribe(std::vector<std::string> channels);
  Coro<void> punsubscribe(std::vector<std::string> patterns);
  Coro<Message> next();

 private:
  explicit Subscriber(std::shared_ptr<detail::Context> ctx) noexcept;
  Coro<void> send(std::string verb, std::vector<std::string> names);
  std::shared_ptr<detail::Context> ctx_;
};

}  // namespace corio::redis
