// One HTTP/2 stream of an H2Connection: its request as the handler's
// Request sees it (a RequestSource: the body read from nghttp2's DATA frames),
// its answer as the shared answer code writes it (an AnswerSink: the head
// submitted to nghttp2, the body through a data provider reading this
// stream's buffer), and the task that runs its handler.
//
// Flow control is back-pressure both ways, each bounded:
//   - the request body: nghttp2's automatic WINDOW_UPDATE is off; the
//     bytes the handler reads are given back to the peer's window
//     (nghttp2_session_consume), so a stream buffers at most its window
//     (ServerOptions::initial_window_size) of unread body;
//   - the answer: the data provider takes from the stream's buffer as the
//     peer's window allows, and says NGHTTP2_ERR_DEFERRED when it is empty;
//     it copies nothing: each DATA frame's payload is referred to in the
//     buffer (NGHTTP2_DATA_FLAG_NO_COPY, send_out()) and goes to the socket
//     with its header in the pass's one write (H2Output), so the buffer is
//     trimmed only once that pass is over (lent());
//     a producer (a stream) that got more than kOutBuffer ahead of
//     it waits in its write, within send_timeout, so a peer that never
//     opens its window pins that buffer and no more. A file is read
//     as nghttp2 takes it, a piece at a time, no further ahead than the
//     peer's windows allow (H2FileReader), and its producer waits, within
//     send_timeout too, until the range was all taken.
//
// An extended CONNECT (RFC 8441: `:protocol websocket`) reaches the router
// as HTTP/1.1's Upgrade does (GET, `Upgrade: websocket`), and its handler's
// take_connection() makes the stream a tunnel: an H2StreamTransport
// (h2_tunnel.hpp) reads the same request buffer and writes the same answer
// buffer, with the same bounds, and may outlive the handler's task.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include <nghttp2/nghttp2.h>

#include <corio/event.hpp>
#include <corio/http/parser.hpp>
#include <corio/http/request.hpp>
#include <corio/task.hpp>

#include "http/h2/h2_file.hpp"
#include "http/h2/h2_tunnel.hpp"
#include "http/server/answer_sink.hpp"
#include "http/server/request_source.hpp"

namespace corio::http::detail {

class H2Connection;

class H2Stream final : public RequestSource, public AnswerSink, public H2TunnelEnd {
 public:
  H2Stream(H2Connection& conn, std::int32_t id);
  H2Stream(const H2Stream&) = delete;
  H2Stream& operator=(const H2Stream&) = delete;
  ~H2Stream();

  // From the nghttp2 callbacks (h2_callbacks.cpp).
  // The head's, then trailers'; false: an HPACK bomb (h2_guard.hpp).
  bool add_field(std::string_view name, std::string_view value);
  void head_done() noexcept;  // what follows are trailers

  void body_data(std::string_view bytes);
  void body_end() noexcept;
  void closed() noexcept;  // nghttp2 is done with it (lifetime rule 2)
  ssize_t read_out(std::size_t length, std::uint32_t* flags) noexcept;
  // The DATA frame read_out() said `length` to: its header and payload to
  // the connection's output.
  void send_out(std::string_view header, std::size_t length);

  // The handler's task; task_done() tells the connection when it ended.
  // started() links the stream into the task's completion: task_done() runs
  // inside it, as TaskGroup's children do (library code only), not as a
  // done-callback a ready-queue step later. That callback cost a pooled
  // node, a std::function on the heap and a step per request.
  static Coro<void> run(H2Stream* self);
  void task_done() noexcept;
  void started(TaskRef task) noexcept;
  void cancel() noexcept;
  void stalled() noexcept;  // its answer waited too long for the peer's window: reset
  bool tunneled() const noexcept { return tunnel_ != nullptr; }
  bool task_ended() const noexcept { return task_ended_; }  // or none started
  bool had_request() const noexcept { return task_.task() != nullptr; }
  bool is_closed() const noexcept { return closed_; }
  std::int32_t id() const noexcept { return id_; }

  // RequestSource.
  Coro<std::string> read_chunk() override;
  Coro<std::string> read_all() override;
  const Headers& trailers() const noexcept override { return trailers_; }
  std::string peername() const override;
  bool can_take() const noexcept override { return tunnel_wanted_ && !taken_; }
  Coro<std::pair<StreamReader, StreamWriter>> take_connection(Response answer) override;
  LoopServer& loop_server() const noexcept override;
  corio::detail::ServerSlot new_slot() const noexcept override;

