// The state one StreamReader and StreamWriter share: the transport, the
// read buffer, the write buffer and its flow control.
//
// Lifetime rules:
//   1. Counted by the StreamReader/StreamWriter handles and by the
//      background flusher while it runs (plain integer: loop-affine).
//   2. The last reference gone closes the transport as close() would: the
//      transport's goodbye first (TLS close_notify), in a task holding a new
//      reference. Since a running flusher holds one, bytes buffered when the
//      user drops the handles still go out first.
//   3. close_transport() closes the socket under any waiting read or
//      flush: both wake with EBADF, which `closed` turns into EOF (read)
//      or a quiet end (flush).
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <memory>
#include <utility>

#include <corio/event.hpp>
#include <corio/stream_reader.hpp>
#include <corio/stream_writer.hpp>

#include "net/byte_buffer.hpp"
#include "net/transport.hpp"

namespace corio::detail {

class Connection {
 public:
  // The sizes below are 32-bit, as every idle connection keeps them: a
  // stream limit or write-buffer mark past 4 GiB acts as 4 GiB.
  static std::uint32_t clamp_size(std::size_t n) noexcept {
    return static_cast<std::uint32_t>(std::min<std::size_t>(n, UINT32_MAX));
  }
  Connection(EventLoop& loop, std::unique_ptr<Transport> transport, std::size_t limit)
      : loop(loop), transport(std::move(transport)), limit(clamp_size(limit)) {
    resumed.set();
    flushed.set();
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Writer side, in stream_writer.cpp.
  void check_writable() const;  // RuntimeError after close() or write_eof()
  void buffered();              // bytes were added to wbuf: the flusher sends them
  void start_flusher();
  // Wakes drain() once the buffer is at or below the low-water mark; pauses
  // it above the high-water mark.
  void update_pause() noexcept;
  void fail_write(std::exception_ptr error) noexcept;
  // After the buffer went out: the pending write_eof, then the close.
  void after_flush() noexcept;
  // Closing, the buffer out: the transport's goodbye (in a task), then
  // close_transport().
  void finish_close() noexcept;
  void close_transport() noexcept;

  // Whether the transport lends its bytes (transport.hpp), asked once: on
  // epoll the question costs two virtual calls and a watch.
  bool lends() {
    if (lends_ < 0) lends_ = transport->lends() ? 1 : 0;
    return lends_ == 1;
  }
  // rbuf borrows what the transport lent (try_fill on a lending transport:
  // the HTTP server parses a head in place, without a copy) until a consume
  // takes it, or until a read that may need more, or the close, settles it:
  // copied into rbuf's own storage and taken from the transport.
  void settle_lent() {
    if (!rbuf.borrowed()) return;
    const std::size_t n = rbuf.size();
    (void)rbuf.prepare(0);
    transport->consume_lent(n);
  }
  // The flags and the count first, in one word: every idle connection keeps
  // this object, and scattered flags cost it 24 bytes of padding.
  bool closed = false;   // the transport is closed
  bool eof = false;      // reader: the peer's EOF came
  bool reading = false;  // reader: a read is in progress (one at a time)
  bool paused = false;    // writer: above the marks, drain() waits
  bool flushing = false;  // writer: the flusher task runs
  bool eof_requested = false;
  bool eof_sent = false;
  bool closing = false;  // close() or abort() was called

 private:
  signed char lends_ = -1;  // unknown yet

 public:
  std::uint32_t refs = 1;

  EventLoop& loop;
  std::unique_ptr<Transport> transport;

  // Reader.
  ByteBuffer rbuf;  // no storage while empty (byte_buffer.hpp)
  std::uint32_t read_chunk = 4 * 1024;  // the next read's room (stream_reader.cpp)
  std::uint32_t limit;
  std::exception_ptr read_error;

  // Writer.
  ByteBuffer wbuf;
  std::uint32_t high_water = 64 * 1024;
  std::uint32_t low_water = 16 * 1024;
  std::exception_ptr write_error;
  Event resumed;  // set while not paused
  Event flushed;  // set while the write buffer is empty
  Event closed_event;

};

}  // namespace corio::detail
