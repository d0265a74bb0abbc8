#include <corio/redis/subscriber.hpp>

#include <utility>

#include <corio/errors.hpp>
#include <corio/timeout.hpp>

#include "redis/context.hpp"

namespace corio::redis {

Subscriber::Subscriber(std::unique_ptr<detail::Context> ctx) noexcept : ctx_(std::move(ctx)) {}
Subscriber::Subscriber(Subscriber&&) noexcept = default;
Subscriber& Subscriber::operator=(Subscriber&&) noexcept = default;
Subscriber::~Subscriber() = default;

Coro<Subscriber> Subscriber::connect(ClientOptions options) {
  Coro<std::unique_ptr<detail::Context>> connecting = detail::Context::connect(options);
  if (options.connect_timeout) {
    co_return Subscriber(co_await wait_for(std::move(connecting), *options.connect_timeout));
  }
  co_return Subscriber(co_await std::move(connecting));
}

Coro<void> Subscriber::send(std::string verb, std::vector<std::string> names) {
  if (!ctx_) throw ConnectionError("subscriber is closed (moved from)");
  std::vector<std::string> args{std::move(verb)};
  args.insert(args.end(), names.begin(), names.end());
  ctx_->subscribe(args);
  // One confirmation a channel, in order.
  try {
    for (std::size_t i = 0; i < names.size(); ++i) co_await ctx_->confirmations.get();
  } catch (const QueueShutDown&) {
    throw ConnectionError(ctx_->error);
  }
}

Coro<void> Subscriber::subscribe(std::vector<std::string> channels) {
  return send("SUBSCRIBE", std::move(channels));
}

Coro<void> Subscriber::psubscribe(std::vector<std::string> patterns) {
  return send("PSUBSCRIBE", std::move(patterns));
}

Coro<Message> Subscriber::next() {
  if (!ctx_) throw ConnectionError("subscriber is closed (moved from)");
  try {
    Message m = co_await ctx_->messages.get();
    ctx_->took(m);
    co_return m;
  } catch (const QueueShutDown&) {
    throw ConnectionError(ctx_->error.empty() ? "connection closed" : ctx_->error);
  }
}

}  // namespace corio::redis
