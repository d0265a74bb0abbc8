/// \file
/// corio::StreamWriter: asyncio.StreamWriter, the writing half of a
/// connection made by open_connection() or start_server() (streams.hpp).
///
/// A copyable handle to the connection's shared state, like StreamReader.
///
/// write() never suspends: with nothing buffered it sends at once; what the
/// socket does not take is buffered and sent by a background task that waits
/// for the socket (started when needed), so bytes go out even if nobody
/// calls drain(). drain() is the flow control: above the high-water mark
/// (default 64 KiB) it waits until the buffer is down to the low-water mark
/// (default 16 KiB), as asyncio's pause_writing/resume_writing.
///
/// Suspends: drain() while the buffer is above the marks; wait_writable()
/// until the buffer is empty or the socket has room; wait_closed() until the
/// transport is closed.
/// Resumed by: the background flusher (as the buffer drains, or when the
/// connection fails or closes).
///
/// Errors: a failed send (EPIPE, ECONNRESET, as std::system_error; never
/// SIGPIPE) is raised by drain() and wait_closed(); later writes are dropped,
/// as asyncio does. write() after close() or write_eof() is a RuntimeError.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include <corio/coro.hpp>
#include <corio/socket.hpp>
#include <corio/stream_reader.hpp>

namespace corio {

/// asyncio.StreamWriter: the writing half of a connection (details at the top of
/// stream_writer.hpp).
class StreamWriter {
 public:
  StreamWriter() noexcept = default;  ///< an empty handle: valid() is false
  /// A handle to a connection's writing side (open_connection and the others make one).
  explicit StreamWriter(detail::Ref<detail::Connection> c) noexcept : c_(std::move(c)) {}
  /// False for an empty handle.
  bool valid() const noexcept { return static_cast<bool>(c_); }

  /// Sends data, or buffers what the socket does not take now; never waits.
  void write(std::string_view data);
  /// asyncio's writelines(): write() of each piece in order, but gathered in
  /// one send where the transport can (sendmsg(2); one TLS write), so that
  /// pieces in separate buffers (a frame's header and its payload) need not
  /// be copied together first. Only what the socket does not take is copied.
  void writelines(std::span<const std::string_view> pieces);
  /// Returns at once unless the buffer is above the high-water mark; then
  /// waits until it is at or below the low-water mark. Throws the error the
  /// connection failed with (the reader's too, as asyncio), or
  /// std::system_error(ECONNRESET) if the transport was closed when it
  /// began; one that was waiting when the transport closed returns.
  Coro<void> drain();
  /// For code that writes to fileno() itself (sendfile(2), splice(2)), which
  /// must neither overtake buffered bytes nor spin on EAGAIN: while not
  /// is_flushed(), waits until every written byte is in the socket (then it
  /// has room: write again); else waits until the socket can take more (call it
  /// after such a write came back short or with EAGAIN: readiness is an
  /// edge, a socket with room already would not announce it). One waiter at
  /// a time, and no write() from elsewhere meanwhile. Throws as drain().
  Coro<void> wait_writable();

  /// True: every corio transport can half-close.
  bool can_write_eof() const noexcept { return true; }
  /// Half-close once the buffer is flushed: the peer reads EOF, this side can
  /// still read. Ignored after close().
  void write_eof();
  /// Stops writing; the buffer is flushed in the background, then the
  /// transport closes (a pending read then returns EOF); a TLS transport
  /// exchanges close_notify first, within ssl_shutdown_timeout. Idempotent.
  void close();
  /// Closes at once, dropping the buffer (asyncio's transport.abort()).
  void abort();
  /// After close() or abort(), and once a send failed (the peer is gone):
  /// asyncio's transport is closing after a fatal error too.
  bool is_closing() const noexcept;
  /// Until the transport is closed; throws the write error, if the
  /// connection failed (asyncio's wait_closed()).
  Coro<void> wait_closed();

  /// "peername" or "sockname" as text ("127.0.0.1:8080", "[::1]:80", a Unix
  /// path), or a TLS detail (ssl.hpp: "ssl_version", "cipher", ...); "" for
  /// an unknown name or an address the OS did not give.
  std::string get_extra_info(std::string_view name) const;
  /// The peer's address (empty if the OS did not give one).
  SocketAddress peername() const noexcept;
  /// This side's address.
  SocketAddress sockname() const noexcept;
  /// The socket's descriptor, for options corio has no call for
  /// (asyncio's get_extra_info("socket")); -1 once closed.
  int fileno() const noexcept;

  /// asyncio's transport.set_write_buffer_limits: high defaults to 64 KiB (or
  /// 4 * low), low to high / 4. ValueError unless high >= low.
  void set_write_buffer_limits(std::optional<std::size_t> high = {},
                               std::optional<std::size_t> low = {});
  std::pair<std::size_t, std::size_t> get_write_buffer_limits() const noexcept;  ///< {low, high}
  /// How many bytes wait in the buffer.
  std::size_t get_write_buffer_size() const noexcept;
  /// Everything written is in the OS: none in the buffer, none in the loop's
  /// send queue (the io_uring backend keeps one). Code that writes to
  /// fileno() itself waits with wait_writable() until it is, or overtakes.
  bool is_flushed() const noexcept;

 private:
  detail::Ref<detail::Connection> c_;
};

}  // namespace corio
