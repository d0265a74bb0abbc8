// The client's HTTP/2 (RFC 9113) on nghttp2: one H2ClientConnection per
// pooled h2 connection, carrying many requests at once, each an
// H2ClientStream. nghttp2 owns the frames, HPACK, stream states and flow
// control; corio owns the I/O and the waiting.
//
// One task drives a connection (drive()): it hands what
// nghttp2_session_mem_send gives to the writer (waiting while the writer
// holds more than its high-water mark), feeds what the reader got to
// nghttp2_session_mem_recv, and with nothing to do waits for the socket; a
// stream with something to send (a request, a WINDOW_UPDATE, a reset)
// interrupts that wait (wake()).
//
// Flow control is tied to reading: windows are not opened as DATA arrives
// but as the response's reader takes it (nghttp2_session_consume), so a
// body nobody reads pins at most its stream's window (kStreamWindow), and
// all the streams of a connection together its connection window.
//
// Lifetime rules:
//   1. The pool holds a connection by shared_ptr while it may take new
//      requests; its driving task holds it until it ends; each stream holds
//      it while the stream lives. It ends (its task returns) when the peer
//      closes, on an error, after a GOAWAY once no stream is left, or after
//      keepalive_timeout with no stream; shut() ends it at once.
//   2. A stream belongs to its request, then its response's body
//      (shared_ptr). The connection knows its streams by raw pointer (in
//      streams_ and as nghttp2's stream user data) and forgets one when it
//      is destroyed; a stream destroyed while open resets itself (CANCEL),
//      and the connection stays usable.
//   3. When the connection ends, every stream still open fails with the
//      connection's error; a stream's reads after that throw it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include <nghttp2/nghttp2.h>

#include <corio/coro.hpp>
#include <corio/event.hpp>
#include <corio/handle.hpp>
#include <corio/http/parser.hpp>
#include <corio/semaphore.hpp>
#include <corio/stream_reader.hpp>
#include <corio/stream_writer.hpp>

#include "http/h2/h2_tunnel.hpp"
#include "http/wire/h2_glue.hpp"

namespace corio::http::detail {

struct Deadline;
struct PreparedRequest;
class Inflater;
class ResponseBody;
class ConnectionPool;
struct PoolHost;
class H2ClientConnection;

// Each stream's receive window: what an unread response body may hold.
inline constexpr std::uint32_t kStreamWindow = 256 * 1024;

// A stream refused before the server processed it (REFUSED_STREAM, or
// above a GOAWAY's last stream id): safe to send again on a new connection
// whatever the method (RFC 9113 section 8.7).
struct H2Refused {};

// A stream may instead be a tunnel (RFC 8441's extended CONNECT, for
// ws_connect: h2_client_tunnel.cpp): its DATA both ways are the tunnel's
// bytes, read and written by an H2StreamTransport, bounded as the server's
// tunnel is (bytes go back to the window as read; writes wait past
// kTunnelOutBuffer, a window shut for the stall time resets the stream).
class H2ClientStream final : public H2TunnelEnd, public std::enable_shared_from_this<H2ClientStream> {
 public:
  // A stream to be on conn (a lease's, until send()).
  explicit H2ClientStream(std::shared_ptr<H2ClientConnection> conn);
  H2ClientStream(const H2ClientStream&) = delete;
  H2ClientStream& operator=(const H2ClientStream&) = delete;
  virtual ~H2ClientStream();  // resets the stream if it is still open (rule 2)

  // req's HEADERS (and body) queued on the connection; with a protocol, an
  // extended CONNECT whose DATA are the tunnel's. ClientConnectionError
  // if it can take no new stream.
  void send(const PreparedRequest& req, std::string_view cookies, std::string_view protocol = {});

  // Until the final (non-1xx) response head; H2Refused, ClientConnectionError
  // (reset, connection lost), TimeoutError past the deadline.
  Coro<ResponseHead> head(const Deadline& deadline);
  // Appends 1..max body bytes to out; false at the body's end.
  Coro<bool> pump(std::string& out, std::size_t max, const Deadline& deadline);
  bool ended() const noexcept { return ended_ && body_.empty(); }
  // Done with the body: an unfinished one is reset (CANCEL).
  void release() noexcept;
  // Whether the connection had carried a request before this one.
  bool reused() const noexcept { return reused_; }

