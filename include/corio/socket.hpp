/// \file
/// corio::Socket and corio::SocketAddress: a non-blocking socket owned by RAII,
/// and an address of any family (IPv4, IPv6, Unix). The asynchronous
/// operations on them are the loop's sock_* methods (event_loop.hpp), as in
/// asyncio: `co_await loop.sock_recv(sock, 4096)`.
///
/// OS errors are std::system_error with the errno kept (ECONNREFUSED,
/// ECONNRESET, EPIPE, ...), as DESIGN.md asks.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace corio {

class EventLoop;
namespace detail {
class LoopIo;
}

/// An IPv4, IPv6 or Unix socket address.
class SocketAddress {
 public:
  SocketAddress() noexcept = default;
  /// A copy of the len bytes at addr.
  SocketAddress(const sockaddr* addr, socklen_t len);
  /// A numeric IPv4 or IPv6 address ("127.0.0.1", "::1"); ValueError otherwise
  /// (names go through getaddrinfo).
  static SocketAddress ip(std::string_view numeric_host, std::uint16_t port);
  /// A Unix-domain path; ValueError if it does not fit sun_path.
  static SocketAddress unix_path(std::string_view path);

  /// AF_INET, AF_INET6 or AF_UNIX (AF_UNSPEC when empty).
  int family() const noexcept { return storage_.ss_family; }
  /// The sockaddr, for system calls.
  const sockaddr* data() const noexcept { return reinterpret_cast<const sockaddr*>(&storage_); }
  /// The sockaddr, for system calls that fill it in (then resize()).
  sockaddr* data() noexcept { return reinterpret_cast<sockaddr*>(&storage_); }
  /// Its length in bytes.
  socklen_t size() const noexcept { return len_; }
  /// Sets the length, after a system call filled data() in.
  void resize(socklen_t len) noexcept { len_ = len; }
  /// The largest length: sizeof(sockaddr_storage).
  static constexpr socklen_t capacity() noexcept { return sizeof(sockaddr_storage); }

  /// "127.0.0.1", "::1", or the Unix path.
  std::string host() const;
  /// 0 for Unix addresses.
  std::uint16_t port() const noexcept;
  /// "127.0.0.1:8080", "[::1]:8080", or the Unix path.
  std::string to_string() const;

 private:
  sockaddr_storage storage_{};
  socklen_t len_ = 0;
};

/// A non-blocking socket, closed by its destructor (details at the top of socket.hpp).
class Socket {
 public:
  Socket() noexcept = default;
  /// Adopts fd, which must already be non-blocking.
  explicit Socket(int fd) noexcept : fd_(fd) {}
  /// socket(2) with SOCK_NONBLOCK | SOCK_CLOEXEC.
  static Socket create(int family, int type, int protocol = 0);
  /// Takes o's descriptor; o becomes empty.
  Socket(Socket&& o) noexcept;
  /// Closes its own descriptor, takes o's.
  Socket& operator=(Socket&& o) noexcept;
  ~Socket() { close(); }

  /// The descriptor (-1 when empty).
  int fd() const noexcept { return fd_; }
  /// A SOCK_STREAM socket made by create() or accepted from one (an adopted
  /// fd is not assumed to be: it only loses a read optimisation).
  bool is_stream() const noexcept { return stream_; }
  /// Whether it holds a descriptor.
  bool valid() const noexcept { return fd_ >= 0; }
  /// valid().
  explicit operator bool() const noexcept { return valid(); }
  /// Idempotent. A task waiting on the socket in the running loop gets
  /// std::system_error(EBADF).
  void close() noexcept;
  /// Gives up ownership of the fd without closing it.
  int release() noexcept;

  /// bind(2); std::system_error on failure.
  void bind(const SocketAddress& addr);
  /// listen(2); std::system_error on failure.
  void listen(int backlog = SOMAXCONN);
  /// setsockopt(2) with an int value; std::system_error on failure.
  void set_option(int level, int name, int value);
  /// shutdown(2): SHUT_RD, SHUT_WR or SHUT_RDWR.
  void shutdown(int how);
  /// getsockname(2).
  SocketAddress local_address() const;
  /// getpeername(2).
  SocketAddress peer_address() const;

 private:
  friend class EventLoop;
  friend class detail::LoopIo;
  // Registers the socket with loop's backend on its first wait there.
  void watch(EventLoop& loop);
  int fd_ = -1;
  EventLoop* watched_by_ = nullptr;  // dereferenced only while it runs, or is stopped, here
  bool stream_ = false;
};

}  // namespace corio
