// The simulated wire (see sim_network.hpp): channels, deliveries in time,
// the handshake, and the faults.
#include <netinet/in.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <system_error>

#include "core/backend/sim/sim_network.hpp"

namespace corio::detail::sim {

Channel* Network::new_channel(SimSocket* from, SimSocket* to, int from_host, int to_host) {
  auto ch = std::make_unique<Channel>();
  ch->id = channels_.size() + 1;
  ch->from = from;
  ch->to = to;
  ch->from_host = from_host;
  ch->to_host = to_host;
  ch->last_at = now_;
  channels_.push_back(std::move(ch));
  return channels_.back().get();
}

// When something sent now from one host to another arrives: after the
// latency, a latency spike's extra, and a seeded jitter.
double Network::arrival(int from_host, int to_host) noexcept {
  double at = now_ + options_.latency;
  if (!slow_.empty()) {
    const auto extra = slow_.find({std::min(from_host, to_host), std::max(from_host, to_host)});
    if (extra != slow_.end()) at += extra->second;
  }
  if (options_.jitter > 0) at += std::uniform_real_distribution<double>(0, options_.jitter)(rng_);
  return at;
}

// A segment arrives at its arrival time, never before one sent earlier on
// its channel.
void Network::put(Channel& ch, Channel::Segment::Kind kind, std::string bytes) {
  const double at = std::max(arrival(ch.from_host, ch.to_host), ch.last_at);
  ch.last_at = at;
  ch.wire.push_back({kind, std::move(bytes), at});
  due_.emplace(at, rng_(), &ch);
}

double Network::next_delivery() const noexcept {
  const double inf = std::numeric_limits<double>::infinity();
  return std::min(due_.empty() ? inf : std::get<0>(*due_.begin()),
                  datagrams_due_.empty() ? inf : datagrams_due_.begin()->first.first);
}

void Network::advance_to(double t) {
  while (next_delivery() <= t) deliver_next();
  now_ = std::max(now_, t);
}

void Network::deliver_next() {
  const bool segment = datagrams_due_.empty() ||
                       (!due_.empty() && std::make_pair(std::get<0>(*due_.begin()), std::get<1>(*due_.begin())) <
                                             datagrams_due_.begin()->first);
  if (segment) {
    const auto [at, tie, ch] = *due_.begin();
    due_.erase(due_.begin());
    now_ = std::max(now_, at);
    deliver(*ch);
    return;
  }
  auto node = datagrams_due_.extract(datagrams_due_.begin());
  now_ = std::max(now_, node.key().first);
  land(node.mapped());
}

bool Network::cut(int a, int b) const noexcept {
  return cuts_.count({std::min(a, b), std::max(a, b)}) != 0;
}

// The front segment of ch arrives, unless a partition holds it.
void Network::deliver(Channel& ch) {
  if (ch.wire.empty()) return;  // a reset dropped it
  if (cut(ch.from_host, ch.to_host)) {
    if (ch.held++ == 0) held_.push_back(&ch);
    return;
  }
  Channel::Segment seg = std::move(ch.wire.front());
  ch.wire.pop_front();
  note(ch, seg);
  arrive(ch, seg);
}

void Network::arrive(Channel& ch, Channel::Segment& seg) {
  using K = Channel::Segment::Kind;
  if (seg.kind == K::syn) {
    SimSocket* l =
        ch.to_host >= 0 && ch.from != nullptr ? listener(ch.to_host, ch.from->peer) : nullptr;
    if (l == nullptr || l->accept_queue.size() >= static_cast<std::size_t>(l->backlog)) {
      if (ch.from == nullptr) return;
      Channel& answer = *new_channel(nullptr, ch.from, ch.to_host, ch.from_host);
      put(answer, K::refused, ch.to_host >= 0 ? "" : "unreachable");
      return;
    }
    establish(*ch.from, *l);
    return;
  }
  SimSocket* to = ch.to;
  if (seg.kind == K::data && ch.from != nullptr) {
    ch.from->in_flight -= std::min(ch.from->in_flight, seg.bytes.size());
  }
  if (to == nullptr) {
    // Bytes for a closed socket: its host answers with a reset.
    if (seg.kind == K::data && ch.back != nullptr && ch.from != nullptr) put(*ch.back, K::reset);
    return;
  }
  switch (seg.kind) {
    case K::data:
      if (!to->sink) to->inbox += seg.bytes;
      break;
    case K::fin: to->eof = true; break;
    case K::reset:
      to->error = -ECONNRESET;
      if (to->peer_socket != nullptr) to->peer_socket->peer_socket = nullptr;
      to->peer_socket = nullptr;
      break;
    case K::syn_ack:
      to->state = SimSocket::State::connected;
      to->connect_result = 0;
      break;
    case K::refused:
      to->connect_result = to->error = seg.bytes.empty() ? -ECONNREFUSED : -EHOSTUNREACH;
      to->state = SimSocket::State::closed;
      break;
    case K::syn: break;
  }
}

// The SYN reached a listener with room: the server's socket is made and
// queued for accept(), and the client hears a SYN-ACK one latency later.
void Network::establish(SimSocket& client, SimSocket& l) {
  const int fd = open(l.unix_family ? AF_UNIX : l.local.family(), SOCK_STREAM, 0);
  if (fd < 0) return;  // out of fds: the client's connect waits, as for a lost SYN
  SimSocket& server = *find(fd);
  server.host = l.host;
  server.state = SimSocket::State::connected;
  server.local = l.unix_family ? l.local : SocketAddress::ip(address(l.host), l.local.port());
  server.peer = client.local;
  server.peer_socket = &client;
  client.peer_socket = &server;
  Channel& up = *client.out;
  up.to = &server;
  server.out = new_channel(&server, &client, l.host, client.host);
  server.out->back = &up;
  up.back = server.out;
  l.accept_queue.push_back(&server);
  put(*server.out, Channel::Segment::syn_ack);
}

// A pipe is a connection made at once: the simulated wire carries its bytes
// (one latency, the window as a pipe's capacity), the FIN of its closed
// write end is the reader's EOF.
std::pair<int, int> Network::pipe(int writer_host, int reader_host) {
  const int saved = current_;
  current_ = writer_host;
  const int w = open(AF_UNIX, SOCK_STREAM, 0);
  current_ = reader_host;
  const int r = w >= 0 ? open(AF_UNIX, SOCK_STREAM, 0) : w;
  current_ = saved;
  if (r < 0) {
    if (w >= 0) close(w);
    throw std::system_error(-r, std::generic_category(), "pipe");
  }
  SimSocket& a = *find(w);
  SimSocket& b = *find(r);
  a.state = b.state = SimSocket::State::connected;
  a.peer_socket = &b;
  b.peer_socket = &a;
  a.out = new_channel(&a, &b, writer_host, reader_host);
  b.out = new_channel(&b, &a, reader_host, writer_host);
  a.out->back = b.out;
  b.out->back = a.out;
  b.shut_wr = true;
  return {w, r};
}

// ---- faults -------------------------------------------------------------------------

void Network::partition(int a, int b) { cuts_.insert({std::min(a, b), std::max(a, b)}); }

// What the partition held goes now, one latency later, in order.
void Network::heal(int a, int b) {
  cuts_.erase({std::min(a, b), std::max(a, b)});
  std::vector<Channel*> still;
  for (Channel* ch : held_) {
    if (cut(ch->from_host, ch->to_host)) {
      still.push_back(ch);
      continue;
    }
    // Each held delivery goes again; the segments' order is the wire's.
    ch->last_at = std::max(ch->last_at, now_ + options_.latency);
    for (; ch->held > 0; --ch->held) due_.emplace(ch->last_at, rng_(), ch);
  }
  held_ = std::move(still);
}

void Network::slow(int a, int b, double seconds) {
  if (seconds > 0) {
    slow_[{std::min(a, b), std::max(a, b)}] = seconds;
  } else {
    slow_.erase({std::min(a, b), std::max(a, b)});
  }
}

// Every connection between a and b dies at once: both ends read ECONNRESET,
// and what was on the wire between them is lost.
void Network::reset(int a, int b) {
  for (auto& [fd, s] : sockets_) {
    SimSocket* p = s->peer_socket;
    if (s->state != SimSocket::State::connected || p == nullptr) continue;
    if (!((s->host == a && p->host == b) || (s->host == b && p->host == a))) continue;
    for (SimSocket* end : {s.get(), p}) {
      end->error = -ECONNRESET;
      end->in_flight = 0;
      if (end->out != nullptr) end->out->wire.clear();
      end->peer_socket = nullptr;
    }
  }
}

// FNV-1a over what arrives, in order: the run's fingerprint.
void Network::mix(const void* p, std::size_t n) noexcept {
  const auto* b = static_cast<const unsigned char*>(p);
  for (std::size_t i = 0; i < n; ++i) digest_ = (digest_ ^ b[i]) * 1099511628211ull;
}

void Network::note(const Channel& ch, const Channel::Segment& seg) noexcept {
  mix(&seg.at, sizeof seg.at);
  mix(&ch.id, sizeof ch.id);
  mix(&seg.kind, sizeof seg.kind);
  mix(seg.bytes.data(), seg.bytes.size());
}

}  // namespace corio::detail::sim
