// SocketTransport: the streams' transport over a connected socket, on the
// loop's socket operations (loop.io(), detail/loop_io.hpp). The I/O contract
// every transport follows is in <corio/detail/transport.hpp>.
#pragma once

#include <netinet/in.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <corio/coro.hpp>
#include <corio/detail/transport.hpp>
#include <corio/event_loop.hpp>
#include <corio/socket.hpp>

namespace corio::detail {

// The local address of every TCP connection `listener` (bound to `bound`)
// accepts: its own, unless that is a wildcard (the address the peer reached
// is the connection's), a scoped IPv6 one, or the listener is a transparent
// proxy's (IP_TRANSPARENT: the address the peer asked for); then empty, for
// the transport to ask of each. Unix listeners' are asked too.
SocketAddress accepted_local(const Socket& listener, const SocketAddress& bound) noexcept;

class SocketTransport final : public Transport {
 public:
  // Takes a connected, non-blocking socket. TCP sockets get TCP_NODELAY, as
  // asyncio sets it on every TCP transport: the writer buffers already.
  // `peer` and `local`: its names where the caller knows them already (an
  // accept's peer, the listener's address: server.cpp), so that a short
  // connection does not ask the kernel again; an empty one is asked.
  SocketTransport(EventLoop& loop, Socket sock, const SocketAddress& peer = {},
                  const SocketAddress& local = {});

  std::optional<std::size_t> try_read(std::span<char> buf) override {
    return loop_.io().try_recv_into(sock_, buf);
  }
  IoWait readable() override { return loop_.wait_readable(sock_); }
  bool lends() override { return loop_.io().lends_recv(sock_); }
  std::optional<std::string_view> try_read_lent() override {
    return loop_.io().try_recv_lent(sock_);
  }
  void consume_lent(std::size_t n) noexcept override { loop_.io().consume_lent(sock_, n); }
  std::size_t try_write(std::string_view data) override;
  std::size_t try_writev(std::span<const std::string_view> pieces) override {
    return loop_.io().try_sendv(sock_, pieces);
  }
  Coro<void> wait_writable() override;
  std::size_t unsent() const noexcept override { return loop_.io().unsent(sock_); }
  void shutdown_write() override { sock_.shutdown(SHUT_WR); }
  void close() noexcept override { sock_.close(); }
  const SocketAddress& peer_address() const noexcept override { return names().first; }
  const SocketAddress& local_address() const noexcept override { return names().second; }
  int fileno() const noexcept override { return sock_.fd(); }

 private:
  // An IP address in the 28 bytes it needs, not a SocketAddress's 136: every
  // connection keeps both, and they are rarely asked for. The first ask
  // makes the SocketAddress pair; other families (a Unix address, up to 110
  // bytes) have it from the start. The length follows from the family (none:
  // empty), so none is kept.
  struct PackedAddress {
    sockaddr_in6 bytes;
    socklen_t len() const noexcept;
  };
  using Names = std::pair<SocketAddress, SocketAddress>;
  const Names& names() const;

  EventLoop& loop_;
  Socket sock_;
  PackedAddress peer_{};
  PackedAddress local_{};
  mutable std::unique_ptr<Names> names_;
};

}  // namespace corio::detail
