// corio::redis::Client: a Redis connection driven by the loop (redis-py's
// asyncio Redis, on corio's streams with hiredis's reply parser).
//
//   redis::Client r = co_await redis::Client::connect({.host = "127.0.0.1", .port = 6379});
//   co_await r.command("SET", "k", bytes);
//   redis::Reply v = co_await r.command("GET", "k");
//
// Arguments are binary-safe (sent with their lengths) and may be strings,
// string_views, C strings, integers or floating point. Commands issued by
// many tasks at once are pipelined: those issued while others are in
// flight leave together, in one write per loop iteration, and their
// replies come back in order.
//
// Suspends: connect() until the TCP handshake is done; command() until its
// reply arrives (or command_timeout passes: TimeoutError). A command is
// written whole when issued, so a cancel never cuts one short. A timed-out
// reply may have stalled mid-way, so its connection is closed, never
// reused. Cancelling the awaiting task drops the reply when it comes; the
// connection stays usable. When the connection breaks or is closed, the
// commands in flight fail with ConnectionError (they may have run: they are
// not resent), and the next command reconnects first (when
// options.reconnect). A reply over max_reply_bytes or max_reply_elements
// breaks the connection the same way.
//
// Loop-affine and move-only.
#pragma once

#include <charconv>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <corio/coro.hpp>
#include <corio/redis/reply.hpp>

namespace corio::redis {

struct ClientOptions {
  std::string host = "127.0.0.1";
  int port = 6379;
  std::optional<std::chrono::duration<double>> connect_timeout = std::chrono::seconds(10);
  std::optional<std::chrono::duration<double>> command_timeout;  // none by default
  bool reconnect = true;
  // Bounds on one reply, against a broken or hostile server: memory follows
  // the bytes received, never a count the server announces. A reply over
  // either limit fails its command with ConnectionError and closes the
  // connection. Bytes are the reply's strings plus 64 per element (what a
  // reply node costs); the default fits Redis's largest string (512 MiB,
  // proto-max-bulk-len) twice, and 16 Mi elements of 64 bytes each.
  std::size_t max_reply_bytes = std::size_t{1} << 30;
  std::size_t max_reply_elements = std::size_t{1} << 24;  // in one array
  // A Subscriber's messages that next() has not taken yet: at this many
  // bytes (their strings plus ~100 each) it stops reading its socket, and
  // reads again once next() took it down to half. Redis then holds the rest
  // and applies its client-output-buffer-limit for pub/sub (32 MiB hard by
  // default), as it does for redis-py, which reads only when asked. 1 MiB,
  // about 1,000 messages of 1 KiB, is 16 of the stream's 64 KiB reads for a
  // consumer that keeps up, and little beside what Redis and the kernel
  // already buffer for a slow one.
  std::size_t max_unread_bytes = std::size_t{1} << 20;
};

// A pub/sub message: `pattern` is set for PSUBSCRIBE matches.
struct Message {
  std::string channel;
  std::string payload;
  std::string pattern;
};

inline std::string to_arg(std::string_view s) { return std::string(s); }
template <class T>
requires(std::integral<T> || std::floating_point<T>) std::string to_arg(T v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, end);
}

namespace detail {
struct ClientState;
}

class Client {
 public:
  static Coro<Client> connect(ClientOptions options);
  Client(Client&&) noexcept;
  Client& operator=(Client&&) noexcept;
  ~Client();

  template <class... A>
  Coro<Reply> command(const A&... args) {
    return command_argv({redis::to_arg(args)...});
  }
  Coro<Reply> command_argv(std::vector<std::string> args);
  // Sends every command at once and returns their replies in order, error
  // replies included as values.
  Coro<std::vector<Reply>> pipeline(std::vector<std::vector<std::string>> commands);

  bool is_connected() const noexcept;
  std::size_t in_flight() const noexcept;
  void close() noexcept;

 private:
  explicit Client(std::shared_ptr<detail::ClientState> s) noexcept;
  std::shared_ptr<detail::ClientState> s_;
};

}  // namespace corio::redis
