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
// An idle connection is closed keepalive_timeout after it went idle, on
// time even if no request comes (aiohttp's connector does so too: a socket
// the server still holds open, or one it closed and left in CLOSE_WAIT, is
// not kept for a next request that may never come). One loop timer serves
// the whole pool, armed for the oldest idle connection's deadline: one
// heap entry however many connections idle, and no wake-up while none
// does. It is cancelled when the last idle connection leaves and by
// close(); its callback holds `this` raw, safe because ~ConnectionPool
// closes. When it fires it closes what expired, drops what the server
// closed meanwhile, and re-arms for the next oldest.
//
// A connection the server closed while idle (its keep-alive timeout is
// often shorter than ours) is noticed by a non-blocking peek: when a
// request would reuse it, and at each timer sweep. Nothing watches it in
// between: the streams read only when asked, and a socket registered for
// stream operations cannot take an add_reader callback too.
//
// A lease holds the pool by shared_ptr: a response may outlive its
// session; its connection is then closed, not pooled.
//
// HTTP/2 (h2_client.hpp): an https connection offers "h2" by ALPN (unless
// PoolOptions::http2 is off), and a plain one speaks h2 from its first byte
// with http2_prior_knowledge. An h2 connection is never idle-listed or
// leased alone: it stays in its origin's h2 list, holding one permit of each
// limit for its whole life, and each lease on it is one stream. The pool
// thus counts streams, not connections, on h2: a request takes the first
// h2 connection of its origin under the peer's SETTINGS_MAX_CONCURRENT_STREAMS;
// when all are full, it opens another if the limits have a permit free at
// once (as Go's transport does: a server's stream cap is no reason to wait
// while the caller allowed more connections), else it queues on the least
// busy one, where nghttp2 holds its HEADERS until a stream ends. While an
// origin's first connection is being made, the requests that could share it
// wait for it rather than each opening one.
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
#include <vector>

#include <corio/coro.hpp>
#include <corio/event.hpp>
#include <corio/handle.hpp>
#include <corio/http/headers.hpp>
#include <corio/http/url.hpp>
#include <corio/semaphore.hpp>
#include <corio/ssl.hpp>
#include <corio/stream_reader.hpp>
#include <corio/stream_writer.hpp>

namespace corio {
struct ConnectOptions;
}

namespace corio::http {
struct TunnelOptions;
}

namespace corio::http::detail {

struct PoolOptions {
  std::size_t limit = 100;         // 0: none
  std::size_t limit_per_host = 0;  // 0: none
  std::chrono::milliseconds keepalive_timeout{15'000};
  std::optional<SslContext> ssl;   // for https; SslContext::client() when empty
  bool http2 = true;                // offer h2 by ALPN on https
  bool http2_prior_knowledge = false;  // h2 from the first byte on http
};

class ConnectionPool;
class H2ClientConnection;
class H2ClientStream;

// Where a request's connection goes: straight to its origin, to an HTTP
// proxy (which takes absolute-form requests for any origin, so the pool
// keys its connections by the proxy), or through a proxy's CONNECT tunnel
// to the origin (keyed by both).
struct Route {
  Url peer;                 // connected to: the origin, or the proxy
  std::optional<Url> via;   // a tunnel through this proxy to peer
  Headers proxy_headers;    // for the CONNECT request
  bool http1_only = false;  // multipart (only HTTP/1.1 streams it), or a proxy's absolute form
  std::string key() const;
};

struct PoolHost;

// While it lives, host's `connecting` event is set up (unless another
// connect already did), set and dropped when it goes.
class Announcing {
 public:
  explicit Announcing(PoolHost* host);
  Announcing(const Announcing&) = delete;
  Announcing& operator=(const Announcing&) = delete;
  ~Announcing();

