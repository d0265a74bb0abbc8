// The simulated network (see sim_network.hpp): sockets, connections and the
// wire between hosts.
#include "core/backend/sim/sim_network.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

namespace corio::detail::sim {

Network::Network(NetworkOptions options) : options_(options), rng_(options.seed) {
  replaced_ = replace_socket_system(this);
  replaced_entropy_ = replace_entropy(this);
}

Network::~Network() {
  for (auto& [fd, s] : sockets_) ::close(fd);
  replace_socket_system(replaced_);
  replace_entropy(replaced_entropy_);
}

int Network::add_host(std::string name, std::string address) {
  names_.push_back(std::move(name));
  hosts_.push_back(std::move(address));
  return static_cast<int>(hosts_.size()) - 1;
}

// The simulation's DNS: hosts by name, "localhost", and "" (every
// interface); any other name does not exist. Numeric addresses are not names.
std::optional<std::string> Network::resolve(const std::string& name) {
  if (name.empty()) return "0.0.0.0";
  if (name == "localhost") return "127.0.0.1";
  for (std::size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) return hosts_[i];
  }
  try {
    (void)SocketAddress::ip(name, 0);
    return std::nullopt;
  } catch (...) {
    return "";
  }
}

// ---- sockets ----------------------------------------------------------------------

SimSocket* Network::find(int fd) noexcept {
  const auto it = sockets_.find(fd);
  return it != sockets_.end() ? it->second.get() : nullptr;
}

int Network::open(int family, int type, int /*protocol*/) noexcept {
  if (family != AF_INET && family != AF_INET6 && family != AF_UNIX) return -EAFNOSUPPORT;
  if (type != SOCK_STREAM && (type != SOCK_DGRAM || family == AF_UNIX)) return -EPROTONOSUPPORT;
  const int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);  // the number, never the file
  if (fd < 0) return -errno;
  try {
    auto s = std::make_unique<SimSocket>();
    s->fd = fd;
    s->id = next_id_++;
    s->host = current_;
    s->datagram = type == SOCK_DGRAM;
    s->unix_family = family == AF_UNIX;
    sockets_.emplace(fd, std::move(s));
  } catch (...) {
    ::close(fd);
    return -ENOMEM;
  }
  return fd;
}

SocketAddress Network::host_address(int host, std::uint16_t port) const {
  return SocketAddress::ip(address(host), port);
}

std::uint16_t Network::ephemeral_port(int host) {
  std::uint16_t& next = next_port_.try_emplace(host, std::uint16_t{40000}).first->second;
  return next++;
}

// The host at a, seen from the current host: a loopback address is the
// current host's own.
int Network::host_of(const SocketAddress& a) const noexcept {
  const std::string h = a.host();
  if (h == "127.0.0.1" || h == "::1") return current_;
  for (std::size_t i = 0; i < hosts_.size(); ++i) {
    if (hosts_[i] == h) return static_cast<int>(i);
  }
  return -1;
}

// The socket listening at `at` on host: a port, or a Unix socket's path
// (each host has its own file system, so its own paths).
SimSocket* Network::listener(int host, const SocketAddress& at) noexcept {
  const bool unix_path = at.family() == AF_UNIX;
  for (auto& [fd, s] : sockets_) {
    if (s->host != host || s->state != SimSocket::State::listening || s->unix_family != unix_path) {
      continue;
    }
    if (unix_path ? s->local.host() == at.host() : s->local.port() == at.port()) return s.get();
  }
  return nullptr;
}

// A Unix socket's bind: its path, unless a socket of the host has it.
int Network::bind_path(SimSocket& s, const SocketAddress& addr) noexcept {
  if (addr.family() != AF_UNIX) return -EINVAL;
  for (auto& [fd, o] : sockets_) {
    if (o->host == s.host && o->unix_family && o->state != SimSocket::State::fresh &&
        o->state != SimSocket::State::connected && o->local.host() == addr.host()) {
      return -EADDRINUSE;
    }
  }
  s.local = addr;
  s.state = SimSocket::State::bound;
  return 0;
}

