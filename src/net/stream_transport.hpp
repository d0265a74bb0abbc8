// StreamTransport: a Transport over an open connection's StreamReader and
// StreamWriter, so that TLS can start on a connection already in use
// (start_tls: a tunnel through a proxy, STARTTLS). The bytes the reader had
// buffered are the first it reads.
//
// Reads are the inner reader's own try and wait (try_fill, and its
// transport's readable()), so a connection over another one reads as
// every connection does.
//
// Flow control passes through: try_write takes nothing while the inner
// writer is above its high-water mark, and wait_writable is its drain(), so
// a slow peer holds the outer writer back and memory stays bounded.
#pragma once

#include <corio/stream_reader.hpp>
#include <corio/stream_writer.hpp>

#include "net/transport.hpp"

namespace corio::detail {

class StreamTransport final : public Transport {
 public:
  StreamTransport(StreamReader reader, StreamWriter writer)
      : r_(std::move(reader)), w_(std::move(writer)), peer_(w_.peername()), local_(w_.sockname()) {}

  std::optional<std::size_t> try_read(std::span<char> buf) override;
  IoWait readable() override { return transport_readable(r_); }
  std::size_t try_write(std::string_view data) override;
  Coro<void> wait_writable() override { co_await w_.drain(); }
  void shutdown_write() override { w_.write_eof(); }
  void close() noexcept override { w_.close(); }
  std::string extra_info(std::string_view name) const override { return w_.get_extra_info(name); }
  const SocketAddress& peer_address() const noexcept override { return peer_; }
  const SocketAddress& local_address() const noexcept override { return local_; }
  int fileno() const noexcept override { return w_.fileno(); }

 private:
  StreamReader r_;
  StreamWriter w_;
  SocketAddress peer_;
  SocketAddress local_;
};

}  // namespace corio::detail
