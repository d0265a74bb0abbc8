// One HTTP/2 connection (RFC 9113) of a Server, on nghttp2: nghttp2 owns
// the frames, HPACK, stream states and flow control; corio owns the I/O,
// the tasks and the handler API.
//
// One task drives the session: it feeds what the reader got to
// nghttp2_session_mem_recv, and hands what nghttp2_session_mem_send gives
// to the writer, waiting (under send_timeout) while the writer is above its
// high-water mark; with nothing to do it waits for the socket, and a stream
// with something to send wakes that wait (wake()). Each stream's request
// runs in a task of its own (h2_stream.hpp), through the same dispatch as
// HTTP/1.1's (dispatch.hpp).
//
// Lifetime rules:
//   1. An H2Connection is its serving task's (serve()'s frame owns it); it
//      is on its LoopServer's adopted list (server_connection.hpp, lifetime
//      rule 6) from start() until that task's end.
//   2. A stream is the connection's, from its first HEADERS frame until
//      both nghttp2 closed it (on_stream_close) and its task ended
//      (stream_done()); whichever comes second destroys it. nghttp2 reads a
//      stream's answer from the stream's own buffer, so it stays while
//      nghttp2 may ask.
//   3. The serving task ends only after every stream's task ended: it
//      cancels what still runs, then waits. A stream's task may therefore
//      hold its connection by reference.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include <nghttp2/nghttp2.h>

#include <corio/event.hpp>
#include <corio/handle.hpp>
#include <corio/stream_reader.hpp>
#include <corio/stream_writer.hpp>

#include "http/h2/h2_guard.hpp"
#include "http/server/server_connection.hpp"
#include "http/wire/h2_glue.hpp"

namespace corio::http::detail {

class H2Stream;

// The client's connection preface starts so (RFC 9113 section 3.4); the
// HTTP/1.1 parser refuses it (505) once it read this much.
inline constexpr std::string_view kH2PrefaceLine = "PRI * HTTP/2.0\r\n";

class H2Connection final : public Adopted {
 public:
  // Serves reader and writer as HTTP/2 in a task of its own; whatever the
  // reader buffered (the preface) is the first input.
  static void start(LoopServer& server, StreamReader reader, StreamWriter writer,
                    corio::detail::ServerSlot slot);
  H2Connection(LoopServer& server, StreamReader reader, StreamWriter writer,
               corio::detail::ServerSlot slot);
  H2Connection(const H2Connection&) = delete;
  H2Connection& operator=(const H2Connection&) = delete;
  ~H2Connection();

  // For its streams.
  nghttp2_session* session() const noexcept { return session_; }
  LoopServer& loop_server() const noexcept { return server_; }
  const ServerShared& shared() const noexcept { return server_.shared(); }
  std::string peername() const { return writer_.get_extra_info("peername"); }
  SocketAddress peer_address() const noexcept { return writer_.peername(); }
  SocketAddress local_address() const noexcept { return writer_.sockname(); }
  std::string extra_info(std::string_view name) const { return writer_.get_extra_info(name); }
  void wake() noexcept;                     // there is output: the serving task sends it
  void stream_done(H2Stream* s) noexcept;   // its task ended (lifetime rule 2)
  // A stream whose task ended has an answer left to send (a tunnel closed
  // after its handler returned): the stall timer watches it.
  void watch_answers() noexcept;
  const H2Guard& guard() const noexcept { return guard_; }
  void data_sent() noexcept;  // a DATA frame of an answer went to nghttp2
  H2Output& output() noexcept { return output_; }  // where a DATA frame's payload goes

  // For the nghttp2 callbacks (h2_callbacks.cpp).
  H2Stream* stream(std::int32_t id) const noexcept;
  void open_stream(std::int32_t id);
  // Its head is complete: its task starts, unless too many run (then the
  // connection ends: false).
  bool start_request(H2Stream& s);
  void close_stream(std::int32_t id) noexcept;
  void control_frame(std::uint8_t type) noexcept;  // counted by the guard
  void enhance_your_calm() noexcept;               // past a guard's limit: GOAWAY, then the end

 private:
  static Coro<void> serve(std::shared_ptr<LoopServer> server, std::unique_ptr<H2Connection> c);
  Coro<void> run();
  // One pass that does not wait: 1 when nghttp2 has nothing more to send, 0
  // when the writer is full (send_pending() goes on), -1 as its false.
  int send_now();
  Coro<bool> send_pending();  // false: the session failed, or the peer is too slow
  bool feed();                // the reader's bytes to nghttp2; false on a connection error
  Coro<void> end_streams();
  Coro<void> linger();
  void cancel_streams() noexcept;
  void stop_timers() noexcept;
  void go_away() noexcept;
  void arm_idle(std::chrono::duration<double> delay);
  void watch_stalls();
  void erase(std::int32_t id) noexcept;
  static void on_server_end(Adopted* self, bool graceful) noexcept;

  LoopServer& server_;
  StreamReader reader_;
  StreamWriter writer_;
  nghttp2_session* session_ = nullptr;
  H2Output output_;  // the frames of one send pass
  std::unordered_map<std::int32_t, std::unique_ptr<H2Stream>> streams_;
  std::size_t running_ = 0;   // stream tasks not yet ended
  std::size_t requests_ = 0;  // streams whose request started, until they go: not idle
  Event tasks_ended_;        // set when running_ drops to 0
  std::optional<TimerHandle> idle_timer_;
  double idle_since_ = 0;  // loop time the last request ended (arm_idle)
  std::optional<TimerHandle> stall_timer_;  // armed while an ended handler's answer waits
  std::uint64_t data_frames_ = 0;           // DATA frames sent: the stall timer's progress
  H2Guard guard_;
  bool waiting_ = false;     // the serving task waits for the socket
  bool going_away_ = false;  // GOAWAY submitted: the streams in flight finish, then the end
  bool calmed_ = false;      // terminated by the guard: no request starts any more
  bool broken_ = false;      // ended by a connection error: linger() before the close
  bool ended_ = false;       // the server ended it at once (close()): no lingering
  bool lingering_ = false;   // its write side ended: nothing more is written
  bool ending_ = false;      // end_streams() began: no timer is armed any more
};

}  // namespace corio::http::detail
