// PipeTransport: the streams' transport over a pipe end (see
// pipe_transport.hpp). The socket transport's shape, with read(2) and
// write(2) in place of recv and send: try the syscall, and on EAGAIN wait
// for the fd's next edge.
#include "net/pipe_transport.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <ctime>
#include <system_error>

#include <corio/detail/os_error.hpp>

namespace corio::detail {

namespace {

// write(2) to a pipe nobody reads raises SIGPIPE, which kills the process
// unless it is handled or ignored, and pipes have no MSG_NOSIGNAL. Ignoring
// SIGPIPE process-wide (what Python and Rust do at startup) is the
// program's call, not a library's; so SIGPIPE is blocked in this thread
// for the write and, if the write raised it, taken back before unblocking
// (the kernel sends it to the writing thread). Two more syscalls per write:
// pipes to a child are not a hot path. A thread that blocks SIGPIPE itself
// keeps what it would have without corio: the signal stays pending.
ssize_t write_without_sigpipe(int fd, std::string_view data) {
  sigset_t sigpipe_only;
  sigemptyset(&sigpipe_only);
  sigaddset(&sigpipe_only, SIGPIPE);
  sigset_t saved;
  pthread_sigmask(SIG_BLOCK, &sigpipe_only, &saved);
  const ssize_t n = ::write(fd, data.data(), data.size());
  const int err = errno;
  if (n < 0 && err == EPIPE && !sigismember(&saved, SIGPIPE)) {
    const timespec no_wait{};
    while (sigtimedwait(&sigpipe_only, nullptr, &no_wait) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  errno = err;
  return n;
}

}  // namespace

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
    const ssize_t n = write_without_sigpipe(fd_.fd(), data);
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
