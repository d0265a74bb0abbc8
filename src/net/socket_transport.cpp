// SocketTransport: the streams' transport over a socket (see transport.hpp).
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <cstring>
#include <system_error>

#include "net/transport.hpp"

namespace corio::detail {

namespace {
// `known`, or else the OS's. An address the OS may not have (an unnamed Unix
// peer, a peer already gone) is left empty rather than failing the
// connection.
template <class F>
SocketAddress known_or_asked(const SocketAddress& known, F ask) noexcept {
  if (known.size() > 0) return known;
  try {
    return ask();
  } catch (const std::system_error&) {
    return {};
  }
}
bool packs(const SocketAddress& a) noexcept {
  return a.size() == 0 || (a.family() == AF_INET && a.size() == sizeof(sockaddr_in)) ||
         (a.family() == AF_INET6 && a.size() == sizeof(sockaddr_in6));
}
// A transparent proxy's listener (IP_TRANSPARENT): its connections' local
// addresses are the ones their peers asked for, not its own.
bool transparent(const Socket& listener, int level, int name) noexcept {
  int on = 0;
  socklen_t len = sizeof on;
  return ::getsockopt(listener.fd(), level, name, &on, &len) == 0 && on != 0;
}
}  // namespace

SocketAddress accepted_local(const Socket& listener, const SocketAddress& bound) noexcept {
  if (bound.family() == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(bound.data());
    const bool any = v4->sin_addr.s_addr == htonl(INADDR_ANY);
    if (!any && !transparent(listener, SOL_IP, IP_TRANSPARENT)) return bound;
  } else if (bound.family() == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(bound.data());
    if (!IN6_IS_ADDR_UNSPECIFIED(&v6->sin6_addr) && v6->sin6_scope_id == 0 &&
        !transparent(listener, SOL_IPV6, IPV6_TRANSPARENT)) {
      return bound;
    }
  }
  return {};
}

std::optional<std::string_view> Transport::try_read_lent() {
  throw RuntimeError("try_read_lent() on a transport that does not lend");
}

void Transport::interrupt_read(EventLoop& loop) noexcept {
  if (const int fd = fileno(); fd >= 0) loop.io().interrupt_read(fd);
}

// One piece after another, for transports with no gathered send (pipes,
// another connection's streams).
std::size_t Transport::try_writev(std::span<const std::string_view> pieces) {
  std::size_t total = 0;
  for (const std::string_view piece : pieces) {
    if (piece.empty()) continue;
    const std::size_t n = try_write(piece);
    total += n;
    if (n < piece.size()) break;
  }
  return total;
}

SocketTransport::SocketTransport(EventLoop& loop, Socket sock, const SocketAddress& known_peer,
                                 const SocketAddress& known_local)
    : loop_(loop), sock_(std::move(sock)) {
  const SocketAddress peer = known_or_asked(known_peer, [this] { return sock_.peer_address(); });
  const SocketAddress local = known_or_asked(known_local, [this] { return sock_.local_address(); });
  if (packs(peer) && packs(local)) {
    std::memcpy(&peer_.bytes, peer.data(), peer.size());
    std::memcpy(&local_.bytes, local.data(), local.size());
  } else {
    names_ = std::make_unique<Names>(peer, local);
  }
  if (local.family() == AF_INET || local.family() == AF_INET6) {
    try {
      sock_.set_option(IPPROTO_TCP, TCP_NODELAY, 1);
    } catch (const std::system_error&) {
      // Only latency is at stake.
    }
  }
}

socklen_t SocketTransport::PackedAddress::len() const noexcept {
  switch (bytes.sin6_family) {
    case AF_INET: return sizeof(sockaddr_in);
    case AF_INET6: return sizeof(sockaddr_in6);
    default: return 0;
  }
}

const SocketTransport::Names& SocketTransport::names() const {
  if (!names_) {
    const auto unpack = [](const PackedAddress& a) {
      return a.len() == 0 ? SocketAddress()
                          : SocketAddress(reinterpret_cast<const sockaddr*>(&a.bytes), a.len());
    };
    names_ = std::make_unique<Names>(unpack(peer_), unpack(local_));
  }
  return *names_;
}

std::size_t SocketTransport::try_write(std::string_view data) {
  return loop_.io().try_send(sock_, data);
}

Coro<void> SocketTransport::wait_writable() { co_await loop_.wait_writable(sock_); }

}  // namespace corio::detail
