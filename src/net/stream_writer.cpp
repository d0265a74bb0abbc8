// StreamWriter (see stream_writer.hpp) and the writer half of Connection:
// the buffer, the background flusher, flow control, EOF and close.
//
// The flusher is a task started when write() leaves bytes behind and ending
// when the buffer is empty: an idle connection has none, a busy one the
// same one for as long as the socket stays behind. It is the only task that
// waits to write the socket, so the loop's one-writer rule always holds.
#include <algorithm>
#include <cerrno>
#include <new>
#include <system_error>

#include "net/connection.hpp"

namespace corio {

using detail::Connection;
using detail::Ref;

namespace {

// Clears `flushing` (set by start_flusher) however the flusher ends,
// CancelledError at loop close included, so a later write() can start
// another.
struct FlushingScope {
  Connection& c;
  explicit FlushingScope(Connection& conn) noexcept : c(conn) {}
  FlushingScope(const FlushingScope&) = delete;
  FlushingScope& operator=(const FlushingScope&) = delete;
  ~FlushingScope() { c.flushing = false; }
};

Coro<void> flush_in_background(Ref<Connection> ref) {
  Connection& c = *ref;
  {
    FlushingScope scope(c);
    try {
      while (!c.wbuf.empty() && !c.closed) {
        const std::size_t n = c.transport->try_write(c.wbuf.view());
        c.wbuf.consume(n);
        c.update_pause();
        if (n == 0) co_await c.transport->wait_writable();
      }
    } catch (const std::system_error&) {
      if (!c.closed) c.fail_write(std::current_exception());  // else: abort() woke us
    }
  }
  c.flushed.set();
  c.after_flush();
}

Coro<void> drain_connection(Ref<Connection> ref) {
  Connection& c = *ref;
  // asyncio's drain() raises the reader's exception too: a connection that
  // was reset is not worth writing to.
  if (c.read_error) std::rethrow_exception(c.read_error);
  bool waited = false;
  while (c.paused && !c.write_error) {
    waited = true;
    co_await c.resumed.wait();
  }
  if (c.write_error) std::rethrow_exception(c.write_error);
  // Only a drain() begun on a closed connection is refused: one that waited
  // while close() flushed the buffer has seen its bytes go out, and returns
  // as asyncio's drain waiters do at connection_lost(None).
  if (c.closed && !waited) {
    throw std::system_error(ECONNRESET, std::generic_category(), "Connection lost");
  }
}

// A failed or closed connection waits for nothing: drain() raises why.
Coro<void> wait_connection_writable(Ref<Connection> ref) {
  Connection& c = *ref;
  const bool buffered = !c.closed && !c.write_error && !c.wbuf.empty();
  if (buffered) {
    // The flusher is the one task waiting on the socket; it sets the event
    // as it ends, so we never wait on the socket beside it.
    co_await c.flushed.wait();
  }
  // Flushed to the transport may still mean queued in the loop (io_uring's
  // send queue): the caller's own writes must wait for those bytes too.
  if (!c.closed && !c.write_error && (!buffered || c.transport->unsent() > 0)) {
    try {
      co_await c.transport->wait_writable();
    } catch (const std::system_error&) {
      if (!c.closed) throw;  // else: closed under us (EBADF); drain() says so
    }
  }
  co_await drain_connection(std::move(ref));
}

// Closes the transport however the goodbye ends: a peer that breaks the
// connection or never answers must not keep it open.
Coro<void> close_after_goodbye(Ref<Connection> ref, Coro<void> goodbye) {
  struct CloseOnExit {
    Connection& c;
    ~CloseOnExit() { c.close_transport(); }
  } close_on_exit{*ref};
  try {
    co_await std::move(goodbye);
  } catch (const std::exception&) {
    // Nothing more to say: close.
  }
}

Coro<void> wait_connection_closed(Ref<Connection> ref) {
  co_await ref->closed_event.wait();
  if (ref->write_error) std::rethrow_exception(ref->write_error);
}

}  // namespace

namespace detail {

void Connection::start_flusher() {
  if (flushing) return;
  // The task holds a reference: bytes go out even if every handle is dropped.
  loop.create_task(flush_in_background(Ref<Connection>::share(this)));
  flushing = true;  // now, not when the task first runs: no second flusher
}

void Connection::check_writable() const {
  if (closing) throw RuntimeError("write() on a closed StreamWriter");
  if (eof_requested) throw RuntimeError("Cannot call write() after write_eof()");
}

void Connection::buffered() {
  flushed.clear();
  update_pause();
  start_flusher();
}

void Connection::update_pause() noexcept {
  if (!paused && wbuf.size() > high_water) {
    paused = true;
    resumed.clear();
  } else if (paused && wbuf.size() <= low_water) {
    paused = false;
    resumed.set();
  }
}

void Connection::fail_write(std::exception_ptr error) noexcept {
  write_error = std::move(error);
  wbuf.clear();
  flushed.set();
  paused = false;
  resumed.set();
}

void Connection::after_flush() noexcept {
  if (closed) return;
  if (eof_requested && !eof_sent) {
    eof_sent = true;
    try {
      transport->shutdown_write();
    } catch (const std::system_error&) {
      fail_write(std::current_exception());
    }
  }
  if (closing) finish_close();
}

void Connection::finish_close() noexcept {
  if (closed) return;
  try {
    Coro<void> goodbye = transport->goodbye();
    if (goodbye.valid()) {
      loop.create_task(close_after_goodbye(Ref<Connection>::share(this), std::move(goodbye)));
      return;
    }
  } catch (const std::exception&) {
    // No memory for the goodbye (or the loop is closed): close without it.
  }
  close_transport();
}

void Connection::close_transport() noexcept {
  if (closed) return;
  closed = true;
  try {
    settle_lent();  // the transport's buffers go with its socket; what was read stays readable
  } catch (const std::bad_alloc&) {
    rbuf.clear();
  }
  transport->close();
  wbuf.clear();
  flushed.set();
  paused = false;
  resumed.set();
  closed_event.set();
}

}  // namespace detail

void StreamWriter::write(std::string_view data) {
  Connection& c = *c_;
  c.check_writable();
  if (data.empty() || c.write_error) return;  // a failed connection drops writes; drain() tells
  if (c.wbuf.empty()) {
    try {
      data.remove_prefix(c.transport->try_write(data));
    } catch (const std::system_error&) {
      c.fail_write(std::current_exception());
      return;
    }
    if (data.empty()) return;
  }
  c.wbuf.append(data);
  c.buffered();
}

void StreamWriter::writelines(std::span<const std::string_view> pieces) {
  Connection& c = *c_;
  c.check_writable();
  if (c.write_error) return;
  std::size_t sent = 0;
  if (c.wbuf.empty()) {
    try {
      sent = c.transport->try_writev(pieces);
    } catch (const std::system_error&) {
      c.fail_write(std::current_exception());
      return;
    }
  }
  const std::size_t before = c.wbuf.size();
  for (std::string_view piece : pieces) {
    const std::size_t skip = std::min(sent, piece.size());
    sent -= skip;
    piece.remove_prefix(skip);
    if (!piece.empty()) c.wbuf.append(piece);
  }
  if (c.wbuf.size() > before) c.buffered();
}

Coro<void> StreamWriter::drain() { return drain_connection(c_); }

Coro<void> StreamWriter::wait_writable() { return wait_connection_writable(c_); }

void StreamWriter::write_eof() {
  Connection& c = *c_;
  if (c.closing || c.eof_requested) return;
  c.eof_requested = true;
  if (!c.flushing) c.after_flush();
}

void StreamWriter::close() {
  Connection& c = *c_;
  if (c.closing) return;
  c.closing = true;
  if (!c.flushing) c.finish_close();
}

void StreamWriter::abort() {
  c_->closing = true;
  c_->close_transport();
}

bool StreamWriter::is_closing() const noexcept {
  return c_->closing || c_->closed || c_->write_error != nullptr;
}

Coro<void> StreamWriter::wait_closed() { return wait_connection_closed(c_); }

std::string StreamWriter::get_extra_info(std::string_view name) const {
  if (name == "peername") return peername().to_string();
  if (name == "sockname") return sockname().to_string();
  return c_->transport->extra_info(name);
}

SocketAddress StreamWriter::peername() const noexcept { return c_->transport->peer_address(); }

SocketAddress StreamWriter::sockname() const noexcept { return c_->transport->local_address(); }

int StreamWriter::fileno() const noexcept { return c_->transport->fileno(); }

void StreamWriter::set_write_buffer_limits(std::optional<std::size_t> high,
                                           std::optional<std::size_t> low) {
  // asyncio's _set_write_buffer_limits.
  if (!high) high = low ? 4 * *low : 64 * 1024;
  if (!low) low = *high / 4;
  if (*high < *low) throw ValueError("high must be >= low");
  c_->high_water = Connection::clamp_size(*high);
  c_->low_water = Connection::clamp_size(*low);
  c_->update_pause();
}

std::pair<std::size_t, std::size_t> StreamWriter::get_write_buffer_limits() const noexcept {
  return {c_->low_water, c_->high_water};
}

std::size_t StreamWriter::get_write_buffer_size() const noexcept { return c_->wbuf.size(); }

bool StreamWriter::is_flushed() const noexcept {
  return c_->wbuf.empty() && c_->transport->unsent() == 0;
}

}  // namespace corio
