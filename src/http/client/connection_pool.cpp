// The client's connection pool (see connection_pool.hpp).
#include "http/client/connection_pool.hpp"

#include "http/client/h2_client.hpp"
#include "http/client/head_exchange.hpp"

#include <cerrno>
#include <system_error>

#include <corio/errors.hpp>
#include <corio/event_loop.hpp>
#include <corio/http/client_errors.hpp>
#include <corio/http/tunnel.hpp>
#include <corio/streams.hpp>
#include <corio/timeout.hpp>

namespace corio::http::detail {

namespace {

std::unique_ptr<Semaphore> make_permits(std::size_t limit) {
  return limit == 0 ? nullptr : std::make_unique<Semaphore>(static_cast<int>(limit));
}

// An idle connection the server may have closed meanwhile (its keep-alive
// timeout is often shorter than ours): a non-blocking peek says so without
// a round trip, as urllib3 does. A plain connection with bytes waiting is
// dead too (nothing was asked); on TLS they may be a session ticket, so
// only EOF and errors count there. The loop peeks, not recv(): on io_uring
// the bytes (or the EOF) may already sit in the backend's buffers.
bool looks_alive(const PoolHost::Idle& c, bool tls, EventLoop& loop) noexcept {
  if (c.writer.is_closing() || c.reader.exception() || !c.reader.buffered().empty()) return false;
  const int fd = c.writer.fileno();
  if (fd < 0) return false;
  const long n = loop.io().peek_recv(fd);
  if (n == 0) return false;
  if (n > 0) return tls;
  return n == -EAGAIN;
}

// The running loop, or null when a lease is dropped outside any loop (a
// response that outlived corio::run): its connection is then closed.
EventLoop* running_loop() noexcept {
  try {
    return &get_running_loop();
  } catch (const RuntimeError&) {
    return nullptr;
  }
}

}  // namespace

Lease::Lease(Lease&& o) noexcept { *this = std::move(o); }

Lease& Lease::operator=(Lease&& o) noexcept {
  if (this != &o) {
    release(false);
    reader = std::move(o.reader);
    writer = std::move(o.writer);
    reused = o.reused;
    pool_ = std::move(o.pool_);
    host_ = std::exchange(o.host_, nullptr);
    host_permit_ = std::move(o.host_permit_);
    total_permit_ = std::move(o.total_permit_);
  }
  return *this;
}

void Lease::release(bool keep) noexcept {
  if (!host_) return;
  pool_->give_back(*std::exchange(host_, nullptr), std::move(reader), std::move(writer), keep);
  reader = {};
  writer = {};
  // The permits go after the connection is back, so the task they wake
  // finds it idle instead of connecting anew.
  host_permit_.reset();
  total_permit_.reset();
  pool_.reset();
}

ConnectionPool::ConnectionPool(PoolOptions opts)
    : opts_(std::move(opts)), permits_(make_permits(opts_.limit)) {}

ConnectionPool::~ConnectionPool() { close(); }

std::string Route::key() const { return via ? peer.origin() + " via " + via->origin() : peer.origin(); }

PoolHost& ConnectionPool::host(const Route& route) {
  auto [it, inserted] = hosts_.try_emplace(route.key());
  if (inserted) {
    it->second.permits = make_permits(opts_.limit_per_host);
    it->second.tls = route.peer.is_https();
  }
  return it->second;
}

void ConnectionPool::give_back(PoolHost& host, StreamReader reader, StreamWriter writer,
                               bool keep) noexcept {
  EventLoop* loop = running_loop();
  if (keep && loop && !closed_ && !writer.is_closing()) {
    park(host, std::move(reader), std::move(writer), *loop);
    return;
  }
  discard(host, writer);
}

// The timer's deadline and the expiry test share this one expression, so
// a timer firing at its deadline always finds its connection expired (a
// virtual clock does not move on by itself to break a tie).
double ConnectionPool::expires_at(const PoolHost::Idle& c) const noexcept {
  return c.since + std::chrono::duration<double>(opts_.keepalive_timeout).count();
}

void ConnectionPool::park(PoolHost& host, StreamReader reader, StreamWriter writer,
                          EventLoop& loop) {
  host.idle.push_back({std::move(reader), std::move(writer), loop.time()});
  ++idle_;
  // An armed timer is due no later than this newest connection's deadline.
  if (!expiry_ || expiry_.cancelled()) arm(loop, expires_at(host.idle.back()));
}

void ConnectionPool::arm(EventLoop& loop, double when) {
  expiry_ = loop.call_at(when, [this] { on_expiry(); });
}

// Call after taking a connection off an idle list.
void ConnectionPool::left_idle() noexcept {
  if (--idle_ == 0) expiry_.cancel();
}

void ConnectionPool::discard(PoolHost& host, StreamWriter& writer) noexcept {
  writer.close();
  --host.open;
  --open_;
}

void ConnectionPool::prune_expired(PoolHost& host, double now) {
  while (!host.idle.empty() && expires_at(host.idle.front()) <= now) {
    discard(host, host.idle.front().writer);
    host.idle.pop_front();
    left_idle();
  }
}

void ConnectionPool::drop_dead(PoolHost& host, EventLoop& loop) {
  for (auto it = host.idle.begin(); it != host.idle.end();) {
    if (looks_alive(*it, host.tls, loop)) {
      ++it;
      continue;
    }
    discard(host, it->writer);
    it = host.idle.erase(it);
    left_idle();
  }
}

void ConnectionPool::on_expiry() {
  expiry_ = {};  // fired: the loop holds the handle until this returns
  EventLoop& loop = get_running_loop();
  std::optional<double> next;
  for (auto& [origin, h] : hosts_) {
    prune_expired(h, loop.time());
    drop_dead(h, loop);
    if (!h.idle.empty() && (!next || expires_at(h.idle.front()) < *next)) {
      next = expires_at(h.idle.front());
    }
  }
  if (next) arm(loop, *next);
}

void ConnectionPool::make_room() {
  if (opts_.limit == 0 || open_ < opts_.limit) return;
  PoolHost* oldest = nullptr;
  for (auto& [origin, h] : hosts_) {
    if (!h.idle.empty() && (!oldest || h.idle.front().since < oldest->idle.front().since)) oldest = &h;
  }
  if (!oldest) return;
  discard(*oldest, oldest->idle.front().writer);
  oldest->idle.pop_front();
  left_idle();
}

const SslContext& ConnectionPool::ssl_context() {
  if (opts_.ssl) return *opts_.ssl;
  // Parsing the system's CA bundle takes tens of milliseconds: once per pool.
  if (!default_ssl_) default_ssl_ = SslContext::client();
  return *default_ssl_;
}

ConnectOptions ConnectionPool::connect_options(const Url& url) {
  ConnectOptions copts;
  if (url.is_https()) copts.ssl = ssl_context();
  return copts;
}

// The tunnel to route's peer carries what a direct connection to it would
// (inner: its TLS and ALPN, so h2 is negotiated inside the tunnel as
// outside). The session's TLS context serves both hops: an https proxy is
// verified with the same CAs as the origin behind it. No timeout of the
// tunnel's own: connect()'s limit covers the proxy's answer too.
TunnelOptions ConnectionPool::tunnel_options(const Route& route, ConnectOptions inner) {
  TunnelOptions topts;
  topts.headers = route.proxy_headers;
  topts.ssl = std::move(inner.ssl);
  topts.alpn_protocols = std::move(inner.alpn_protocols);
  if (route.via->is_https()) topts.proxy_ssl = ssl_context();
  topts.timeout.reset();
  return topts;
}

Coro<Streams> ConnectionPool::open(const Route& route, ConnectOptions direct) {
  const Url& url = route.peer;
  Coro<Streams> opening =
      route.via ? open_tunnel(*route.via, url.host, url.port, tunnel_options(route, std::move(direct)))
                : open_connection(url.host, url.port, std::move(direct));
  Coro<Streams> connected = connecting(url.origin(), std::move(opening));
  co_return co_await std::move(connected);
}

Coro<std::pair<StreamReader, StreamWriter>> ConnectionPool::open_own(Route route) {
  co_return co_await open(route, connect_options(route.peer));
}

Coro<void> ConnectionPool::connect(const Route& route, Lease& lease,
                                   std::optional<std::chrono::milliseconds> limit,
                                   PoolHost* announce) {
  // The requests that could share this connection if it is h2 wait for it.
  const Announcing announcing(announce);
  Coro<std::pair<StreamReader, StreamWriter>> opening = open(route, h2_options(route));
  std::pair<StreamReader, StreamWriter> streams;
  if (limit) {
    streams = co_await timeout(*limit, std::move(opening));
  } else {
    streams = co_await std::move(opening);
  }
  lease.reader = std::move(streams.first);
  lease.writer = std::move(streams.second);
}

Coro<Lease> ConnectionPool::acquire(Url url, bool fresh,
                                    std::optional<std::chrono::milliseconds> sock_connect) {
  return acquire(Route{std::move(url), std::nullopt, {}}, fresh, sock_connect);
}

Coro<Lease> ConnectionPool::acquire(Route route, bool fresh,
                                    std::optional<std::chrono::milliseconds> sock_connect,
                                    std::shared_ptr<H2ClientStream>* stream) {
  if (closed_) throw ClientConnectionError("the session is closed");
  PoolHost& h = host(route);
  const bool h2 = stream != nullptr && !h.h1_only && may_h2(route);
  Lease lease;
  // No local of its own: this frame is every HTTP/1.1 request's too.
  if (h2 && !fresh && co_await share_h2(h, *stream)) co_return lease;
  if (h.permits) lease.host_permit_.emplace(co_await h.permits->scoped_acquire());
  if (permits_) lease.total_permit_.emplace(co_await permits_->scoped_acquire());
  if (closed_) throw ClientConnectionError("the session is closed");
  EventLoop& loop = get_running_loop();
  prune_expired(h, loop.time());
  // An origin that may speak h2 gets its requests on h2: its idle HTTP/1.1
  // connections (a multipart body's) wait for those that need them.
  while (!fresh && !h2 && !h.idle.empty()) {
    PoolHost::Idle c = std::move(h.idle.back());
    h.idle.pop_back();
    left_idle();
    if (looks_alive(c, h.tls, loop)) {
      lease.reader = std::move(c.reader);
      lease.writer = std::move(c.writer);
      lease.reused = true;
      break;
    }
    discard(h, c.writer);
  }
  if (!lease.reused) {
    make_room();
    co_await connect(route, lease, sock_connect, h2 ? &h : nullptr);
    ++h.open;
    ++open_;
    if (h2 && speaks_h2(route, lease)) {
      adopt_h2(h, lease, *stream);
      co_return lease;
    }
    if (h2) h.h1_only = true;  // ALPN chose http/1.1: the origin's idle connections serve again
  }
  lease.pool_ = shared_from_this();
  lease.host_ = &h;
  co_return lease;
}

std::vector<StreamWriter> ConnectionPool::close() {
  closed_ = true;
  expiry_.cancel();
  idle_ = 0;
  std::vector<StreamWriter> closing;
  for (auto& [origin, h] : hosts_) {
    for (PoolHost::Idle& c : h.idle) {
      c.writer.close();
      closing.push_back(std::move(c.writer));
    }
    h.open -= h.idle.size();
    open_ -= h.idle.size();
    h.idle.clear();
    for (const std::shared_ptr<H2ClientConnection>& c : h.h2) closing.push_back(c->shut());
    h.open -= h.h2.size();
    open_ -= h.h2.size();
    h.h2.clear();
    if (h.connecting) h.connecting->set();
  }
  return closing;
}

}  // namespace corio::http::detail
