// SocketTransport: the streams' transport over a socket (see transport.hpp).
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <cerrno>
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
}  // namespace

SocketTransport::SocketTransport(EventLoop& loop, Socket sock)
    : loop_(loop), sock_(std::move(sock)) {
  peer_ = address_or_empty([this] { return sock_.peer_address(); });
  local_ = address_or_empty([this] { return sock_.local_address(); });
  if (local_.family() == AF_INET || local_.family() == AF_INET6) {
    try {
      sock_.set_option(IPPROTO_TCP, TCP_NODELAY, 1);
    } catch (const std::system_error&) {
      // Only latency is at stake.
    }
  }
}

Coro<std::size_t> SocketTransport::read_some(std::span<char> buf) {
  return loop_.sock_recv_into(sock_, buf);
}

std::size_t SocketTransport::try_write(std::string_view data) {
  for (;;) {
    const ssize_t n = ::send(sock_.fd(), data.data(), data.size(), MSG_NOSIGNAL);
    if (n >= 0) return static_cast<std::size_t>(n);
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
    throw std::system_error(errno, std::generic_category(), "send");
  }
}

Coro<void> SocketTransport::wait_writable() { co_await loop_.wait_writable(sock_); }

}  // namespace corio::detail
