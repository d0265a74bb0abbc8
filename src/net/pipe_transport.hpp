// PipeTransport: the streams' transport over one end of a pipe (see
// transport.hpp), so a subprocess's stdin, stdout and stderr are the same
// StreamWriter and StreamReader a socket connection gives.
//
// A pipe end goes one way: the read end of a child's stdout or stderr only
// reads, the write end of its stdin only writes; the other half of the
// stream pair made over it is never handed out. A pipe has no half-close:
// shutdown_write() closes the write end, which the child reads as EOF.
#pragma once

#include "net/transport.hpp"
#include <corio/socket.hpp>

namespace corio::detail {

class PipeTransport final : public Transport {
 public:
  // Takes a non-blocking pipe end (Socket is the loop's RAII fd owner; the
  // loop's waits work on any fd epoll accepts).
  PipeTransport(EventLoop& loop, Socket pipe_end) : loop_(loop), fd_(std::move(pipe_end)) {}

  Coro<std::size_t> read_some(std::span<char> buf) override;
  // EPIPE (the child closed its stdin or exited) is a std::system_error, as
  // on a socket; never SIGPIPE.
  std::size_t try_write(std::string_view data) override;
  Coro<void> wait_writable() override;
  void shutdown_write() override { fd_.close(); }
  void close() noexcept override { fd_.close(); }
  // A pipe has no addresses.
  const SocketAddress& peer_address() const noexcept override { return no_address_; }
  const SocketAddress& local_address() const noexcept override { return no_address_; }
  int fileno() const noexcept override { return fd_.fd(); }

 private:
  EventLoop& loop_;
  Socket fd_;
  SocketAddress no_address_;
};

}  // namespace corio::detail
