// StreamReader (see stream_reader.hpp): asyncio's read algorithms on a
// pull-model buffer.
//
// Each public call hands the connection reference to a coroutine as a
// parameter, so a read in flight keeps its connection alive even if the
// handle it was called on goes away.
//
// readuntil() is CPython's, step for step: the search resumes where the
// previous one stopped (minus the separator's length), the limit is checked
// on what was scanned, and data stays buffered on LimitOverrunError.
// readline() is CPython's too, including what it drops on overrun.
#include <algorithm>
#include <system_error>

#include "net/connection.hpp"

namespace corio {

using detail::Connection;
using detail::Ref;

namespace {

// What one read asks of the transport: adaptive, as Netty's and Tokio's
// receive buffers. A connection starts with 4 KiB; a read that fills its room
// doubles the room for the next one (Connection::read_chunk), up to asyncio's
// 256 KiB, so bulk transfers still take few syscalls. The storage itself is
// held only while bytes are buffered (byte_buffer.hpp).
constexpr std::size_t kMinReadChunk = 4 * 1024;
constexpr std::size_t kMaxReadChunk = 256 * 1024;

// Marks the one read in progress; rethrows the error an earlier read met.
// Bytes borrowed from the transport are settled first: the reads below
// work on rbuf's own storage.
class ReadScope {
 public:
  ReadScope(Connection& c, const char* op) : c_(c) {
    if (c.reading) {
      throw RuntimeError(std::string(op) +
                         "() called while another coroutine is already waiting for incoming data");
    }
    if (c.read_error) std::rethrow_exception(c.read_error);
    c.settle_lent();
    c.reading = true;
  }
  ReadScope(const ReadScope&) = delete;
  ReadScope& operator=(const ReadScope&) = delete;
  ~ReadScope() { c_.reading = false; }