  // H2TunnelEnd (h2_tunnel.cpp), for its H2StreamTransport.
  std::optional<std::size_t> tunnel_read(std::span<char> buf) override;
  std::size_t tunnel_write(std::string_view data) override;
  bool tunnel_full() const noexcept override { return pending() >= kOutBuffer; }
  std::chrono::milliseconds tunnel_timeout() const noexcept override;
  void tunnel_stalled() noexcept override { stalled(); }
  std::string tunnel_info(std::string_view name) const override;
  void tunnel_end() override;
  void tunnel_gone() noexcept override;

  // A producer (a stream, a file, a tunnel) waits while more than this of
  // its body is in the stream's buffer, not yet taken by nghttp2.
  static constexpr std::size_t kOutBuffer = kTunnelOutBuffer;

  // AnswerSink.
  const RequestHead& request() const noexcept override { return head_; }
  bool head_only() const noexcept override { return head_only_; }
  void head(const Response& resp, std::optional<std::uint64_t> length) override;
  void append(std::string_view bytes) override;
  Coro<void> file_range(int fd, ByteRange range) override;
  Coro<void> piece(std::string_view bytes) override;
  void end_stream() override;
  void abort_stream() noexcept override;
  std::uint64_t whole(Response& resp) override;

 private:
  Coro<void> respond();
  Coro<Response> answer(Request& req);
  Coro<void> wait(std::chrono::milliseconds limit);
  Coro<void> room();  // waits while the answer's buffer is over its bound
  void reset(std::uint32_t code) noexcept;
  void resume() noexcept;  // more of the answer's body is there
  void answer_sent() noexcept;
  std::size_t pending() const noexcept { return out_.size() - out_at_; }
  std::size_t take_file(std::size_t length) noexcept;  // the next DATA frame's, from the file
  // The output's current pass refers to out_'s bytes: out_ must not move.
  bool lent() const noexcept;
  void trim() noexcept;  // drops what nghttp2 took, unless lent
  void log_access(int status, std::uint64_t bytes);
  void give_back(std::size_t n) noexcept;  // n body bytes read: the peer's window opens
  std::size_t unread() const noexcept { return in_.size() - in_at_; }

  H2Connection& conn_;
  std::int32_t id_;
  RequestHead head_;
  Headers trailers_;
  std::size_t head_bytes_ = 0;
  std::string in_;                // body bytes received, from in_at_ on not yet read
  std::size_t in_at_ = 0;         // a tunnel's reads take from here (h2_tunnel.cpp)
  std::uint64_t in_total_ = 0;
  std::string out_;               // the answer's body, from out_at_ on not yet taken by nghttp2
  std::size_t out_at_ = 0;
  std::uint64_t lent_in_ = UINT64_MAX;  // the output's pass that refers to out_
  H2FileReader file_;             // a file range (file_range()), taken after out_'s bytes
  std::string_view file_frame_;   // taken by take_file() for send_out()
  std::optional<std::uint64_t> declared_;  // the head's body length
  std::uint64_t given_ = 0;                // body bytes given so far (appended, or a file's)
  Event wake_;                    // body bytes came, room was made, or the stream closed
  TaskRef task_;
  // Linked into task_'s completion (started()); task_ keeps the state alive while it is.
  struct Done : corio::detail::Callback {
    H2Stream* stream = nullptr;
  } done_;
  H2StreamTransport* tunnel_ = nullptr;  // taken: its transport, until that closes
  TunnelLinger linger_;                  // after the transport closed, until the stream does
  std::string protocol_;                 // an extended CONNECT's :protocol
  std::chrono::steady_clock::time_point started_;
  bool in_trailers_ = false;
  bool too_large_ = false;        // the head is over the limits: 431
  bool over_limit_ = false;       // the body is over Limits::max_body: 413
  bool in_done_ = false;          // END_STREAM received
  bool discard_ = false;          // the handler is done: body bytes are given back as they come
  bool out_done_ = false;         // the answer's body is all in out_
  bool file_ends_body_ = false;   // the file range is the body's last bytes (declared_ says)
  bool deferred_ = false;         // the data provider said NGHTTP2_ERR_DEFERRED
  bool head_only_ = false;
  bool closed_ = false;
  bool tunnel_wanted_ = false;  // an extended CONNECT: take_connection() may take it
  bool taken_ = false;          // take_connection() answered it
  bool task_ended_ = true;  // no task runs for it: none started yet, or it ended
};

}  // namespace corio::http::detail
