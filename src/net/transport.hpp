// The seam between the streams and what carries their bytes.
//
// StreamReader and StreamWriter never touch a file descriptor: they read and
// write through a Transport. SocketTransport is over the loop's socket
// operations; TlsTransport (net/tls.hpp) wraps another transport, as
// asyncio's SSL transport sits under the same StreamReaderProtocol.
//
// The write side is "try, then wait" rather than one awaitable write:
// StreamWriter::write() must never suspend, so it needs an attempt that
// returns at once; only the background flusher waits.
#pragma once

#include <netinet/in.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <corio/coro.hpp>
#include <corio/event_loop.hpp>
#include <corio/socket.hpp>

namespace corio::detail {

class Transport {
 public:
  virtual ~Transport() = default;

  // Reads what is available into buf, waiting until something is; 0 at
  // EOF. At most one read at a time. OS errors are std::system_error.
  virtual Coro<std::size_t> read_some(std::span<char> buf) = 0;
  // The same read in two steps, where the transport can (tries_reads(); the
  // answer never changes): try_read() reads what is there into buf (0 at
  // EOF), or returns nullopt when nothing is: await readable(), then try
  // again. A reader that waits this way adds no coroutine frame of its own
  // per read: the streams' hot path. OS errors are std::system_error.
  virtual bool tries_reads() const noexcept { return false; }
  virtual std::optional<std::size_t> try_read(std::span<char> buf);
  virtual IoWait readable();
  // A read without a copy, where the bytes already sit in the loop's buffers
  // (the io_uring backend's): lends() says whether this transport can (the
  // answer never changes; only a transport that tries_reads()); try_read_lent()
  // then returns a view of the bytes ("" at EOF), valid until consume_lent()
  // takes some of them, which the caller does in the same step, or nullopt
  // when none have come yet, as try_read(). What it does not take stays for
  // the next read.
  virtual bool lends() { return false; }
  virtual std::optional<std::string_view> try_read_lent();
  virtual void consume_lent(std::size_t /*n*/) noexcept {}
  // Sends what can go without waiting; returns how much went (0: none could).
  virtual std::size_t try_write(std::string_view data) = 0;
  // Waits until try_write can take more. Only after it took less than asked,
  // or while unsent() is not 0 (wait_writable then returns once it is).
  virtual Coro<void> wait_writable() = 0;
  // Bytes try_write took that are not in the OS yet (the io_uring backend's
  // send queue): whoever writes to fileno() itself waits for them first.
  virtual std::size_t unsent() const noexcept { return 0; }
  // Half-close: the peer reads EOF; reading goes on.
  virtual void shutdown_write() = 0;
  // Closes at once; a read or write waiting on the transport wakes with
  // std::system_error(EBADF). Idempotent.
  virtual void close() noexcept = 0;
  // What the protocol says before closing (TLS: close_notify, then the
  // peer's, within a timeout). The connection awaits it once its writer is
  // closed and flushed, then calls close() however it ended. An empty Coro
  // (the default): nothing to say, close() at once.
  virtual Coro<void> goodbye() { return {}; }
  // Protocol details for StreamWriter::get_extra_info ("" for a name the
  // transport does not know; TLS knows "ssl_version", "cipher", ...).
  virtual std::string extra_info(std::string_view /*name*/) const { return {}; }

  // Both known at creation (empty when the OS has none: an unnamed Unix peer).
  virtual const SocketAddress& peer_address() const noexcept = 0;
  virtual const SocketAddress& local_address() const noexcept = 0;
  // The underlying socket's descriptor, -1 once closed (for socket options).
  virtual int fileno() const noexcept = 0;
};

class SocketTransport final : public Transport {
 public:
  // Takes a connected, non-blocking socket. TCP sockets get TCP_NODELAY, as
  // asyncio sets it on every TCP transport: the writer buffers already.
  SocketTransport(EventLoop& loop, Socket sock);

  Coro<std::size_t> read_some(std::span<char> buf) override;
  bool tries_reads() const noexcept override { return true; }
  std::optional<std::size_t> try_read(std::span<char> buf) override {
    return loop_.io().try_recv_into(sock_, buf);
  }
  IoWait readable() override { return loop_.wait_readable(sock_); }
  bool lends() override { return loop_.io().lends_recv(sock_); }
  std::optional<std::string_view> try_read_lent() override {
    return loop_.io().try_recv_lent(sock_);
  }
  void consume_lent(std::size_t n) noexcept override { loop_.io().consume_lent(sock_, n); }
  std::size_t try_write(std::string_view data) override;
  Coro<void> wait_writable() override;
  std::size_t unsent() const noexcept override { return loop_.io().unsent(sock_); }
  void shutdown_write() override { sock_.shutdown(SHUT_WR); }
  void close() noexcept override { sock_.close(); }
  const SocketAddress& peer_address() const noexcept override { return names().first; }
  const SocketAddress& local_address() const noexcept override { return names().second; }
  int fileno() const noexcept override { return sock_.fd(); }

 private:
  // An IP address in the 28 bytes it needs, not a SocketAddress's 136: every
  // connection keeps both, and they are rarely asked for. The first ask
  // makes the SocketAddress pair; other families (a Unix address, up to 110
  // bytes) have it from the start. The length follows from the family (none:
  // empty), so none is kept.
  struct PackedAddress {
    sockaddr_in6 bytes;
    socklen_t len() const noexcept;
  };
  using Names = std::pair<SocketAddress, SocketAddress>;
  const Names& names() const;

  EventLoop& loop_;
  Socket sock_;
  PackedAddress peer_{};
  PackedAddress local_{};
  mutable std::unique_ptr<Names> names_;
};

}  // namespace corio::detail