 private:
  PoolHost* host_ = nullptr;
  std::shared_ptr<Event> made_;
};

struct PoolHost {
  struct Idle {
    StreamReader reader;
    StreamWriter writer;
    double since;  // loop time it went idle
  };
  std::deque<Idle> idle;             // oldest first
  std::unique_ptr<Semaphore> permits;  // null: no per-host limit
  std::size_t open = 0;              // idle and leased
  bool tls = false;                  // https: waiting bytes may be a session ticket
  std::vector<std::shared_ptr<H2ClientConnection>> h2;  // each counted in open
  std::shared_ptr<Event> connecting;  // set when a connection that may be h2 is made
  bool h1_only = false;  // an h2-able connection came back HTTP/1.1 (by ALPN)
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
  // With h2, a stream on an HTTP/2 connection may be given instead: *h2
  // is then set and the lease holds nothing. Out of the lease, not in it:
  // a lease is moved a dozen times per HTTP/1.1 request.
  Coro<Lease> acquire(Route route, bool fresh = false,
                      std::optional<std::chrono::milliseconds> sock_connect = {},
                      std::shared_ptr<H2ClientStream>* h2 = nullptr);
  // A connection of its own, pooled and counted nowhere, for a protocol
  // that takes it over (an Upgrade): HTTP/1.1, to route.peer, through
  // route.via's CONNECT tunnel if it has one.
  Coro<std::pair<StreamReader, StreamWriter>> open_own(Route route);
  // Closes the idle connections; leased ones close when released. Returns
  // the writers closed, for whoever wants to wait for them.
  std::vector<StreamWriter> close();
  bool closed() const noexcept { return closed_; }
  std::size_t open_connections() const noexcept { return open_; }
  std::size_t idle_connections() const noexcept;
  // Whether route's origin has an h2 connection that takes new streams.
  bool has_h2(const Route& route) const;
  // Whether requests on route may go over h2 (PoolOptions, no proxy).
  bool may_h2(const Route& route) const noexcept;
  // An h2 connection of host ended (h2_client.hpp's lifetime rule 1).
  void h2_ended(PoolHost& host, const H2ClientConnection* c) noexcept;

 private:
  friend class Lease;
  PoolHost& host(const Route& route);
  void give_back(PoolHost& host, StreamReader reader, StreamWriter writer, bool keep) noexcept;
  double expires_at(const PoolHost::Idle& c) const noexcept;
  void park(PoolHost& host, StreamReader reader, StreamWriter writer, EventLoop& loop);
  void arm(EventLoop& loop, double when);
  void left_idle() noexcept;
  void discard(PoolHost& host, StreamWriter& writer) noexcept;
  void prune_expired(PoolHost& host, double now);
  void drop_dead(PoolHost& host, EventLoop& loop);
  void on_expiry();
  void make_room();
  // announce: the host whose h2-able requests wait for this connection.
  // To route.peer, through route.via's tunnel if any; direct: how a
  // connection without a proxy connects. ClientConnectionError, ClientSSLError.
  Coro<std::pair<StreamReader, StreamWriter>> open(const Route& route, ConnectOptions direct);
  Coro<void> connect(const Route& route, Lease& lease,
                     std::optional<std::chrono::milliseconds> limit, PoolHost* announce = nullptr);
  // HTTP/2 (pool_h2.cpp).
  ConnectOptions h2_options(const Route& route);
  bool speaks_h2(const Route& route, const Lease& lease) const;
  std::shared_ptr<H2ClientConnection> h2_for(const PoolHost& host) const noexcept;
  // A stream on an h2 connection of host (after the connection being made,
  // if any); false: none, make one.
  Coro<bool> share_h2(PoolHost& host, std::shared_ptr<H2ClientStream>& stream);
  void adopt_h2(PoolHost& host, Lease& lease, std::shared_ptr<H2ClientStream>& stream);
  const SslContext& ssl_context();
  ConnectOptions connect_options(const Url& url);
  TunnelOptions tunnel_options(const Route& route, ConnectOptions inner);

  PoolOptions opts_;
  std::unordered_map<std::string, PoolHost> hosts_;  // nodes are stable: leases point at them
  std::unique_ptr<Semaphore> permits_;               // null: no total limit
  std::optional<SslContext> default_ssl_;
  std::size_t open_ = 0;
  std::size_t idle_ = 0;
  // Armed while any connection idles, for the oldest one's deadline (or an
  // earlier one: firing early only re-arms). Unarmed: empty or cancelled.
  TimerHandle expiry_;
  bool closed_ = false;
};

}  // namespace corio::http::detail
