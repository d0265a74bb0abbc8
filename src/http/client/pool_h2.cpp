// The pool's HTTP/2 connections (see connection_pool.hpp): which routes may
// speak h2, which connection a request's stream goes on, and a new
// connection that spoke h2 taken out of the lease into its origin's list.
#include <algorithm>

#include <corio/streams.hpp>

#include "http/client/connection_pool.hpp"
#include "http/client/h2_client.hpp"

namespace corio::http::detail {

// Not to a proxy taking absolute-form requests, and not for a body only
// HTTP/1.1 streams (both http1_only). Inside a CONNECT tunnel as on a
// direct connection: ALPN or prior knowledge with the origin, as curl and
// browsers do; the tunnel's key names the proxy, so the h2 connection is
// shared only by requests that would share the tunnel anyway.
bool ConnectionPool::may_h2(const Route& route) const noexcept {
  if (route.http1_only) return false;
  return route.peer.is_https() ? opts_.http2 : opts_.http2_prior_knowledge;
}

// ALPN per connection, not on the context: the caller's context stays as
// given, and the connections that must stay HTTP/1.1 do not offer h2.
ConnectOptions ConnectionPool::h2_options(const Route& route) {
  ConnectOptions copts = connect_options(route.peer);
  if (route.peer.is_https() && may_h2(route)) copts.alpn_protocols = {{"h2", "http/1.1"}};
  return copts;
}

bool ConnectionPool::speaks_h2(const Route& route, const Lease& lease) const {
  if (!route.peer.is_https()) return true;  // prior knowledge
  return lease.writer.get_extra_info("alpn_protocol") == "h2";
}

bool ConnectionPool::has_h2(const Route& route) const {
  const auto it = hosts_.find(route.key());
  return it != hosts_.end() &&
         std::any_of(it->second.h2.begin(), it->second.h2.end(),
                     [](const std::shared_ptr<H2ClientConnection>& c) { return c->alive(); });
}

// The first connection with a stream free; when all are full and the
// limits have no permit free at once, the least busy one (the request
// queues there); else none (a new connection is made).
std::shared_ptr<H2ClientConnection> ConnectionPool::h2_for(const PoolHost& host) const noexcept {
  std::shared_ptr<H2ClientConnection> least;
  for (const std::shared_ptr<H2ClientConnection>& c : host.h2) {
    if (c->usable()) return c;
    if (c->alive() && (!least || c->streams() < least->streams())) least = c;
  }
  const bool permit_free =
      (!host.permits || !host.permits->locked()) && (!permits_ || !permits_->locked());
  return permit_free ? nullptr : least;
}

Coro<bool> ConnectionPool::share_h2(PoolHost& host, std::shared_ptr<H2ClientStream>& stream) {
  for (;;) {
    if (std::shared_ptr<H2ClientConnection> c = h2_for(host)) {
      stream = std::make_shared<H2ClientStream>(std::move(c));
      co_return true;
    }
    if (!host.connecting || closed_) co_return false;
    const std::shared_ptr<Event> made = host.connecting;
    co_await made->wait();
  }
}

Announcing::Announcing(PoolHost* host) {
  if (host == nullptr || host->connecting) return;
  host_ = host;
  made_ = host->connecting = std::make_shared<Event>();
}

Announcing::~Announcing() {
  if (!made_) return;
  made_->set();
  if (host_->connecting == made_) host_->connecting.reset();
}

void ConnectionPool::adopt_h2(PoolHost& host, Lease& lease, std::shared_ptr<H2ClientStream>& stream) {
  auto c = std::make_shared<H2ClientConnection>(std::move(lease.reader), std::move(lease.writer),
                                                opts_.keepalive_timeout);
  lease.reader = {};
  lease.writer = {};
  c->pooled(weak_from_this(), &host, std::move(lease.host_permit_), std::move(lease.total_permit_));
  lease.host_permit_.reset();
  lease.total_permit_.reset();
  host.h2.push_back(c);
  c->start();
  stream = std::make_shared<H2ClientStream>(std::move(c));
}

void ConnectionPool::h2_ended(PoolHost& host, const H2ClientConnection* c) noexcept {
  const auto it = std::find_if(host.h2.begin(), host.h2.end(),
                               [c](const std::shared_ptr<H2ClientConnection>& p) { return p.get() == c; });
  if (it == host.h2.end()) return;
  host.h2.erase(it);
  --host.open;
  --open_;
}

std::size_t ConnectionPool::idle_connections() const noexcept {
  std::size_t n = idle_;
  for (const auto& [origin, h] : hosts_) {
    n += static_cast<std::size_t>(std::count_if(
        h.h2.begin(), h.h2.end(), [](const std::shared_ptr<H2ClientConnection>& c) { return c->streams() == 0; }));
  }
  return n;
}

}  // namespace corio::http::detail
