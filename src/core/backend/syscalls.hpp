// The non-blocking syscalls behind the backends' try_*() operations,
// written once: epoll makes all of them after readiness, a completion
// backend those it has no native operation for. Each retries EINTR and
// returns its result (>= 0) or -errno, never throws.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include <corio/socket.hpp>

namespace corio::detail::sys {

long recv(int fd, std::span<char> buf) noexcept;
long peek(int fd) noexcept;  // recv(MSG_PEEK) of one byte: 1, 0 at EOF, -errno
long send(int fd, std::string_view data) noexcept;  // MSG_NOSIGNAL: EPIPE, not SIGPIPE
// send's gathered form: sendmsg(2) of up to IOV_MAX pieces (the rest is left
// for the caller's next call, as a short send is).
long sendv(int fd, std::span<const std::string_view> pieces) noexcept;
// A connection that died in the backlog is skipped: the peer's problem.
long accept(int fd, SocketAddress* peer) noexcept;
long connect(int fd, const SocketAddress& addr) noexcept;  // -EINPROGRESS: wait writable
long connect_result(int fd) noexcept;                      // SO_ERROR, after writable
long recvfrom(int fd, std::span<char> buf, SocketAddress* from) noexcept;
long sendto(int fd, std::string_view data, const SocketAddress& to) noexcept;
long shutdown(int fd, int how) noexcept;  // not connected (any more) is no error
// Any fd, for the fds that are not sockets (a pipe, a terminal, a file).
long read(int fd, std::span<char> buf) noexcept;
// No MSG_NOSIGNAL for a pipe: a reader that is gone raises SIGPIPE, which
// every EventLoop set to SIG_IGN (unless the program handles it itself), so
// this is -EPIPE.
long write(int fd, std::string_view data) noexcept;

}  // namespace corio::detail::sys
