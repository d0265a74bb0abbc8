// SocketTransport: the streams' transport over a socket (see transport.hpp).
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <cstring>
#include <system_error>

#include "net/transport.hpp"

namespace corio::detail {

namespace {
// An address the OS may not have (an unnamed Unix peer, a peer already gone)
// is left empty rather than failing the connection.
template <class F>
SocketAddress address_or_empty(F get) noexcept {
  try {
    return get();
  } catch (const std::system_error&) {
    return {};
  }
}
bool packs(const SocketAddress& a) noexcept {
  return a.size() == 0 || (a.family() == AF_INET && a.size() == sizeof(sockaddr_in)) ||
         (a.family() == AF_INET6 && a.size() == sizeof(sockaddr_in6));
}
}  // namespace

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

SocketTransport::SocketTransport(EventLoop& loop, Socket sock)
    : loop_(loop), sock_(std::move(sock)) {
  const SocketAddress peer = address_or_empty([this] { return sock_.peer_address(); });
  const SocketAddress local = address_or_empty([this] { return sock_.local_address(); });
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
