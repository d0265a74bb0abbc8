// H2StreamTransport: one HTTP/2 stream as a Transport (<corio/detail/transport.hpp>),
// the tunnel an extended CONNECT opens (RFC 8441: a WebSocket over h2), so
// that the WebSocket runs on the same StreamReader and StreamWriter as over
// a socket, its code unchanged.
//
// Reads take the stream's received DATA (h2_stream.hpp), each byte given
// back to the peer's window as it is taken: a peer that floods can send no
// more than the stream's window before we read. Writes go to the stream's
// answer buffer, which nghttp2's data provider sends as the peer's window
// allows; a write takes nothing once H2Stream::kOutBuffer waits there (the
// writer's own buffer then pauses its drain()), and a window that stays
// shut for send_timeout resets the stream: a peer that never opens its
// window pins that buffer, for that long. write_eof() is END_STREAM, and
// so is close() (after what was written; what the peer still sends is
// dropped until its END_STREAM): a tunnel ends its stream, never the
// connection.
//
// The waits are the transport's own WaitSlots (detail/io_wait.hpp): its
// stream fires them when DATA, room or the end came. One reader and one
// writer, as on a socket.
//
// Lifetime: the transport belongs to its streams' Connection, the stream to
// its H2Connection; each points at the other, and whichever goes first
// detaches the other (the stream's destructor: detach(); the transport's
// close: H2Stream::tunnel_gone()). A wait parked when its stream goes wakes
// and finds it gone.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <corio/detail/io_wait.hpp>
#include <corio/detail/transport.hpp>
#include <corio/socket.hpp>

namespace corio::http::detail {

class H2Stream;

class H2StreamTransport final : public corio::detail::Transport {
 public:
  H2StreamTransport(EventLoop& loop, H2Stream& stream, SocketAddress peer, SocketAddress local);
  H2StreamTransport(const H2StreamTransport&) = delete;
  H2StreamTransport& operator=(const H2StreamTransport&) = delete;
  ~H2StreamTransport() override { close(); }

  std::optional<std::size_t> try_read(std::span<char> buf) override;
  corio::detail::IoWait readable() override { return corio::detail::IoWait(loop_, read_slot_); }
  std::size_t try_write(std::string_view data) override;
  Coro<void> wait_writable() override;
  void shutdown_write() override;
  void close() noexcept override;
  std::string extra_info(std::string_view name) const override;
  const SocketAddress& peer_address() const noexcept override { return peer_; }
  const SocketAddress& local_address() const noexcept override { return local_; }
  int fileno() const noexcept override { return -1; }  // the connection's socket is not ours
  void interrupt_read(EventLoop& /*loop*/) noexcept override { read_slot_.fire(); }

  // From its stream.
  void readable_now() noexcept { read_slot_.fire(); }
  void writable_now() noexcept { write_slot_.fire(); }
  // The stream goes; eof: the peer ended it and every byte was read.
  void detach(bool eof) noexcept;

 private:
  EventLoop& loop_;
  H2Stream* stream_;
  corio::detail::WaitSlot read_slot_;
  corio::detail::WaitSlot write_slot_;
  SocketAddress peer_;
  SocketAddress local_;
  bool eof_ = false;     // detached after the peer's END_STREAM, all read
  bool closed_ = false;  // close() was called
};

}  // namespace corio::http::detail
