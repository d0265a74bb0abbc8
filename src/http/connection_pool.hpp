// detail::ConnectionPool: the session's keep-alive connections, per origin
// (scheme, host, port), and its connection limits (aiohttp's TCPConnector).
//
// A request leases a connection: acquire() first takes a permit of the
// origin's Semaphore (limit_per_host) and of the pool's (limit), both fair
// FIFO waits, then the most recently used idle connection of the origin
// that is still alive (LIFO: the warmest socket, and the older ones age
// out), else connects. The lease holds the permits until it is released:
// with keep = true the connection goes back to the idle list, else it is
// closed. An origin's connections (idle and leased) thus never exceed its
// limit; when the total would exceed `limit`, the oldest idle connection of
// another origin is closed to make room.
//
// Idle connections older than keepalive_timeout are closed at the pool's
// next use, and all of them by close(). A lease holds the pool by
// shared_ptr: a response may outlive its session; its connection is then
// closed, not pooled.
//
// Suspends: acquire() while no permit is free (resumed by a release) and
// while connecting (resumed by the loop).
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include <corio/coro.hpp>
#include <corio/http/url.hpp>
#include <corio/semaphore.hpp>
#include <corio/ssl.hpp>
#include <corio/stream_reader.hpp>
#include <corio/stream_writer.hpp>

namespace corio::http::detail {

struct PoolOptions {
  std::size_t limit = 100;         // 0: none
  std::size_t limit_per_host = 0;  // 0: none
  std::chrono::milliseconds keepalive_timeout{15'000};
  std::optional<SslContext> ssl;   // for https; SslContext::client() when empty
};

class ConnectionPool;

struct PoolHost {
  struct Idle {
    StreamReader reader;
    StreamWriter writer;
    double since;  // loop time it went idle
  };
  std::deque<Idle> idle;             // oldest first
  std::unique_ptr<Semaphore> permits;  // null: no per-host limit
  std::size_t open = 0;              // idle and leased
};

// One connection in one request's hands. Move-only; destroying it without
// release(true) closes the connection.
class Lease {
 public:
  Lease() = default;
  Lease(Lease&& o) noexcept;
  Lease& operator=(Lease&& o) noexcept;
  ~Lease() { release(false); }

  // Back to the pool (keep: the response was read to its end and the
  // connection may be reused) or closed. Idempotent.
  void release(bool keep) noexcept;
  bool active() const noexcept { return host_ != nullptr; }

  StreamReader reader;
  StreamWriter writer;
  bool reused = false;  // taken from the idle list, not freshly connected

 private:
  friend class ConnectionPool;
  std::shared_ptr<ConnectionPool> pool_;  // declared before the permits: they point into it
  PoolHost* host_ = nullptr;
  std::optional<Semaphore::Guard> host_permit_;
  std::optional<Semaphore::Guard> total_permit_;
};

class ConnectionPool : public std::enable_shared_from_this<ConnectionPool> {
 public:
  explicit ConnectionPool(PoolOptions opts);
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;
  ~ConnectionPool();

  // A connection to url's origin; fresh skips the idle ones; sock_connect
  // bounds connecting plus the TLS handshake (TimeoutError). Connection
  // failures are ClientConnectionError (ClientSSLError for TLS).
  Coro<Lease> acquire(Url url, bool fresh = false,
                      std::optional<std::chrono::milliseconds> sock_connect = {});
  // Closes the idle connections; leased ones close when released. Returns
  // the writers closed, for whoever wants to wait for them.
  std::vector<StreamWriter> close();
  bool closed() const noexcept { return closed_; }
  std::size_t open_connections() const noexcept { return open_; }
  std::size_t idle_connections() const noexcept;

 private:
  friend class Lease;
  PoolHost& host(const std::string& origin);
  void give_back(PoolHost& host, StreamReader reader, StreamWriter writer, bool keep) noexcept;
  void prune_expired(PoolHost& host, double now);
  void make_room();
  Coro<void> connect(const Url& url, Lease& lease, std::optional<std::chrono::milliseconds> limit);
  const SslContext& ssl_context();

  PoolOptions opts_;
  std::unordered_map<std::string, PoolHost> hosts_;  // nodes are stable: leases point at them
  std::unique_ptr<Semaphore> permits_;               // null: no total limit
  std::optional<SslContext> default_ssl_;
  std::size_t open_ = 0;
  bool closed_ = false;
};

}  // namespace corio::http::detail
