// redis::Client: a Context plus what users expect around it, reconnection
// and timeouts.
#include <corio/redis/client.hpp>

#include <cstdint>
#include <utility>

#include <corio/errors.hpp>
#include <corio/lock.hpp>
#include <corio/timeout.hpp>

#include "redis/context.hpp"

namespace corio::redis {

namespace detail {

struct ClientState {
  explicit ClientState(ClientOptions o) : options(std::move(o)) {}
  ClientState(const ClientState&) = delete;
  ~ClientState() {
    if (ctx) ctx->close("client is closed");
  }

  // One task connects; the others wait for it.
  static Coro<void> ensure_connected(ClientState* s) {
    if (!s) throw ConnectionError("client is closed (moved from)");
    co_await s->connect_if_needed();
  }

  Coro<void> connect_if_needed() {
    if (ctx && ctx->alive()) co_return;
    if (closed) throw ConnectionError("client is closed");
    if (ctx && !options.reconnect) throw ConnectionError(ctx->error);
    co_await connecting.acquire();
    struct Release {
      Lock& lock;
      ~Release() { lock.release(); }
    } release{connecting};
    if (ctx && ctx->alive()) co_return;
    // The old context's commands have failed already; it goes now.
    ctx.reset();
    ctx = co_await bounded(Context::connect(options), options.connect_timeout);
    ++generation;
  }

  template <class T>
  static Coro<T> bounded(Coro<T> work, std::optional<std::chrono::duration<double>> limit) {
    if (!limit) co_return co_await std::move(work);
    co_return co_await wait_for(std::move(work), *limit);
  }

  static Coro<Reply> await_reply(Future<Reply> reply) { co_return co_await reply; }

  // A reply not back within command_timeout may have stalled mid-way, and
  // nothing after it on that connection can be trusted to come or to match
  // its command: the connection is closed (its other commands fail with
  // ConnectionError) and the next command connects anew, as redis-py does.
  // A cancelled await says nothing about the connection: its reply is read
  // and dropped when it comes (Context::answer), the rest stay in step.
  Coro<Reply> within_timeout(Future<Reply> reply) {
    const std::uint64_t connection = generation;
    try {
      co_return co_await bounded(await_reply(std::move(reply)), options.command_timeout);
    } catch (const TimeoutError&) {
      // The connection of this command, unless replaced meanwhile.
      if (ctx && generation == connection) {
        ctx->close("closed: a reply did not come within command_timeout");
      }
      throw;
    }
  }

  ClientOptions options;
  std::shared_ptr<Context> ctx;
  std::uint64_t generation = 0;  // connections made
  Lock connecting;
  bool closed = false;
};

}  // namespace detail

Client::Client(std::shared_ptr<detail::ClientState> s) noexcept : s_(std::move(s)) {}
Client::Client(Client&&) noexcept = default;
Client& Client::operator=(Client&&) noexcept = default;
Client::~Client() = default;

Coro<Client> Client::connect(ClientOptions options) {
  auto s = std::make_shared<detail::ClientState>(std::move(options));
  co_await detail::ClientState::ensure_connected(s.get());
  co_return Client(std::move(s));
}

Coro<Reply> Client::command_argv(std::vector<std::string> args) {
  auto s = s_;
  co_await detail::ClientState::ensure_connected(s.get());
  Future<Reply> reply = s->ctx->send(args);
  // Without a limit, no wrapper: three coroutine frames less per command.
  if (!s->options.command_timeout) co_return co_await reply;
  co_return co_await s->within_timeout(reply);
}

Coro<std::vector<Reply>> Client::pipeline(std::vector<std::vector<std::string>> commands) {
  auto s = s_;
  co_await detail::ClientState::ensure_connected(s.get());
  std::vector<Future<Reply>> replies;
  replies.reserve(commands.size());
  for (const auto& c : commands) replies.push_back(s->ctx->send(c, true));
  std::vector<Reply> out;
  out.reserve(replies.size());
  for (Future<Reply>& r : replies) {
    out.push_back(co_await s->within_timeout(r));
  }
  co_return out;
}

bool Client::is_connected() const noexcept { return s_ && s_->ctx && s_->ctx->alive(); }
std::size_t Client::in_flight() const noexcept {
  return s_ && s_->ctx ? s_->ctx->in_flight() : 0;
}

void Client::close() noexcept {
  if (!s_) return;
  s_->closed = true;
  if (s_->ctx) s_->ctx->close("client is closed");
  s_->ctx.reset();
}

}  // namespace corio::redis
