// The OS's SocketSystem (see detail/socket_system.hpp): the syscalls.
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include <corio/detail/socket_system.hpp>

namespace corio::detail {

namespace {

int result(int rc) noexcept { return rc < 0 ? -errno : rc; }

class OsSockets final : public SocketSystem {
 public:
  int open(int family, int type, int protocol) noexcept override {
    return result(::socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, protocol));
  }
  int bind(int fd, const SocketAddress& addr) noexcept override {
    return result(::bind(fd, addr.data(), addr.size()));
  }
  int listen(int fd, int backlog) noexcept override { return result(::listen(fd, backlog)); }
  int connect_datagram(int fd, const SocketAddress& addr) noexcept override {
    return result(::connect(fd, addr.data(), addr.size()));
  }
  int set_option(int fd, int level, int name, const void* value, socklen_t len) noexcept override {
    return result(::setsockopt(fd, level, name, value, len));
  }
  int address(int fd, bool peer, SocketAddress* out) noexcept override {
    socklen_t len = SocketAddress::capacity();
    const int rc = peer ? ::getpeername(fd, out->data(), &len) : ::getsockname(fd, out->data(), &len);
    if (rc < 0) return -errno;
    out->resize(len);
    return 0;
  }
  int close(int fd) noexcept override { return result(::close(fd)); }
};

OsSockets os_sockets;
thread_local SocketSystem* current = nullptr;

}  // namespace

SocketSystem& socket_system() noexcept { return current != nullptr ? *current : os_sockets; }

SocketSystem* replace_socket_system(SocketSystem* s) noexcept {
  SocketSystem* old = current;
  current = s;
  return old;
}

}  // namespace corio::detail
