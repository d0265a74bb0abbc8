// The seam between the streams and what carries their bytes.
//
// StreamReader and StreamWriter never touch a file descriptor: they read and
// write through a Transport. SocketTransport (src/net/transport.hpp) is over
// the loop's socket operations and PipeTransport (net/pipe_transport.hpp)
// over its operations on other fds (loop.io(), detail/loop_io.hpp); TlsTransport (net/tls.hpp)
// wraps another transport, as asyncio's SSL transport sits under the same
// StreamReaderProtocol, and StreamTransport (net/stream_transport.hpp) an
// open connection's streams (start_tls).
//
// The one I/O contract, the same for every transport: each direction is
// "try, then wait", so that StreamWriter::write() never suspends and a
// waiting reader adds no coroutine frame of the transport's.
//   1. Try a read: try_read(buf) reads what is there into buf (0 at EOF),
//      or returns nullopt when nothing is. It never waits.
//   2. Await readability: after a nullopt, co_await readable(), then try
//      again. The wait is the loop's on the fd underneath (one reader per
//      fd); it may end with nothing to read yet (a TLS record still partial),
//      never the other way round.
//   3. Try a write: try_write(data) takes what can go now and says how much
//      (0: none could). What it took goes out in order. try_writev(pieces)
//      is the same for pieces in order (their total taken, stopping inside
//      the first piece not taken whole), in one send where it can.
//   4. Await writability: after try_write took less than asked, or while
//      unsent() is not 0, co_await wait_writable() (it then returns once
//      unsent() is 0). One writer at a time.
//   5. Lending: where the bytes already sit in the loop's buffers (the
//      io_uring backend's), try_read_lent() is 1 without the copy, with 2's
//      wait; consume_lent() takes what the caller used, in the same step.
//   6. Ending: shutdown_write() half-closes; goodbye() is what the protocol
//      says before closing (TLS close_notify); close() closes at once and
//      wakes the waits of 2 and 4 with EBADF (the streams read that as EOF
//      when they closed it themselves).
//   7. Errors are std::system_error with the errno kept, thrown by the try
//      or the wait that met them.
//   8. interrupt_read() wakes a waiting read at once, as an edge would (a
//      spurious wake: the reader tries again): by default the loop's fd
//      wait; a transport whose readable() waits in a WaitSlot of its own
//      (detail/io_wait.hpp) fires that slot.
//
// This header is the net layer's seam for the layers above it: a transport
// they define (an HTTP/2 stream, src/http/h2/) becomes streams through
// make_streams(), and StreamReader/StreamWriter never know the difference.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include <corio/coro.hpp>
#include <corio/detail/io_wait.hpp>
#include <corio/socket.hpp>

namespace corio {
class EventLoop;
class StreamReader;
class StreamWriter;
}  // namespace corio

namespace corio::detail {

// The contract's numbers are the list at the top.
class Transport {
 public:
  virtual ~Transport() = default;

  // 1 and 2. At most one read at a time.
  virtual std::optional<std::size_t> try_read(std::span<char> buf) = 0;
  virtual IoWait readable() = 0;
  // 5. lends() says whether try_read_lent() may be called (the answer never
  // changes). try_read_lent() returns a view of the bytes ("" at EOF), valid
  // until consume_lent() takes some of them, or nullopt as try_read(). What
  // consume_lent() does not take stays for the next read.
  virtual bool lends() { return false; }
  virtual std::optional<std::string_view> try_read_lent();
  virtual void consume_lent(std::size_t /*n*/) noexcept {}
  // 3 and 4. unsent(): bytes try_write took that are not in the OS yet (the
  // io_uring backend's send queue): whoever writes to fileno() itself waits
  // for them first.
  virtual std::size_t try_write(std::string_view data) = 0;
  virtual std::size_t try_writev(std::span<const std::string_view> pieces);
  virtual Coro<void> wait_writable() = 0;
  virtual std::size_t unsent() const noexcept { return 0; }
  // 6. Half-close: the peer reads EOF; reading goes on.
  virtual void shutdown_write() = 0;
  // 6. Idempotent.
  virtual void close() noexcept = 0;
  // 6. The connection awaits it once its writer is closed and flushed, then
  // calls close() however it ended. An empty Coro (the default): nothing to
  // say, close() at once.
  virtual Coro<void> goodbye() { return {}; }
  // Protocol details for StreamWriter::get_extra_info ("" for a name the
  // transport does not know; TLS knows "ssl_version", "cipher", ...).
  virtual std::string extra_info(std::string_view /*name*/) const { return {}; }

  // Both known at creation (empty when the OS has none: an unnamed Unix peer).
  virtual const SocketAddress& peer_address() const noexcept = 0;
  virtual const SocketAddress& local_address() const noexcept = 0;
  // The underlying descriptor, -1 once closed (for socket options), or when
  // there is none.
  virtual int fileno() const noexcept = 0;
  // 8. Wakes the reader's wait, if one is parked.
  virtual void interrupt_read(EventLoop& loop) noexcept;
};

// A connection over `transport` as a reader/writer pair (a new reference each).
std::pair<StreamReader, StreamWriter> make_streams(std::unique_ptr<Transport> transport,
                                                   std::size_t limit);

}  // namespace corio::detail