  // The tunnel (h2_client_tunnel.cpp). Until the peer's SETTINGS came:
  // whether they allow an extended CONNECT (ClientConnectionError if the
  // connection ends first; TimeoutError past the deadline).
  Coro<bool> connect_allowed(const Deadline& deadline);
  // After a 2xx head: the stream as a transport, which owns self; stall: how
  // long a write may wait for a shut window; linger: how long the stream
  // waits for the peer's END_STREAM once the transport closed (TunnelLinger).
  static std::unique_ptr<corio::detail::Transport> tunnel(std::shared_ptr<H2ClientStream> self,
                                                          std::chrono::milliseconds stall,
                                                          std::chrono::milliseconds linger);
  std::optional<std::size_t> tunnel_read(std::span<char> buf) override;
  std::size_t tunnel_write(std::string_view data) override;
  bool tunnel_full() const noexcept override { return out_.size() - out_at_ >= kTunnelOutBuffer; }
  std::chrono::milliseconds tunnel_timeout() const noexcept override { return stall_; }
  void tunnel_stalled() noexcept override;
  std::string tunnel_info(std::string_view name) const override;
  void tunnel_end() override;
  void tunnel_gone() noexcept override;

  // For the connection and its callbacks.
  std::int32_t id = -1;
  void add_field(std::string_view name, std::string_view value);
  void head_end();      // a HEADERS frame ended
  void data(std::string_view bytes);
  void closed(std::uint32_t error_code) noexcept;  // nghttp2 closed it
  void fail(std::exception_ptr error) noexcept;    // the connection ended
  ssize_t read_out(std::uint8_t* buf, std::size_t length, std::uint32_t* flags) noexcept;

 private:
  Coro<void> wait(const Deadline& deadline);
  void detach() noexcept;
  void give_back(std::size_t n) noexcept;  // n bytes read: the windows open
  void linger_over() noexcept;  // closed: a tunnel_gone() stream lets go of itself
  ssize_t tunnel_out(std::uint8_t* buf, std::size_t length, std::uint32_t* flags) noexcept;
  void tunnel_wake() noexcept;  // bytes, room or the end came
  void tunnel_resume();         // more to send: nghttp2 asks for it again

  std::shared_ptr<H2ClientConnection> conn_;
  std::string request_body_;
  std::size_t sent_ = 0;
  ResponseHead head_;
  ResponseHead next_;  // the head being received
  bool head_ready_ = false;
  std::string body_;       // received, from body_at_ on not yet read
  std::size_t body_at_ = 0;  // a tunnel's reads take from here
  bool ended_ = false;     // END_STREAM (or closed) received
  bool closed_ = false;
  bool reused_ = false;    // the connection had served a request before
  std::uint32_t reset_code_ = 0;
  std::exception_ptr error_;
  Event changed_;
  // The tunnel's: its transport, the bytes to send from out_at_ on.
  H2StreamTransport* tunnel_ = nullptr;
  std::string out_;
  std::size_t out_at_ = 0;
  std::chrono::milliseconds stall_{0};
  std::chrono::milliseconds linger_{0};
  TunnelLinger linger_timer_;  // armed by tunnel_gone(), until closed
  bool tunneling_ = false;  // sent as an extended CONNECT
  bool out_done_ = false;   // tunnel_end(): END_STREAM after out_
  bool deferred_ = false;   // tunnel_out() said NGHTTP2_ERR_DEFERRED
  bool discard_ = false;    // the transport went: DATA is given back unread
  std::shared_ptr<H2ClientStream> lingering_;  // after tunnel_gone(), until closed
};

// Submits req's HEADERS (and its body, read from stream's) on session,
// stream as the stream's user data; the stream id, or a negative nghttp2
// error. With a protocol: an extended CONNECT, its DATA read from stream's
// tunnel.
std::int32_t submit_request(nghttp2_session* session, const PreparedRequest& req,
                            std::string_view cookies, H2ClientStream* stream,
                            std::string_view protocol = {});

// The body of the response on stream (after its head), decoded by inflater.
std::unique_ptr<ResponseBody> h2_body(std::shared_ptr<H2ClientStream> stream,
                                      std::optional<Inflater> inflater, Deadline deadline);

class H2ClientConnection : public std::enable_shared_from_this<H2ClientConnection> {
 public:
  // A client session over reader and writer, its SETTINGS queued; start()
  // makes its task. keepalive: how long it may stay without a stream.
  H2ClientConnection(StreamReader reader, StreamWriter writer, std::chrono::milliseconds keepalive);
  H2ClientConnection(const H2ClientConnection&) = delete;
  H2ClientConnection& operator=(const H2ClientConnection&) = delete;
  ~H2ClientConnection();

