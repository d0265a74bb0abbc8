/// \file
/// corio::StreamReader: asyncio.StreamReader, the reading half of a
/// connection made by open_connection() or start_server() (streams.hpp).
///
/// A copyable handle to the connection's shared state (a plain, loop-affine
/// reference count). The connection closes when the last StreamReader and
/// StreamWriter handle of it are gone (after the writer's buffered bytes
/// went out).
///
/// Pull model: there is no background reader. A read takes what is buffered
/// and reads from the transport only when it needs more, 64 KiB at a time.
/// `limit` (default 64 KiB, asyncio's) bounds how far readline()/readuntil()
/// look for their separator.
///
/// Suspends: a read, until the transport has the bytes it needs (or EOF).
/// Resumed by: the loop, when the socket becomes readable. Cancelling a read
/// loses nothing: bytes already received stay buffered for the next read.
///
/// One read at a time: a second task reading while another waits gets
/// RuntimeError (as asyncio). An OS error (ECONNRESET, ...) is a
/// std::system_error with the errno kept, thrown by the read that met it and
/// by every later one. Reading after the writer closed the connection reads
/// EOF.
#pragma once

#include <coroutine>
#include <cstddef>
#include <exception>
#include <optional>
#include <string>
#include <string_view>

#include <corio/coro.hpp>
#include <corio/detail/intrusive.hpp>
#include <corio/detail/io_wait.hpp>

namespace corio {

class StreamReader;

namespace detail {
class Connection;
void add_ref(Connection* c) noexcept;
void release(Connection* c) noexcept;
/// For tests: the bytes of storage the connection's read and write buffers
/// hold (none while both are empty).
std::size_t buffer_storage(const StreamReader& r) noexcept;
/// For a transport over r's connection (start_tls): the wait for r's own
/// transport to become readable (the wait between two try_fill()s).
IoWait transport_readable(StreamReader& r);
// corio's own servers park an idle connection with no task: w goes in the
// slot of the socket under r's transport (a socket, TLS over one), where
// readable() would put a task's wait. Only after a try_fill() found nothing.
// False when r cannot be watched so: it has bytes, or is at EOF or closed.
// The edge takes w out; unwatch() takes it out before that.
bool watch_readable(StreamReader& r, IoWatch& w);
void unwatch(const StreamReader& r, IoWatch& w) noexcept;
// Wakes the task waiting for r's socket to be readable now, as an edge
// would (it tries its read again and finds nothing): for corio's servers,
// to end the wait of a connection they park.
void interrupt_wait(const StreamReader& r) noexcept;
}  // namespace detail

/// asyncio's streams._DEFAULT_LIMIT.
inline constexpr std::size_t kDefaultStreamLimit = 64 * 1024;

/// asyncio.StreamReader: the reading half of a connection (details at the top of
/// stream_reader.hpp).
class StreamReader {
 public:
  StreamReader() noexcept = default;  ///< an empty handle: valid() is false
  /// A handle to a connection's reading side (open_connection and the others make one).
  explicit StreamReader(detail::Ref<detail::Connection> c) noexcept : c_(std::move(c)) {}
  /// False for an empty handle.
  bool valid() const noexcept { return static_cast<bool>(c_); }

  /// n < 0: everything up to EOF. n > 0: at most n bytes, as soon as any are
  /// there; "" at EOF. n == 0: "".
  Coro<std::string> read(std::ptrdiff_t n = -1);
  /// Up to and including "\n"; at EOF, the partial line ("" when none).
  /// Past the limit: drops the line up to and including "\n" if it was found
  /// beyond the limit, else everything buffered, then throws
  /// LimitOverrunError (asyncio raises ValueError here; LimitOverrunError is
  /// one).
  Coro<std::string> readline();
  /// Exactly n bytes. At EOF first: IncompleteReadError with the bytes read
  /// so far (taken from the buffer) and expected == n.
  Coro<std::string> readexactly(std::size_t n);
  /// Up to and including separator (not empty: ValueError). At EOF first:
  /// IncompleteReadError (partial = all that was buffered, taken;
  /// expected empty). Not found within the limit, or found beyond it:
  /// LimitOverrunError with consumed, and the data stays buffered.
  Coro<std::string> readuntil(std::string separator = "\n");
  /// EOF was read and nothing is left in the buffer.
  bool at_eof() const noexcept;

  /// Buffered access for parsers that work in place, without a copy per
  /// read (Tokio's AsyncBufRead fill_buf/consume): buffered() is what was
  /// received and not yet consumed (valid until the next call on this
  /// reader); fill_buffer() reads once more from the transport and returns
  /// how many bytes came (0 at EOF); consume(n) drops the first n buffered
  /// bytes (at most buffered().size()). The caller bounds how much it lets
  /// accumulate: fill_buffer() knows no limit.
  std::string_view buffered() const noexcept;
  /// Reads once more from the transport; how many bytes came (0 at EOF).
  Coro<std::size_t> fill_buffer();
  /// Drops the first n buffered bytes (at most buffered().size()).
  void consume(std::size_t n) noexcept;

  /// What readable() returns: an awaiter that lives in the awaiting frame.
  class Readable;
  /// Waiting for a peer that is quiet for long (a keep-alive connection
  /// between requests) at the lowest cost, the transport's own "try, then
  /// wait": try_fill() reads once without waiting and returns how many bytes
  /// came (0 at EOF), or nullopt when none have come yet; then await
  /// readable() and try again. The wait adds no coroutine frame, and a reader
  /// with nothing buffered holds no buffer while it waits (fill_buffer()'s
  /// wait is two frames deep). As fill_buffer(), one reader at a time; a
  /// wait our own close() ends is EOF, and readable() after EOF (or once
  /// closed) does not wait.
  std::optional<std::size_t> try_fill();
  /// The wait between two try_fill()s (see try_fill()).
  Readable readable();
  /// The error the reader failed with, or nullptr.
  std::exception_ptr exception() const noexcept;
  /// How far readline() and readuntil() look for their separator.
  std::size_t limit() const noexcept;

 private:
  friend std::size_t detail::buffer_storage(const StreamReader& r) noexcept;
  friend detail::IoWait detail::transport_readable(StreamReader& r);
  friend bool detail::watch_readable(StreamReader& r, detail::IoWatch& w);
  friend void detail::unwatch(const StreamReader& r, detail::IoWatch& w) noexcept;
  friend void detail::interrupt_wait(const StreamReader& r) noexcept;
  detail::Ref<detail::Connection> c_;
};

/// Suspends until the transport may have bytes (StreamReader::try_fill()).
class StreamReader::Readable {
 public:
  /// The transport's wait for readability.
  Readable(detail::Ref<detail::Connection> c, detail::IoWait wait) noexcept
      : c_(std::move(c)), wait_(std::move(wait)) {}
  /// Nothing to wait for (EOF, or closed): the next try_fill() says so.
  explicit Readable(EventLoop& loop) noexcept : wait_(loop, -1, false) {}

  /// Suspends unless there is nothing to wait for.
  bool await_ready() const noexcept { return !c_; }
  /// Parks h on the transport's wait.
  void await_suspend(std::coroutine_handle<> h) { wait_.await_suspend(h); }
  /// CancelledError, or the read's error (as fill_buffer()).
  void await_resume();

 private:
  detail::Ref<detail::Connection> c_;  // null: ready at once
  // In every idle connection's frame.
  detail::IoWait wait_;
};

}  // namespace corio
