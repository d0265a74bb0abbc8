// socket_endpoints.hpp. Addresses are written as SocketAddress::to_string
// writes them ("127.0.0.1:8080", "[::1]:8080"); Unix ones get a "unix:"
// prefix, since a bare path or an empty name would not say what it is: a
// socketpair's ends and an accepted client's are unnamed, an abstract name
// starts with '@' (as ss(8) writes it).
#include <sys/socket.h>
#include <sys/un.h>

#include <cstddef>
#include <string>

#include <corio/socket.hpp>

#include "socket_endpoints.hpp"

namespace corio::detail {
namespace {

std::string unix_name(const SocketAddress& addr) {
  const auto* un = reinterpret_cast<const sockaddr_un*>(addr.data());
  const std::size_t path_len =
      addr.size() > offsetof(sockaddr_un, sun_path) ? addr.size() - offsetof(sockaddr_un, sun_path) : 0;
  if (path_len == 0) return "unix:(unnamed)";
  if (un->sun_path[0] == '\0') return "unix:@" + std::string(un->sun_path + 1, path_len - 1);
  return "unix:" + addr.host();
}

std::string name_of(const SocketAddress& addr) {
  return addr.family() == AF_UNIX ? unix_name(addr) : addr.to_string();
}

// getpeername or getsockname into a name; "" when it fails (ENOTCONN for
// the peer of a listening or unconnected socket, ENOTSOCK for a pipe).
template <int (*Get)(int, sockaddr*, socklen_t*)>
std::string address_of(int fd) {
  SocketAddress addr;
  socklen_t len = SocketAddress::capacity();
  if (Get(fd, addr.data(), &len) != 0) return {};
  addr.resize(len);
  return name_of(addr);
}

}  // namespace

void describe_socket_endpoints(int fd, AwaitedObject& a) {
  a.local = address_of<::getsockname>(fd);
  if (a.local.empty()) return;  // not a socket
  a.peer = address_of<::getpeername>(fd);
  int listening = 0;
  socklen_t len = sizeof listening;
  a.listening = ::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) == 0 && listening;
  ucred cred{};
  len = sizeof cred;
  if (a.local.starts_with("unix:") && !a.peer.empty() &&
      ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.pid > 0) {
    a.peer_pid = cred.pid;
  }
}

}  // namespace corio::detail