int Network::bind(int fd, const SocketAddress& addr) noexcept {
  SimSocket* s = find(fd);
  if (s == nullptr) return -ENOTSOCK;
  if (s->state != SimSocket::State::fresh) return -EINVAL;
  if (s->unix_family) return bind_path(*s, addr);
  const std::string h = addr.host();
  if (h != "0.0.0.0" && h != "::" && h != "127.0.0.1" && h != "::1" && h != address(s->host)) {
    return -EADDRNOTAVAIL;
  }
  std::uint16_t port = addr.port();
  for (auto& [other_fd, o] : sockets_) {
    if (port != 0 && o->host == s->host && o.get() != s && o->state != SimSocket::State::fresh &&
        o->local.port() == port && o->state != SimSocket::State::connected && o->datagram == s->datagram) {
      return -EADDRINUSE;
    }
  }
  if (port == 0) port = ephemeral_port(s->host);
  try {
    s->local = SocketAddress::ip(h, port);
  } catch (...) {
    return -EINVAL;
  }
  s->state = SimSocket::State::bound;
  return 0;
}

int Network::listen(int fd, int backlog) noexcept {
  SimSocket* s = find(fd);
  if (s == nullptr) return -ENOTSOCK;
  if (s->state == SimSocket::State::fresh &&
      (s->unix_family || bind(fd, host_address(s->host, 0)) < 0)) {
    return -EINVAL;
  }
  if (s->state != SimSocket::State::bound && s->state != SimSocket::State::listening) return -EINVAL;
  s->state = SimSocket::State::listening;
  s->backlog = std::max(backlog, 1);
  return 0;
}

// It records the peer (binding to an ephemeral port first, as Linux does).
int Network::connect_datagram(int fd, const SocketAddress& addr) noexcept {
  SimSocket* s = find(fd);
  if (s == nullptr) return -ENOTSOCK;
  if (!s->datagram || s->state == SimSocket::State::closed) return -EINVAL;
  if (s->state == SimSocket::State::fresh && bind(fd, host_address(s->host, 0)) < 0) return -EINVAL;
  s->peer = addr;
  s->has_peer = true;
  return 0;
}

int Network::set_option(int fd, int level, int name, const void* value, socklen_t len) noexcept {
  SimSocket* s = find(fd);
  if (s == nullptr) return -ENOTSOCK;
  // SO_LINGER 0: close() resets the connection. Every other option is
  // accepted and has no effect on the simulated wire.
  if (level == SOL_SOCKET && name == SO_LINGER && len == sizeof(::linger)) {
    const auto* lg = static_cast<const ::linger*>(value);
    s->reset_on_close = lg->l_onoff != 0 && lg->l_linger == 0;
  }
  return 0;
}

int Network::address(int fd, bool peer, SocketAddress* out) noexcept {
  const SimSocket* s = find(fd);
  if (s == nullptr) return -ENOTSOCK;
  if (peer && s->state != SimSocket::State::connected && !s->has_peer) return -ENOTCONN;
  *out = peer ? s->peer : s->local;
  return 0;
}

int Network::close(int fd) noexcept {
  SimSocket* s = find(fd);
  if (s == nullptr) return ::close(fd) < 0 ? -errno : 0;  // not ours: a real fd
  drop_socket(*s);
  sockets_.erase(fd);
  ::close(fd);
  return 0;
}

// The socket goes: its peer hears a FIN (a reset if it closes with bytes
// unread or SO_LINGER 0, as Linux does), its listen queue's connections a
// reset, and bytes on their way to it a reset back (arrive()).
void Network::drop_socket(SimSocket& s) noexcept {
  const bool live = s.out != nullptr && s.out->to != nullptr && s.error == 0;
  try {
    if (live && (s.state == SimSocket::State::connecting || s.reset_on_close || s.unread() > 0)) {
      put(*s.out, Channel::Segment::reset);
    } else if (live && s.state == SimSocket::State::connected && !s.shut_wr) {
      put(*s.out, Channel::Segment::fin);
    }
  } catch (...) {
    // No memory for a segment: the peer hears nothing, as after a lost packet.
  }
  for (SimSocket* queued : s.accept_queue) {  // accepted by the network, never by the program
    queued->reset_on_close = true;
    drop_socket(*queued);
    ::close(queued->fd);
    sockets_.erase(queued->fd);
  }
  s.accept_queue.clear();
  if (s.out != nullptr) s.out->from = nullptr;
  if (s.peer_socket != nullptr) s.peer_socket->peer_socket = nullptr;
  for (auto& ch : channels_) {
    if (ch->to == &s) ch->to = nullptr;
  }
  s.state = SimSocket::State::closed;
}

// ---- bytes ------------------------------------------------------------------------

