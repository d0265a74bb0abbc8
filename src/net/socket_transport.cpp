// SocketTransport: the streams' transport over a socket (see transport.hpp).
#include <netinet/in.h>
#include <netinet/tcp.h>

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

std::optional<std::size_t> Transport::try_read(std::span<char> /*buf*/) {
  throw RuntimeError("try_read() on a transport that does not try reads");
}

IoWait Transport::readable() {
  throw RuntimeError("readable() on a transport that does not try reads");
}

std::optional<std::string_view> Transport::try_read_lent() {
  throw RuntimeError("try_read_lent() on a transport that does not lend");
}

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
  return loop_.io().try_send(sock_, data);
}

Coro<void> SocketTransport::wait_writable() { co_await loop_.wait_writable(sock_); }

}  // namespace corio::detail
