// H2Connection's serving task and its streams' table (see h2_connection.hpp).
#include "http/h2/h2_connection.hpp"

#include <algorithm>
#include <cstdint>

#include <corio/errors.hpp>
#include <corio/event_loop.hpp>
#include <corio/timeout.hpp>

#include "http/h2/h2_session.hpp"
#include "http/h2/h2_stream.hpp"

namespace corio::http::detail {

void H2Connection::start(LoopServer& server, StreamReader reader, StreamWriter writer,
                         corio::detail::ServerSlot slot) {
  auto c = std::make_unique<H2Connection>(server, std::move(reader), std::move(writer),
                                          std::move(slot));
  server.adopt(c.get());  // now: a shutdown must not find the server drained in between
  if (server.stopping()) c->go_away();
  get_running_loop().create_task(serve(server.shared_from_this(), std::move(c)));
}

H2Connection::H2Connection(LoopServer& server, StreamReader reader, StreamWriter writer,
                           corio::detail::ServerSlot slot)
    : Adopted(&H2Connection::on_server_end, std::move(slot)),
      server_(server),
      reader_(std::move(reader)),
      writer_(std::move(writer)),
      session_(new_server_session(*this, server.shared().options)),
      guard_(server.shared().options, get_running_loop().time()) {
  if (server.shared().options.ssl) output_.set_over_tls();
}

H2Connection::~H2Connection() {
  stop_timers();     // their callbacks hold this
  streams_.clear();  // before the session: a stream's destructor may still speak to it
  nghttp2_session_del(session_);
}

// Lifetime rules 1 and 3: whatever ends the connection, its streams' tasks
// end before it does. `server` keeps the LoopServer alive while it runs.
Coro<void> H2Connection::serve([[maybe_unused]] std::shared_ptr<LoopServer> server,
                               std::unique_ptr<H2Connection> conn) {
  H2Connection& c = *conn;
  std::exception_ptr cancelled;
  try {
    co_await c.run();
    if (c.broken_ || c.calmed_) co_await c.linger();
  } catch (const CancelledError&) {
    cancelled = std::current_exception();
    c.writer_.abort();
  } catch (const std::system_error&) {
    // The peer reset or went away: this connection ends, quietly.
  }
  c.writer_.close();  // what nghttp2 last gave (a GOAWAY) goes out first
  co_await c.end_streams();
  c.release();
  if (cancelled) std::rethrow_exception(cancelled);
}

Coro<void> H2Connection::run() {
  idle_since_ = get_running_loop().time();
  arm_idle(shared().options.idle_timeout);
  for (;;) {
    int sent = send_now();
    if (sent == 0) {
      const bool ok = co_await send_pending();
      sent = ok ? 1 : -1;
    }
    if (sent < 0) break;
    if (nghttp2_session_want_read(session_) == 0 && nghttp2_session_want_write(session_) == 0) {
      break;  // GOAWAY went both ways (or one way with no stream left)
    }
    if (going_away_ && streams_.empty()) break;
    if (reader_.buffered().empty()) {
      const std::optional<std::size_t> got = reader_.try_fill();
      if (!got) {
        waiting_ = true;
        co_await reader_.readable();
        waiting_ = false;
        continue;  // bytes, or a stream's wake(): send first, then read
      }
      if (*got == 0) break;  // EOF, or closed by the server
    }
    if (!feed()) {
      broken_ = true;
      co_await send_pending();  // nghttp2's GOAWAY for the error, if it has one
      break;
    }
  }
}

bool H2Connection::feed() {
  const std::string_view in = reader_.buffered();
  const ssize_t n = nghttp2_session_mem_recv(
      session_, reinterpret_cast<const std::uint8_t*>(in.data()), in.size());
  if (n == NGHTTP2_ERR_FLOODED || n == NGHTTP2_ERR_TOO_MANY_CONTINUATIONS) {
    enhance_your_calm();  // nghttp2 ends the session for these without a GOAWAY of its own
  }
  if (n < 0) return false;  // a bad preface, a connection error: nghttp2 queued its GOAWAY
  reader_.consume(in.size());
  return true;
}

// Most passes end at once: an answer's frames that the socket takes, or
// nothing at all after a read that brought a request (its answer comes from
// the stream's task). Those run here, without send_pending()'s coroutine
// frame. At one stream per connection over TLS, a GET /hello made three
// passes, two of them with nothing to send: this saved about 1,400 of its
// 40,000 instructions (callgrind; send_h2_frames' frames alone were 600).
int H2Connection::send_now() { return send_h2_ready(session_, writer_, output_); }

Coro<bool> H2Connection::send_pending() {
  return send_h2_frames(session_, writer_, output_, shared().options.send_timeout);
}

void H2Connection::wake() noexcept {
  if (waiting_) corio::detail::interrupt_wait(reader_);
}

// Graceful: the streams the peer opened so far finish; nghttp2 ignores
// newer ones (RFC 9113 section 6.8).
void H2Connection::go_away() noexcept {
  if (going_away_) return;
  going_away_ = true;
  nghttp2_submit_goaway(session_, NGHTTP2_FLAG_NONE, nghttp2_session_get_last_proc_stream_id(session_),
                        NGHTTP2_NO_ERROR, nullptr, 0);
  wake();
}

// Graceful (shutdown()): a GOAWAY, and the streams in flight finish within
// the shutdown's deadline. Not graceful (close(), or past that deadline):
// the GOAWAY too, handed to the writer at once, then the connection closes
// and the serving task cancels what still runs.
void H2Connection::on_server_end(Adopted* self, bool graceful) noexcept {
  auto* c = static_cast<H2Connection*>(self);
  c->go_away();
  if (graceful) return;
  c->ended_ = true;
  if (!c->writer_.is_closing() && !c->lingering_) {
    (void)send_h2_pass(c->session_, c->writer_, c->output_, SIZE_MAX);  // unbounded: all at once
  }
  c->output_.release();
  c->writer_.close();
  c->wake();
}

// With no request for idle_timeout (none answered or being answered:
// a stream whose head never completes does not count, so a head trickled
// in CONTINUATION frames cannot hold the connection), the connection says
// goodbye and closes once the GOAWAY is out.
//
// The timer is not moved per request: a request that starts leaves it
// armed, and one that ends idle only notes when (idle_since_). When it
// fires it looks: busy, it goes (the last request's end arms it again);
// idle for less than the timeout, it sleeps the rest. A timer armed and
// cancelled per request cost 330 of an h2c GET's 24,300 instructions at one
// stream per connection (callgrind).
void H2Connection::arm_idle(std::chrono::duration<double> delay) {
  idle_timer_ = get_running_loop().call_later(delay, [this] {
    idle_timer_.reset();
    if (requests_ > 0) return;
    const std::chrono::duration<double> idle(get_running_loop().time() - idle_since_);
    const std::chrono::duration<double> timeout = shared().options.idle_timeout;
    if (idle < timeout) {
      arm_idle(timeout - idle);
      return;
    }
    going_away_ = true;
    nghttp2_session_terminate_session(session_, NGHTTP2_NO_ERROR);
    wake();
  });
}

// After a connection error's GOAWAY, a close with the peer's bytes unread
// would reset the connection, and the reset can destroy the GOAWAY before
// the peer reads it. So, as HTTP/1.1's error answers do (and within the
// same lingering_time and lingering_timeout), the write side ends after the
// GOAWAY and what the peer still sends is read and dropped until it
// closes. A close() ends that at once.
Coro<void> H2Connection::linger() {
  if (ended_ || writer_.is_closing()) co_return;  // closed (close()) or aborted (send_timeout)
  cancel_streams();                               // nobody will hear their answers
  lingering_ = true;
  writer_.write_eof();
  const ServerOptions& opts = shared().options;
  const double end =
      get_running_loop().time() + std::chrono::duration<double>(opts.lingering_time).count();
  try {
    while (!ended_) {
      reader_.consume(reader_.buffered().size());
      const std::optional<std::size_t> got = reader_.try_fill();
      if (got) {
        if (*got == 0) break;
        continue;
      }
      const double left = end - get_running_loop().time();
      if (left <= 0) break;
      waiting_ = true;
      co_await wait_for(reader_.readable(),
                        std::min<std::chrono::duration<double>>(
                            opts.lingering_timeout, std::chrono::duration<double>(left)));
      waiting_ = false;
    }
  } catch (const TimeoutError&) {
    // Quiet for lingering_timeout: enough.
  }
  waiting_ = false;
}

void H2Connection::cancel_streams() noexcept {
  for (const auto& [id, s] : streams_) {
    if (!s->task_ended()) s->cancel();
  }
}

// The streams' tasks end here, and streams with them: none of that arms a
// timer any more (ending_), as the connection goes once they have.
Coro<void> H2Connection::end_streams() {
  ending_ = true;
  stop_timers();
  cancel_streams();
  while (running_ > 0) {
    tasks_ended_.clear();
    co_await tasks_ended_.wait();
  }
  streams_.clear();
}

void H2Connection::stop_timers() noexcept {
  if (idle_timer_) idle_timer_->cancel();
  idle_timer_.reset();
  if (stall_timer_) stall_timer_->cancel();
  stall_timer_.reset();
}

H2Stream* H2Connection::stream(std::int32_t id) const noexcept {
  const auto it = streams_.find(id);
  return it == streams_.end() ? nullptr : it->second.get();
}

void H2Connection::open_stream(std::int32_t id) {
  streams_.emplace(id, std::make_unique<H2Stream>(*this, id));
}

// The task's end is heard from its completion (H2Stream::started()), not
// from its own last step: a task cancelled before its first step (the
// connection ended in the same read that brought the request) never runs.
bool H2Connection::start_request(H2Stream& s) {
  if (calmed_) return false;
  if (!guard_.may_start(running_)) {
    enhance_your_calm();
    return false;
  }
  guard_.earned();
  s.started(get_running_loop().create_task(H2Stream::run(&s)));
  ++running_;
  ++requests_;
  return true;
}

void H2Connection::control_frame(std::uint8_t type) noexcept {
  if (!calmed_ && !guard_.frame(type, get_running_loop().time())) enhance_your_calm();
}

// The session ends once its GOAWAY is out; what it still reads starts nothing.
void H2Connection::enhance_your_calm() noexcept {
  calmed_ = true;
  going_away_ = true;
  nghttp2_session_terminate_session(session_, NGHTTP2_ENHANCE_YOUR_CALM);
  wake();
}

void H2Connection::data_sent() noexcept {
  ++data_frames_;
  guard_.earned();
}

// A handler ended, its answer still waiting for the peer's window (nghttp2
// keeps the stream open). A producer's wait for that window is bounded by
// send_timeout (h2_answer.cpp); so is this one: with no DATA sent for that
// long, such streams are reset (CANCEL), close, and the idle timeout
// takes over. A peer that never opens its window holds the answers already
// made, and the connection, no longer.
void H2Connection::watch_stalls() {
  if (stall_timer_) return;
  stall_timer_ =
      get_running_loop().call_later(shared().options.send_timeout, [this, mark = data_frames_] {
        stall_timer_.reset();
        bool waiting = false;
        for (const auto& [id, s] : streams_) {
          // A tunnel still open sends when its user writes, not as an
          // answer does: its writes have their own timeout.
          if (!s->task_ended() || s->is_closed() || s->tunneled()) continue;
          if (data_frames_ == mark) s->stalled();
          waiting = true;
        }
        if (waiting && data_frames_ != mark) watch_stalls();
        wake();
      });
}

void H2Connection::close_stream(std::int32_t id) noexcept {
  H2Stream* s = stream(id);
  if (s == nullptr) return;
  s->closed();
  if (s->task_ended()) erase(id);
}

void H2Connection::stream_done(H2Stream* s) noexcept {
  if (--running_ == 0) tasks_ended_.set();
  if (s->is_closed()) {
    erase(s->id());
  } else if (!s->tunneled()) {
    watch_answers();
  }
  // Its last DATA (or RST_STREAM) may be waiting, or the connection may end
  // with it. An answer already sent needs no pass: a wake per ended stream
  // cost one (and a read try) per request at one stream per connection.
  if (going_away_ || nghttp2_session_want_write(session_) != 0 ||
      nghttp2_session_want_read(session_) == 0) {
    wake();
  }
}

void H2Connection::watch_answers() noexcept {
  if (stall_timer_ || ending_) return;
  try {
    watch_stalls();
  } catch (...) {
    go_away();  // out of memory for a timer: as in erase()
  }
}

void H2Connection::erase(std::int32_t id) noexcept {
  const auto it = streams_.find(id);
  const bool request = it->second->had_request();
  streams_.erase(it);
  if (!request || --requests_ > 0 || going_away_ || ending_) return;
  idle_since_ = get_running_loop().time();
  if (!idle_timer_) {
    try {
      arm_idle(shared().options.idle_timeout);
    } catch (...) {
      go_away();  // out of memory for a timer: end the connection rather than keep it unwatched
    }
  }
}

}  // namespace corio::http::detail
