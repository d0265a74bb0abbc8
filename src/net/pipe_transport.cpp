// PipeTransport: the streams' transport over a pipe end (see
// pipe_transport.hpp). The socket transport's shape, with read(2) and
// write(2) in place of recv and send: try the syscall, and on EAGAIN wait
// for the fd's next edge.
#include "net/pipe_transport.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include <corio/detail/os_error.hpp>

namespace corio::detail {

Coro<std::size_t> PipeTransport::read_some(std::span<char> buf) {
  for (;;) {
    const ssize_t n = ::read(fd_.fd(), buf.data(), buf.size());
    if (n >= 0) co_return static_cast<std::size_t>(n);
    if (errno == EINTR) continue;
    if (!would_block(errno)) throw_errno(errno, "read");
    co_await loop_.wait_readable(fd_);
  }
}

std::size_t PipeTransport::try_write(std::string_view data) {
  for (;;) {
    // Pipes have no MSG_NOSIGNAL: a reader that is gone raises SIGPIPE,
    // which every EventLoop set to SIG_IGN (unless the program handles it
    // itself, see ignore_sigpipe_once in the core), so this is EPIPE.
    const ssize_t n = ::write(fd_.fd(), data.data(), data.size());
    if (n >= 0) return static_cast<std::size_t>(n);
    if (errno == EINTR) continue;
    if (would_block(errno)) return 0;
    throw_errno(errno, "write");
  }
}

Coro<void> PipeTransport::wait_writable() { co_await loop_.wait_writable(fd_); }

void PipeTransport::close() noexcept {
  if (restore_flags_ >= 0 && fd_) (void)::fcntl(fd_.fd(), F_SETFL, restore_flags_);
  fd_.close();
}

}  // namespace corio::detail
