// PipeTransport: the streams' transport over a pipe end (see
// pipe_transport.hpp). The socket transport's shape, on the loop's
// operations for fds that are not sockets (read(2) and write(2) on both
// backends): try, and when it would block, wait for the fd's next edge.
#include "net/pipe_transport.hpp"

#include <fcntl.h>

namespace corio::detail {

Coro<void> PipeTransport::wait_writable() { co_await loop_.wait_writable(fd_); }

void PipeTransport::close() noexcept {
  if (restore_flags_ >= 0 && fd_) (void)::fcntl(fd_.fd(), F_SETFL, restore_flags_);
  fd_.close();
}

}  // namespace corio::detail
