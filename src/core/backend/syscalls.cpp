#include "syscalls.hpp"

#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <array>
#include <cerrno>

namespace corio::detail::sys {

namespace {
// Pieces per sendmsg(2): an HTTP/2 pass gathers a few dozen; more go in
// the caller's next call. On the stack, so kept well below IOV_MAX (1024).
constexpr std::size_t kMaxPieces = 64;

// Runs call until it is not interrupted; -errno on failure.
template <class F>
long retried(F call) noexcept {
  for (;;) {
    const long n = call();
    if (n >= 0) return n;
    if (errno != EINTR) return -errno;
  }
}
}  // namespace

long recv(int fd, std::span<char> buf) noexcept {
  return retried([&] { return ::recv(fd, buf.data(), buf.size(), 0); });
}

long peek(int fd) noexcept {
  char byte;
  return retried([&] { return ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT); });
}

long send(int fd, std::string_view data) noexcept {
  return retried([&] { return ::send(fd, data.data(), data.size(), MSG_NOSIGNAL); });
}

long sendv(int fd, std::span<const std::string_view> pieces) noexcept {
  std::array<iovec, kMaxPieces> iov;
  std::size_t count = 0;
  for (const std::string_view piece : pieces) {
    if (count == iov.size()) break;
    if (piece.empty()) continue;
    iov[count++] = {const_cast<char*>(piece.data()), piece.size()};
  }
  msghdr msg{};
  msg.msg_iov = iov.data();
  msg.msg_iovlen = count;
  return retried([&] { return ::sendmsg(fd, &msg, MSG_NOSIGNAL); });
}

long accept(int fd, SocketAddress* peer) noexcept {
  for (;;) {
    socklen_t len = SocketAddress::capacity();
    const int n = ::accept4(fd, peer->data(), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (n >= 0) {
      peer->resize(len);
      return n;
    }
    if (errno != EINTR && errno != ECONNABORTED) return -errno;
  }
}

long connect(int fd, const SocketAddress& addr) noexcept {
  if (::connect(fd, addr.data(), addr.size()) == 0) return 0;
  // Interrupted, the connection still goes on in the background (POSIX).
  return errno == EINTR ? -EINPROGRESS : -errno;
}

long connect_result(int fd) noexcept {
  int err = 0;
  socklen_t len = sizeof err;
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0) return -errno;
  return -err;
}

long recvfrom(int fd, std::span<char> buf, SocketAddress* from) noexcept {
  for (;;) {
    socklen_t len = SocketAddress::capacity();
    const ssize_t n = ::recvfrom(fd, buf.data(), buf.size(), 0, from->data(), &len);
    if (n >= 0) {
      from->resize(len);
      return n;
    }
    if (errno != EINTR) return -errno;
  }
}

long sendto(int fd, std::string_view data, const SocketAddress& to) noexcept {
  return retried(
      [&] { return ::sendto(fd, data.data(), data.size(), MSG_NOSIGNAL, to.data(), to.size()); });
}

long shutdown(int fd, int how) noexcept {
  const long rc = retried([&] { return static_cast<long>(::shutdown(fd, how)); });
  return rc == -ENOTCONN ? 0 : rc;
}

long read(int fd, std::span<char> buf) noexcept {
  return retried([&] { return ::read(fd, buf.data(), buf.size()); });
}

long write(int fd, std::string_view data) noexcept {
  return retried([&] { return ::write(fd, data.data(), data.size()); });
}

}  // namespace corio::detail::sys
