// The simulated network's datagrams (see sim_network.hpp): UDP between
// hosts. Each datagram travels on its own, so a jitter reorders them; one
// is lost at the `loss` rate drawn from the seed, across a partition (UDP
// has no retransmission to carry it over a heal), and when the receiving
// socket's queue is past the window, as a full receive buffer drops it.
#include <netinet/in.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>

#include "core/backend/sim/sim_network.hpp"

namespace corio::detail::sim {

long Network::sendto(SimSocket& s, const char* data, std::size_t len, const SocketAddress& to) noexcept {
  if (s.state == SimSocket::State::closed) return -EBADF;
  if (len > 65507) return -EMSGSIZE;  // the largest UDP payload over IPv4
  try {
    if (s.state == SimSocket::State::fresh) {
      s.local = host_address(s.host, ephemeral_port(s.host));
      s.state = SimSocket::State::bound;
    }
    const int to_host = host_of(to);
    if (to_host < 0) return static_cast<long>(len);  // nobody there: gone, as UDP goes
    const double at = arrival(s.host, to_host);
    const bool lost = cut(s.host, to_host) ||
                      (options_.loss > 0 && std::uniform_real_distribution<double>(0, 1)(rng_) < options_.loss);
    if (!lost) {
      datagrams_due_.emplace(std::make_pair(at, rng_()),
                             Datagram{to_host, host_address(s.host, s.local.port()), to, std::string(data, len)});
    }
  } catch (...) {
    return -ENOMEM;
  }
  return static_cast<long>(len);
}

long Network::recvfrom(SimSocket& s, char* buf, std::size_t len, SocketAddress* from) noexcept {
  if (s.datagrams.empty()) return -EAGAIN;
  auto& [bytes, sender] = s.datagrams.front();
  const std::size_t n = std::min(len, bytes.size());  // the rest of a longer one is dropped
  std::memcpy(buf, bytes.data(), n);
  if (from != nullptr) *from = sender;
  s.datagram_bytes -= bytes.size();
  s.datagrams.pop_front();
  return static_cast<long>(n);
}

// A datagram arrives: to the socket of its host bound to its port (and, if
// that socket is connected, only from its peer), else it is dropped.
void Network::land(Datagram& d) {
  if (cut(host_of(d.from), d.to_host)) return;  // the partition began while it flew
  for (auto& [fd, s] : sockets_) {
    if (!s->datagram || s->host != d.to_host || s->state != SimSocket::State::bound ||
        s->local.port() != d.to.port()) {
      continue;
    }
    if (s->has_peer && (s->peer.host() != d.from.host() || s->peer.port() != d.from.port())) return;
    if (s->datagram_bytes + d.bytes.size() > options_.window) return;
    mix(&now_, sizeof now_);
    mix(d.bytes.data(), d.bytes.size());
    s->datagram_bytes += d.bytes.size();
    s->datagrams.emplace_back(std::move(d.bytes), d.from);
    return;
  }
}

}  // namespace corio::detail::sim
