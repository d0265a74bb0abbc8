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
  // A duplicate of someone else's fd: the file description's status flags
  // (O_NONBLOCK, which the duplicate set) are restored when it closes.
  PipeTransport(EventLoop& loop, Socket pipe_end, int restore_flags)
      : loop_(loop), fd_(std::move(pipe_end)), restore_flags_(restore_flags) {}
  ~PipeTransport() override { close(); }

  // The fd is attached to the loop at its first wait: a regular file (stdin
  // redirected from one) never waits, and epoll refuses it.
  std::optional<std::size_t> try_read(std::span<char> buf) override {
    return loop_.io().try_read(fd_.fd(), buf);
  }
  IoWait readable() override { return loop_.wait_readable(fd_); }
  // EPIPE (the child closed its stdin or exited) is a std::system_error, as
  // on a socket; never SIGPIPE.
  std::size_t try_write(std::string_view data) override {
    return loop_.io().try_write(fd_.fd(), data);
  }
  Coro<void> wait_writable() override;
  void shutdown_write() override { close(); }
  void close() noexcept override;
  // A pipe has no addresses.
  const SocketAddress& peer_address() const noexcept override { return no_address_; }
  const SocketAddress& local_address() const noexcept override { return no_address_; }
  int fileno() const noexcept override { return fd_.fd(); }

 private:
  EventLoop& loop_;
  Socket fd_;
  int restore_flags_ = -1;  // -1: the pipe is ours, nothing to restore
  SocketAddress no_address_;
};

}  // namespace corio::detail
