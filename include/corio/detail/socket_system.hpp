// The calls that make, describe and close a socket (socket, bind, listen, a
// datagram's connect, options, names, close), behind one interface, so that a
// simulated network (corio::testing::Simulation) can stand in for the OS's.
// What moves bytes or waits goes through the backend seam instead
// (src/core/backend/backend.hpp); together the two are all of corio's socket
// I/O. None of these is on a per-byte path: one virtual call per socket made.
#pragma once

#include <sys/socket.h>

#include <optional>
#include <string>

#include <corio/socket.hpp>

namespace corio::detail {

class SocketSystem {
 public:
  virtual ~SocketSystem() = default;
  // Each returns what its syscall would: an fd or 0, else -errno.
  virtual int open(int family, int type, int protocol) noexcept = 0;  // non-blocking, close-on-exec
  virtual int bind(int fd, const SocketAddress& addr) noexcept = 0;
  virtual int listen(int fd, int backlog) noexcept = 0;
  // A datagram socket's connect(): it records the peer and never blocks.
  virtual int connect_datagram(int fd, const SocketAddress& addr) noexcept = 0;
  virtual int set_option(int fd, int level, int name, const void* value, socklen_t len) noexcept = 0;
  // getsockname(2), or getpeername(2) when peer.
  virtual int address(int fd, bool peer, SocketAddress* out) noexcept = 0;
  virtual int close(int fd) noexcept = 0;
  // A host name this system answers for itself: its numeric address, "" if
  // it knows there is no such host, or nullopt: ask the resolver (the OS).
  virtual std::optional<std::string> resolve(const std::string& /*name*/) { return std::nullopt; }
};

// This thread's: the OS's, unless a simulation stands in.
SocketSystem& socket_system() noexcept;
// Makes s this thread's (null: the OS's again); returns the one it replaces.
SocketSystem* replace_socket_system(SocketSystem* s) noexcept;

}  // namespace corio::detail