 private:
  Connection& c_;
};

// After a read failed with `e` (being handled): true if our own close()
// woke it, which is EOF, as asyncio's connection_lost(None); else the error
// is kept for every later read, and it fails the writing side too, as
// asyncio's _fatal_error closes a transport whose read failed: a reset
// stream is gone both ways, whether or not a write has met the error yet
// (a completion backend's queued send meets it a step later).
bool closed_under_read(Connection& c) noexcept {
  if (c.closed) {
    c.eof = true;
    return true;
  }
  c.read_error = std::current_exception();
  if (!c.write_error) c.fail_write(c.read_error);
  return false;
}

// What a read of n bytes into `room` leaves: the bytes committed, eof at the
// end of the stream, and a bigger room next time if this one was filled.
void committed(Connection& c, std::span<char> room, std::size_t n) noexcept {
  c.rbuf.commit(n);
  if (n == 0) c.eof = true;
  if (n == room.size() && n < kMaxReadChunk) c.read_chunk = static_cast<std::uint32_t>(std::min(2 * n, kMaxReadChunk));
}

// One read attempt (the transport's try_read): true once bytes (or EOF)
// came. Storage is taken for the attempt only: when nothing came, an empty
// buffer gives it back before the caller waits, so that a connection waiting
// for its peer holds no buffer.
bool try_fill_once(Connection& c, std::size_t want) {
  const std::span<char> room = c.rbuf.prepare(std::max<std::size_t>(want, c.read_chunk));
  std::optional<std::size_t> got;
  try {
    got = c.transport->try_read(room);
  } catch (...) {
    c.rbuf.trim();
    throw;
  }
  if (!got) {
    c.rbuf.trim();
    return false;
  }
  committed(c, room, *got);
  return true;
}

// try_fill() on a lending transport with nothing buffered: rbuf borrows
// what the transport holds, in place (settle_lent() copies it once a read
// needs more). A caller that parses and consumes it in the same step (the
// HTTP server's head) copies nothing.
std::optional<std::size_t> try_borrow(Connection& c) {
  const std::optional<std::string_view> lent = c.transport->try_read_lent();
  if (!lent) return std::nullopt;
  if (lent->empty()) {
    c.eof = true;
    return 0;
  }
  c.rbuf.borrow(*lent);
  return lent->size();
}

// Reads once from the transport into the buffer (at least `want` bytes of
// room); sets eof at the end of the stream, or once this side closed it.
// The transport's try and wait in this frame, not in a coroutine below it.
Coro<void> fill(Connection& c, std::size_t want = kMinReadChunk) {
  if (c.closed) {
    c.eof = true;
    co_return;
  }
  try {
    while (!try_fill_once(c, want)) co_await c.transport->readable();
  } catch (const std::system_error&) {
    c.rbuf.trim();
    if (closed_under_read(c)) co_return;
    throw;
  }
}

// Up to n of the bytes a lending transport holds, copied out, then taken
// from it: only once the string holds them, so that if making it throws they
// stay. `lent` is what try_read_lent() gave ("" at EOF), nullopt if our own
// close() woke the wait (EOF too).
std::string take_lent(Connection& c, std::optional<std::string_view> lent, std::size_t n) {
  if (!lent || lent->empty()) {
    c.eof = true;
    return std::string();
  }
  std::string out(lent->substr(0, n));
  c.transport->consume_lent(out.size());
  return out;
}

// CPython's readuntil() loop: the index of sep in the buffer, reading more
// as needed. Throws IncompleteReadError (taking the buffer) at EOF and
// LimitOverrunError (leaving the buffer) past the limit.
Coro<std::size_t> find_separator(Connection& c, std::string_view sep) {
  std::size_t offset = 0;
  for (;;) {
    const std::string_view buf = c.rbuf.view();
    if (buf.size() >= offset + sep.size()) {
      const std::size_t isep = buf.find(sep, offset);
      if (isep != std::string_view::npos) {
        if (isep > c.limit) {
          throw LimitOverrunError("Separator is found, but chunk is longer than limit", isep);
        }
        co_return isep;
      }
      offset = buf.size() + 1 - sep.size();
      if (offset > c.limit) {
        throw LimitOverrunError("Separator is not found, and chunk exceed the limit", offset);
      }
    }
    if (c.eof) throw IncompleteReadError(c.rbuf.take(buf.size()), std::nullopt);
    co_await fill(c);
  }
}

Coro<std::string> read_some_or_all(Ref<Connection> ref, std::ptrdiff_t n) {
  Connection& c = *ref;
  ReadScope scope(c, "read");
  if (n == 0) co_return std::string();
  if (n < 0) {
    while (!c.eof) co_await fill(c);
    co_return c.rbuf.take(c.rbuf.size());
  }
  if (c.rbuf.empty() && !c.eof && !c.closed && c.lends()) {
    // Nothing buffered, on a transport that lends (the io_uring backend's
    // receive buffers): the bytes copied once, straight from where the kernel
    // put them, rather than into the buffer and out again (a 64 KiB echo
    // spent a sixth of its server CPU in those two copies). The wait is here,
    // not in a coroutine of its own: this frame is the read's only one.
    std::optional<std::string_view> lent;
    try {
      while (!(lent = c.transport->try_read_lent())) co_await c.transport->readable();
    } catch (const std::system_error&) {
      if (!closed_under_read(c)) throw;
    }
    co_return take_lent(c, lent, static_cast<std::size_t>(n));
  }
  if (c.rbuf.empty() && !c.eof) co_await fill(c);
  co_return c.rbuf.take(static_cast<std::size_t>(n));
}

Coro<std::string> read_exactly(Ref<Connection> ref, std::size_t n) {
  Connection& c = *ref;
  ReadScope scope(c, "readexactly");
  while (c.rbuf.size() < n) {
    if (c.eof) throw IncompleteReadError(c.rbuf.take(c.rbuf.size()), n);
    co_await fill(c, n - c.rbuf.size());
  }
  co_return c.rbuf.take(n);
}

Coro<std::string> read_until(Ref<Connection> ref, std::string sep) {
  if (sep.empty()) throw ValueError("Separator should be at least one-byte string");
  Connection& c = *ref;
  ReadScope scope(c, "readuntil");
  const std::size_t isep = co_await find_separator(c, sep);
  co_return c.rbuf.take(isep + sep.size());
}

Coro<std::string> read_line(Ref<Connection> ref) {
  Connection& c = *ref;
  ReadScope scope(c, "readline");
  try {
    const std::size_t isep = co_await find_separator(c, "\n");
    co_return c.rbuf.take(isep + 1);
  } catch (IncompleteReadError& e) {
    co_return std::move(e.partial);
  } catch (const LimitOverrunError& e) {
    // CPython: drop the overlong line through its "\n" if it is there,
    // else everything, so the next readline() starts afresh.
    const std::string_view buf = c.rbuf.view();
    if (buf.substr(e.consumed, 1) == "\n") {
      c.rbuf.consume(e.consumed + 1);
    } else {
      c.rbuf.clear();
    }
    throw;
  }
}

Coro<std::size_t> fill_more(Ref<Connection> ref) {
  Connection& c = *ref;
  ReadScope scope(c, "fill_buffer");
  if (c.eof) co_return 0;
  const std::size_t before = c.rbuf.size();
  co_await fill(c);
  co_return c.rbuf.size() - before;
}

}  // namespace

Coro<std::string> StreamReader::read(std::ptrdiff_t n) { return read_some_or_all(c_, n); }

Coro<std::string> StreamReader::readline() { return read_line(c_); }

Coro<std::string> StreamReader::readexactly(std::size_t n) { return read_exactly(c_, n); }

Coro<std::string> StreamReader::readuntil(std::string separator) {
  return read_until(c_, std::move(separator));
}

bool StreamReader::at_eof() const noexcept { return c_->eof && c_->rbuf.empty(); }

std::string_view StreamReader::buffered() const noexcept { return c_->rbuf.view(); }

Coro<std::size_t> StreamReader::fill_buffer() { return fill_more(c_); }

void StreamReader::consume(std::size_t n) noexcept {
  Connection& c = *c_;
  n = std::min(n, c.rbuf.size());
  if (c.rbuf.borrowed()) c.transport->consume_lent(n);
  c.rbuf.consume(n);
}

std::optional<std::size_t> StreamReader::try_fill() {
  Connection& c = *c_;
  ReadScope scope(c, "try_fill");
  if (c.eof) return 0;
  if (c.closed) {
    c.eof = true;
    return 0;
  }
  const std::size_t before = c.rbuf.size();
  try {
    if (before == 0 && c.lends()) return try_borrow(c);
    if (!try_fill_once(c, kMinReadChunk)) return std::nullopt;
  } catch (const std::system_error&) {
    if (!closed_under_read(c)) throw;
  }
  return c.rbuf.size() - before;
}

StreamReader::Readable StreamReader::readable() {
  Connection& c = *c_;
  if (c.closed || c.eof) return Readable(c.loop);
  return Readable(c_, c.transport->readable());
}

void StreamReader::Readable::await_resume() {
  if (!c_) return;
  try {
    wait_.await_resume();
  } catch (const std::system_error&) {
    if (!closed_under_read(*c_)) throw;
  }
}

std::exception_ptr StreamReader::exception() const noexcept { return c_->read_error; }

std::size_t StreamReader::limit() const noexcept { return c_->limit; }

namespace detail {

std::size_t buffer_storage(const StreamReader& r) noexcept {
  return r.c_->rbuf.capacity() + r.c_->wbuf.capacity();
}

IoWait transport_readable(StreamReader& r) { return r.c_->transport->readable(); }

bool watch_readable(StreamReader& r, IoWatch& w) {
  Connection& c = *r.c_;
  if (c.closed || c.eof || c.reading || c.rbuf.size() != 0) return false;
  // The socket under the transport: one found with nothing to read has
  // nothing left inside it either (TLS: OpenSSL's buffers are read dry
  // first). No readable() call: no task waits, so the transport must not
  // think its reader does.
  const int fd = c.transport->fileno();
  if (fd < 0) return false;
  w.set_fd(fd);
  c.loop.io().park(&w);
  return true;
}

void unwatch(const StreamReader& r, IoWatch& w) noexcept { r.c_->loop.io().unpark(&w); }

void interrupt_wait(const StreamReader& r) noexcept {
  const Connection& c = *r.c_;
  c.transport->interrupt_read(c.loop);
}

}  // namespace detail

}  // namespace corio
