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
// dropped until its END_STREAM, or a TunnelLinger's time): a tunnel ends
// its stream, never the connection.
//
// The waits are the transport's own WaitSlots (detail/io_wait.hpp): its
// stream fires them when DATA, room or the end came. One reader and one
// writer, as on a socket.
//
// Either side's stream serves: the server's H2Stream (the tunnel a
// handler took) and the client's H2ClientStream (ws_connect's extended
// CONNECT), each an H2TunnelEnd.
//
// Lifetime: the transport belongs to its streams' Connection. The server's
// stream belongs to its H2Connection; each points at the other, and
// whichever goes first detaches the other (the stream's destructor:
// detach(); the transport's close: H2TunnelEnd::tunnel_gone()). A wait
// parked when its stream goes wakes and finds it gone. The client's stream
// is the transport's own (the `owner` it was made with), dropped at close
// after tunnel_gone().
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <corio/detail/io_wait.hpp>
#include <corio/detail/transport.hpp>
#include <corio/handle.hpp>
#include <corio/socket.hpp>

namespace corio::http::detail {

// A tunnel's stream as its transport uses it, either side.
class H2TunnelEnd {
 public:
  // Some of the DATA received (each byte given back to the peer's window),
  // 0 after the peer's END_STREAM, nullopt while none; throws once reset.
  virtual std::optional<std::size_t> tunnel_read(std::span<char> buf) = 0;
  // What was taken into the bounded send buffer: 0 while it is full.
  virtual std::size_t tunnel_write(std::string_view data) = 0;
  virtual bool tunnel_full() const noexcept = 0;
  virtual std::chrono::milliseconds tunnel_timeout() const noexcept = 0;  // for a shut window
  virtual void tunnel_stalled() noexcept = 0;  // the window stayed shut that long: reset
  virtual std::string tunnel_info(std::string_view name) const = 0;  // the connection's extra_info
  virtual void tunnel_end() = 0;            // END_STREAM once what was written is sent
  virtual void tunnel_gone() noexcept = 0;  // the transport closed (or went): the stream ends

 protected:
  ~H2TunnelEnd() = default;
};

// A tunnel's writes wait while this much is buffered, not yet taken by nghttp2.
inline constexpr std::size_t kTunnelOutBuffer = 64 * 1024;

// Up to buf.size() of in's bytes from at on, into buf: at moves past them,
// and in is compacted when the consumed front dominates. The count taken.
std::size_t take_front(std::string& in, std::size_t& at, std::span<char> buf) noexcept;

// After its transport closed, a tunnel's stream has END_STREAM queued
// behind what was written, and waits for the peer's own END_STREAM
// (dropping its DATA) so that a WebSocket's last close frame is not cut off
// by a reset. A peer that never ends its side, or never opens its window
// for our last bytes, would hold the stream (a slot of the peer's
// max_concurrent_streams, and the stream's memory) until the connection
// ends: past the linger time the stream is reset (CANCEL), as over
// HTTP/1.1 a WebSocket's socket closes once close_timeout passed.
class TunnelLinger {
 public:
  TunnelLinger() = default;
  TunnelLinger(const TunnelLinger&) = delete;
  TunnelLinger& operator=(const TunnelLinger&) = delete;
  ~TunnelLinger() { stop(); }

  // end.tunnel_stalled() after `after`, unless stop() comes first (out of
  // memory for the timer: at once).
  void start(H2TunnelEnd& end, std::chrono::milliseconds after) noexcept;
  void stop() noexcept;  // the stream closed

 private:
  TimerHandle timer_;
};

class H2StreamTransport final : public corio::detail::Transport {
 public:
  // owner: what keeps stream alive while the transport lives (the
  // client's), or null (the server's: detach() says when it goes).
  H2StreamTransport(EventLoop& loop, H2TunnelEnd& stream, SocketAddress peer, SocketAddress local,
                    std::shared_ptr<void> owner = nullptr);
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
  H2TunnelEnd* stream_;
  std::shared_ptr<void> owner_;
  corio::detail::WaitSlot read_slot_;
  corio::detail::WaitSlot write_slot_;
  SocketAddress peer_;
  SocketAddress local_;
  bool eof_ = false;     // detached after the peer's END_STREAM, all read
  bool closed_ = false;  // close() was called
};

}  // namespace corio::http::detail
