// connect_read_pipe / connect_write_pipe (see pipe_streams.hpp): a
// non-blocking duplicate of the caller's fd under a PipeTransport, which
// puts the description's flags back when it closes. In a simulation's
// program (detail/process_system.hpp) its standard streams are the pipes
// its parent made, simulated: the transport takes that end instead.
#include <corio/pipe_streams.hpp>

#include <fcntl.h>

#include <memory>

#include <corio/detail/os_error.hpp>
#include <corio/detail/process_system.hpp>
#include <corio/event_loop.hpp>

#include "net/connection.hpp"
#include "net/pipe_transport.hpp"

namespace corio {

namespace {

std::pair<StreamReader, StreamWriter> streams_over(int fd, std::size_t limit) {
  if (detail::ProcessSystem* sys = detail::process_system()) {
    if (std::optional<Socket> end = sys->standard_stream(fd)) {
      return detail::make_streams(
          std::make_unique<detail::PipeTransport>(get_running_loop(), std::move(*end)), limit);
    }
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0) detail::throw_errno(errno, "fcntl(F_GETFL)");
  Socket dup(::fcntl(fd, F_DUPFD_CLOEXEC, 0));
  if (!dup) detail::throw_errno(errno, "fcntl(F_DUPFD_CLOEXEC)");
  if (!(flags & O_NONBLOCK) && ::fcntl(dup.fd(), F_SETFL, flags | O_NONBLOCK) < 0) {
    detail::throw_errno(errno, "fcntl(F_SETFL)");
  }
  return detail::make_streams(
      std::make_unique<detail::PipeTransport>(get_running_loop(), std::move(dup), flags), limit);
}

}  // namespace

StreamReader connect_read_pipe(int fd, std::size_t limit) { return streams_over(fd, limit).first; }

StreamWriter connect_write_pipe(int fd) { return streams_over(fd, kDefaultStreamLimit).second; }

}  // namespace corio
