/// \file
/// corio::DatagramSocket: UDP the awaitable way, in place of asyncio's
/// create_datagram_endpoint protocol callbacks.
///
/// <!-- doc: body (corio::SocketAddress server) -->
///     auto sock = corio::DatagramSocket::bind(corio::SocketAddress::ip("127.0.0.1", 0));
///     co_await sock.sendto("ping", server);
///     auto [data, from] = co_await sock.recvfrom();
///
/// Suspends: recvfrom()/recv() until a datagram arrives; sendto()/send() only
/// while the socket's send buffer is full.
/// Resumed by: the loop, on the socket's readiness. Each datagram is received
/// whole up to max_bytes (the rest of a longer one is dropped, as recvfrom(2)).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include <corio/event_loop.hpp>
#include <corio/socket.hpp>

namespace corio {

/// A UDP socket with awaitable sends and receives (details at the top of datagram.hpp).
class DatagramSocket {
 public:
  /// 64 KiB: the largest UDP payload.
  static constexpr std::size_t kMaxDatagram = 65536;

  DatagramSocket() = default;
  /// A socket bound to local (port 0: any free port).
  static DatagramSocket bind(const SocketAddress& local);
  /// A socket bound to an ephemeral port, connected to remote: send() and
  /// recv() then talk to remote only, and ICMP errors (ECONNREFUSED) surface.
  static DatagramSocket connect(const SocketAddress& remote);

  /// Sends one datagram to `to`; returns the bytes sent.
  Coro<std::size_t> sendto(std::string_view data, SocketAddress to);
  /// The next datagram (at most max_bytes) and who sent it.
  Coro<std::pair<std::string, SocketAddress>> recvfrom(std::size_t max_bytes = kMaxDatagram);
  /// Connected sockets only.
  Coro<std::size_t> send(std::string_view data);
  /// The next datagram from the connected peer.
  Coro<std::string> recv(std::size_t max_bytes = kMaxDatagram);

  /// The address bound (with the port picked for port 0).
  SocketAddress local_address() const { return sock_.local_address(); }
  /// The socket underneath, for options corio has no call for.
  Socket& socket() noexcept { return sock_; }
  /// Closes the socket; idempotent.
  void close() noexcept { sock_.close(); }

 private:
  explicit DatagramSocket(Socket s) noexcept : sock_(std::move(s)) {}
  Socket sock_;
};

}  // namespace corio