  void start();
  // Whether a new request may go here now: alive, no GOAWAY, and under
  // the peer's SETTINGS_MAX_CONCURRENT_STREAMS.
  bool usable() const noexcept;
  bool full() const noexcept;
  bool alive() const noexcept { return !ended_ && !going_away_; }
  std::size_t streams() const noexcept { return streams_.size(); }
  // Ends the connection: its task sends a GOAWAY, then closes the writer
  // (returned, to wait for).
  StreamWriter shut() noexcept;

  // The pool's hold on the connection's permits, released when it ends.
  void pooled(std::weak_ptr<ConnectionPool> pool, PoolHost* host,
              std::optional<Semaphore::Guard> host_permit,
              std::optional<Semaphore::Guard> total_permit) noexcept;
  void unpool() noexcept;  // the pool is closing: forget it

  // For the streams and the callbacks.
  nghttp2_session* session() const noexcept { return session_; }
  void wake() noexcept;
  void opened(H2ClientStream* s);  // its HEADERS were submitted
  void forget(H2ClientStream* s) noexcept;
  H2ClientStream* stream(std::int32_t id) const noexcept;
  void goaway(std::int32_t last_stream_id) noexcept;
  std::size_t served() const noexcept { return served_; }
  void settings_came() noexcept;  // the peer's first SETTINGS
  bool has_settings() const noexcept { return settings_; }
  bool ended() const noexcept { return ended_; }
  Event& changed() noexcept { return changed_; }  // set by settings_came() and end()
  std::exception_ptr error() const noexcept { return error_; }
  SocketAddress peer_address() const noexcept { return writer_.peername(); }
  SocketAddress local_address() const noexcept { return writer_.sockname(); }
  std::string extra_info(std::string_view name) const { return writer_.get_extra_info(name); }

 private:
  static Coro<void> drive(std::shared_ptr<H2ClientConnection> self);
  Coro<void> run();
  Coro<bool> send_pending();
  bool feed();
  void try_out_wait() noexcept;
  void end(std::exception_ptr error) noexcept;
  void arm_idle();

  StreamReader reader_;
  StreamWriter writer_;
  nghttp2_session* session_ = nullptr;
  H2Output output_;  // the frames of one send pass
  std::chrono::milliseconds keepalive_;
  std::unordered_map<std::int32_t, H2ClientStream*> streams_;
  std::optional<TimerHandle> idle_timer_;
  std::weak_ptr<ConnectionPool> pool_;
  PoolHost* host_ = nullptr;
  std::optional<Semaphore::Guard> host_permit_;
  std::optional<Semaphore::Guard> total_permit_;
  std::size_t served_ = 0;  // streams submitted so far
  bool waiting_ = false;    // the task waits for the socket
  bool going_away_ = false;  // a GOAWAY came (or went): no new stream
  bool shutting_ = false;   // shut(): the task sends the GOAWAY and ends
  bool ended_ = false;
  bool settings_ = false;  // the peer's SETTINGS came
  Event changed_;
  std::exception_ptr error_;  // why it ended
};

}  // namespace corio::http::detail