// n, or with short_io a count in [1, n] drawn from the seed.
std::size_t Network::some_of(std::size_t n) noexcept {
  if (!options_.short_io || n <= 1) return n;
  return std::uniform_int_distribution<std::size_t>(1, n)(rng_);
}

long Network::recv(SimSocket& s, char* buf, std::size_t len) noexcept {
  if (s.datagram) return recvfrom(s, buf, len, nullptr);  // connected or not, as recv(2)
  if (s.unread() > 0) {
    const std::size_t n = some_of(std::min(len, s.unread()));
    std::memcpy(buf, s.inbox.data() + s.inbox_off, n);
    s.inbox_off += n;
    if (s.inbox_off == s.inbox.size()) {
      s.inbox.clear();
      s.inbox_off = 0;
    }
    return static_cast<long>(n);
  }
  if (s.error != 0) return s.error;
  if (s.eof) return 0;
  if (s.state != SimSocket::State::connected) return -ENOTCONN;
  return -EAGAIN;
}

long Network::send(SimSocket& s, const char* data, std::size_t len) noexcept {
  if (s.datagram) return s.has_peer ? sendto(s, data, len, s.peer) : -EDESTADDRREQ;
  if (s.error != 0) return s.error;
  if (s.state != SimSocket::State::connected) return -ENOTCONN;
  if (s.shut_wr) return -EPIPE;
  const std::size_t used = s.in_flight + (s.peer_socket != nullptr ? s.peer_socket->unread() : 0);
  if (used >= options_.window) return -EAGAIN;
  const std::size_t n = some_of(std::min(len, options_.window - used));
  try {
    put(*s.out, Channel::Segment::data, std::string(data, n));
  } catch (...) {
    return -ENOMEM;
  }
  s.in_flight += n;
  return static_cast<long>(n);
}

long Network::accept(SimSocket& s, SocketAddress* peer) noexcept {
  if (s.state != SimSocket::State::listening) return -EINVAL;
  if (s.accept_queue.empty()) return -EAGAIN;
  SimSocket* c = s.accept_queue.front();
  s.accept_queue.pop_front();
  *peer = c->peer;
  return c->fd;
}

long Network::connect(SimSocket& s, const SocketAddress& to) noexcept {
  if (s.state == SimSocket::State::connecting) return -EALREADY;
  if (s.state == SimSocket::State::connected) return -EISCONN;
  if (s.state == SimSocket::State::listening || s.state == SimSocket::State::closed) return -EINVAL;
  // A Unix socket's peer is on its own host, and a path nobody listens at
  // is no file: connect(2) says so at once.
  if (s.unix_family && listener(s.host, to) == nullptr) return -ENOENT;
  try {
    if (s.state == SimSocket::State::fresh && !s.unix_family) {
      s.local = host_address(s.host, ephemeral_port(s.host));
    }
    s.peer = to;
    s.state = SimSocket::State::connecting;
    s.connect_result = 1;
    const int to_host = s.unix_family ? s.host : host_of(to);
    s.out = new_channel(&s, nullptr, s.host, to_host);  // its far end is known when the SYN lands
    put(*s.out, Channel::Segment::syn);
  } catch (...) {
    return -ENOMEM;
  }
  return -EINPROGRESS;
}

long Network::shutdown(SimSocket& s, int how) noexcept {
  if (s.state != SimSocket::State::connected) return -ENOTCONN;
  if (how == SHUT_RD) return 0;
  if (!s.shut_wr && s.error == 0) {
    try {
      put(*s.out, Channel::Segment::fin);
    } catch (...) {
      return -ENOMEM;
    }
  }
  s.shut_wr = true;
  return 0;
}

bool Network::readable(const SimSocket& s) const noexcept {
  if (s.datagram) return !s.datagrams.empty();
  if (s.state == SimSocket::State::listening) return !s.accept_queue.empty();
  return s.unread() > 0 || s.eof || s.error != 0;
}

bool Network::writable(const SimSocket& s) const noexcept {
  if (s.datagram) return true;  // a datagram is sent at once, or lost
  if (s.state == SimSocket::State::connecting) return s.connect_result != 1;
  if (s.state != SimSocket::State::connected) return s.error != 0;
  if (s.error != 0 || s.shut_wr) return true;
  const std::size_t used = s.in_flight + (s.peer_socket != nullptr ? s.peer_socket->unread() : 0);
  return used < options_.window;
}

}  // namespace corio::detail::sim
