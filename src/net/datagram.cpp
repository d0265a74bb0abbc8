// DatagramSocket (see datagram.hpp): a thin shape over the loop's socket
// operations, which already do the waiting.
#include <netinet/in.h>

#include <cerrno>
#include <system_error>

#include <corio/datagram.hpp>
#include <corio/detail/socket_system.hpp>

namespace corio {

DatagramSocket DatagramSocket::bind(const SocketAddress& local) {
  Socket s = Socket::create(local.family(), SOCK_DGRAM);
  s.bind(local);
  return DatagramSocket(std::move(s));
}

DatagramSocket DatagramSocket::connect(const SocketAddress& remote) {
  Socket s = Socket::create(remote.family(), SOCK_DGRAM);
  // A UDP connect() only records the peer: it never blocks.
  if (const int rc = detail::socket_system().connect_datagram(s.fd(), remote); rc < 0) {
    throw std::system_error(-rc, std::generic_category(), "connect");
  }
  return DatagramSocket(std::move(s));
}

Coro<std::size_t> DatagramSocket::sendto(std::string_view data, SocketAddress to) {
  return get_running_loop().sock_sendto(sock_, data, to);
}

Coro<std::pair<std::string, SocketAddress>> DatagramSocket::recvfrom(std::size_t max_bytes) {
  return get_running_loop().sock_recvfrom(sock_, max_bytes);
}

// A datagram goes whole or not at all, so sendall sends it once.
Coro<std::size_t> DatagramSocket::send(std::string_view data) {
  co_await get_running_loop().sock_sendall(sock_, data);
  co_return data.size();
}

Coro<std::string> DatagramSocket::recv(std::size_t max_bytes) {
  return get_running_loop().sock_recv(sock_, max_bytes);
}

}  // namespace corio
