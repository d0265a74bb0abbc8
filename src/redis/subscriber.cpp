#include <corio/redis/subscriber.hpp>

#include <utility>

#include <corio/errors.hpp>
#include <corio/timeout.hpp>

#include "redis/context.hpp"

namespace corio::redis {

Subscriber::Subscriber(std::shared_ptr<detail::Context> ctx) noexcept : ctx_(std::move(ctx)) {}
Subscriber::Subscriber(Subscriber&&) noexcept = default;

Subscriber& Subscriber::operator=(Subscriber&& other) noexcept {
  if (this != &other) {
    if (ctx_) ctx_->close("subscriber is closed");
    ctx_ = std::move(other.ctx_);
  }
  return *this;
}

Subscriber::~Subscriber() {
  if (ctx_) ctx_->close("subscriber is closed");
}

Coro<Subscriber> Subscriber::connect(ClientOptions options) {
  Coro<std::shared_ptr<detail::Context>> connecting = detail::Context::connect(options, true);
  if (options.connect_timeout) {
    co_return Subscriber(co_await wait_for(std::move(connecting), *options.connect_timeout));
  }
  co_return Subscriber(co_await std::move(connecting));
}

Coro<void> Subscriber::send(std::string verb, std::vector<std::string> names) {
  if (!ctx_) throw ConnectionError("subscriber is closed (moved from)");
  std::vector<std::string> args{std::move(verb)};
  args.insert(args.end(), names.begin(), names.end());
  // Cancelled after the write, the command still counts its confirmations
  // off as they come (Context::answer): the next one waits for its own.
  Future<Reply> confirmed = ctx_->subscribe(args);
  co_await confirmed;
}

Coro<void> Subscriber::subscribe(std::vector<std::string> channels) {
  return send("SUBSCRIBE", std::move(channels));
}

Coro<void> Subscriber::psubscribe(std::vector<std::string> patterns) {
  return send("PSUBSCRIBE", std::move(patterns));
}

Coro<void> Subscriber::unsubscribe(std::vector<std::string> channels) {
  if (channels.empty()) throw ValueError("unsubscribe() needs the channels to leave");
  return send("UNSUBSCRIBE", std::move(channels));
}

Coro<void> Subscriber::punsubscribe(std::vector<std::string> patterns) {
  if (patterns.empty()) throw ValueError("punsubscribe() needs the patterns to leave");
  return send("PUNSUBSCRIBE", std::move(patterns));
}

Coro<Message> Subscriber::next() {
  if (!ctx_) throw ConnectionError("subscriber is closed (moved from)");
  try {
    Message m = co_await ctx_->pubsub->messages.get();
    ctx_->took(m);
    co_return m;
  } catch (const QueueShutDown&) {
    throw ConnectionError(ctx_->error.empty() ? "connection closed" : ctx_->error);
  }
}

}  // namespace corio::redis
