// HttpConnection's request loop (see server_connection.hpp): read a head in
// place from the reader's buffer, run the handler, answer, repeat.
//
// Pipelining: responses go into the request state's batch (`out`) and are
// handed to the writer only when the connection is about to wait for the
// peer (fill(), rest()), so requests that arrived together are answered with
// one write, in order. Timeouts are
// deadlines the LoopServer's sweeper checks: a head has header_timeout from
// its first byte (from the accept for the first request), a kept-alive
// connection idle_timeout between requests, a body body_timeout between
// reads, each wait for the peer to take our bytes send_timeout, and a
// lingering close lingering_timeout between reads within lingering_time.
#include <sys/socket.h>

#include <algorithm>
#include <memory>

#include <corio/errors.hpp>
#include <corio/event_loop.hpp>
#include <corio/detail/socket_system.hpp>
#include <corio/http/request.hpp>

#include "http/h2/h2_connection.hpp"
#include "http/server/dispatch.hpp"
#include "http/server/server_connection.hpp"
#include "http/server/server_errors.hpp"
#include "http/wire/target.hpp"

namespace corio::http::detail {

using std::chrono::milliseconds;

namespace {

// Pipelined answers batched beyond this go out before the next
// request is handled.
constexpr std::size_t kMaxBatch = 64 * 1024;

double loop_time() { return get_running_loop().time(); }

}  // namespace

void HttpConnection::flush() {
  if (!st_ || st_->out.empty()) return;
  write(st_->out);
  st_->out.clear();
}

void HttpConnection::write(std::string_view bytes) {
  // Aborted under us (a timeout, a shutdown): what is left has nowhere to go.
  if (writer_.is_closing()) return;
  if (st_) st_->handed += bytes.size();  // none once a taken connection gave its state back
  writer_.write(bytes);
}

// Not a coroutine itself: when the writer took every byte (the usual
// case) the caller awaits the reader's read directly, one frame fewer.
Coro<std::size_t> HttpConnection::fill(Wait w) {
  flush();  // the peer may be waiting for these before it sends more
  if (writer_.get_write_buffer_size() > 0) return drain_and_fill(w);
  return start_read(w);
}

Coro<std::size_t> HttpConnection::drain_and_fill(Wait w) {
  co_await drain();
  co_return co_await start_read(w);
}

Coro<std::size_t> HttpConnection::start_read(Wait w) {
  if (!wait_clock_runs()) start_wait_clock(w);
  return reader_.fill_buffer();
}

// The read clock (a head's, a body's) is put back after the wait: it runs
// on from where it was.
// The rate window (sends_too_slowly) counts the time spent here only: the
// peer is not to blame for a handler that takes its time to produce.
Coro<void> HttpConnection::under_send_timeout(Coro<void> wait) {
  const Wait read_wait = timed_wait();
  const std::uint32_t read_deadline = deadline;
  start_wait_clock(Wait::send);
  RequestState& st = *st_;  // only a request sends
  if (st.window_waited == 0) st.window_mark = st.handed - writer_.get_write_buffer_size();
  st.wait_began = loop_time();
  co_await std::move(wait);
  st.window_waited += loop_time() - st.wait_began;
  st.wait_began = 0;
  if (read_wait == Wait::none) {
    stop_wait_clock();
  } else {
    server_.arm(this, read_wait, read_deadline);
  }
}

// Past a deadline, or too slow. During a send wait, a reset rather than a
// FIN: a plain close leaves the unsent bytes to the kernel, which goes on
// trickling them to the slow reader from an orphaned socket (up to
// tcp_wmem's 4 MiB, for as long as it reads); SO_LINGER 0 drops them, as
// nginx's reset_timedout_connection does.
void HttpConnection::time_out() noexcept {
  const int fd = writer_.fileno();
  if (st_ && st_->wait_began != 0 && fd >= 0) {
    const ::linger reset{1, 0};
    (void)corio::detail::socket_system().set_option(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
  }
  writer_.abort();
}

// Called by the sweeper, during a wait. A window full of waiting in which
// the peer took less than the rate: too slow. Otherwise a new window starts
// (a client that was fast once may slow down later).
bool HttpConnection::sends_too_slowly(double now) noexcept {
  const ServerOptions& opts = shared().options;
  if (opts.min_send_rate == 0 || !st_ || st_->wait_began == 0) return false;
  RequestState& st = *st_;
  const double waited = st.window_waited + (now - st.wait_began);
  if (waited < std::chrono::duration<double>(opts.min_send_rate_window).count()) return false;
  const std::uint64_t taken = st.handed - writer_.get_write_buffer_size();
  if (static_cast<double>(taken - st.window_mark) <
      static_cast<double>(opts.min_send_rate) * waited) {
    return true;
  }
  st.window_mark = taken;
  st.window_waited = 0;
  st.wait_began = now;
  return false;
}

Coro<void> HttpConnection::drain() {
  if (writer_.get_write_buffer_size() == 0) co_return;
  co_await under_send_timeout(writer_.drain());
}

Coro<void> HttpConnection::wait_writable() {
  co_await under_send_timeout(writer_.wait_writable());
}

// Entered with the head's first bytes buffered (serve() waited for them).
Coro<bool> HttpConnection::read_head() {
  st_->parser.reset();
  for (;;) {
    std::size_t n = 0;
    std::optional<ParseError> error;
    try {
      n = st_->parser.parse(reader_.buffered(), head());
    } catch (const ParseError& e) {
      error = e;
    }
    if (error) {
      if (h2_preface()) co_return false;  // the connection is HTTP/2's now
      head().method.clear();  // for the access log: no request to name
      head().target.clear();
      head().headers.clear();  // half parsed: nothing in it for the error hook to trust
      co_await reject(error->status(), error->what());
      co_return false;
    }
    if (n > 0) {
      reader_.consume(n);
      stop_wait_clock();
      idle = false;
      // A peer pipelining without reading: push back. The writer's buffer
      // counts too, since a large body skips the batch and goes straight there.
      if (st_->out.size() + writer_.get_write_buffer_size() >= kMaxBatch) {
        flush();
        co_await drain();
      }
      co_return true;
    }
    if (co_await fill(Wait::header) == 0) {
      co_return false;  // EOF, or closed by a timeout
    }
  }
}

// h2c with prior knowledge (RFC 9113 section 3.3): the client preface's
// first line is a request line the parser refuses (505), so the HTTP/1.1
// path pays nothing for the check. Only as a connection's first request;
// nghttp2 checks the rest of the preface.
bool HttpConnection::h2_preface() {
  if (served_one_ || !shared().options.http2 || !reader_.buffered().starts_with(kH2PrefaceLine)) {
    return false;
  }
  to_h2();
  return true;
}

// Handed over as a taken connection is (nothing more of HTTP/1.1 on it),
// with its max_connections slot.
void HttpConnection::to_h2() {
  taken_ = true;
  keep_alive_ = false;
  stop_wait_clock();
  H2Connection::start(server_, reader_, writer_, give_slot());
}

// The clock is read for the access log only: a clock read per request
// is not free.
void HttpConnection::start_clock() {
  if (shared().options.access_log) st_->started = std::chrono::steady_clock::now();
}

bool HttpConnection::check_expect() {
  const std::optional<std::string_view> expect = head().headers.get("Expect");
  expect_continue_ = false;
  if (!expect) return true;
  if (!iequals(*expect, "100-continue")) return false;
  expect_continue_ = head().version_minor >= 1;
  return true;
}

// Awaits the handler and moves its answer into st_->resp (a plain `resp =
// co_await handler` would keep a Response in the awaiting frame); an
// exception is shaped there instead (handler_failed), so that no frame with
// a try block waits between respond() and the handler.
struct HttpConnection::HandlerAnswer {
  Coro<Response>::Awaiter inner;
  HttpConnection& conn;
  Request& req;
  bool await_ready() const noexcept { return false; }
  template <class P>
  bool await_suspend(std::coroutine_handle<P> awaiting) noexcept {
    return inner.await_suspend(awaiting);
  }
  void await_resume() {
    try {
      if (conn.taken_) {
        (void)inner.await_resume();  // dropped: the connection is another protocol's
      } else {
        conn.st_->resp = inner.await_resume();
      }
    } catch (...) {
      conn.handler_failed(req);
    }
  }
};

// Not a coroutine itself: what comes before the handler needs no frame,
// and the frame that awaits the handler (respond()'s) is kept small, since a
// WebSocket's handler keeps it for the connection's life.
Coro<void> HttpConnection::handle_request() {
  start_clock();
  served_one_ = true;
  keep_alive_ = keep_alive(head().version_minor, head().headers) && !server_.stopping();
  head_only_ = head().method == "HEAD";
  body_failed_ = false;
  try {
    st_->body.emplace(request_framing(head()), shared().options.limits);
  } catch (const ParseError& e) {
    st_->body.reset();
    return reject(e.status(), e.what());
  }
  use_absolute_form();
  if (head().method == "CONNECT") keep_alive_ = false;  // no tunnels: see server.hpp
  return respond();
}

// The answer is st_->resp's: every way here assigns it whole (the handler's,
// an error's), and it is emptied once sent.
Coro<void> HttpConnection::respond() {
  Request req(head(), this);
  if (check_expect()) {
    Coro<Response> handler;
    try {
      handler = start_handler(shared(), req, st_->resp);
    } catch (...) {
      handler_failed(req);
    }
    if (handler.valid()) {
      // Named: g++ 12 destroys an aggregate temporary inside a co_await twice.
      HandlerAnswer awaiting{std::move(handler).operator co_await(), *this, req};
      co_await awaiting;
    }
  } else {
    answer(shape_error(shared(), req, HTTPException(417, "Expect supports only 100-continue")));
    keep_alive_ = false;
  }
  if (taken_) co_return;  // logged at the switch, and the request state is gone
  Response& resp = st_->resp;
  // Known before the answer, so that it says "Connection: close": a broken
  // body, one the client holds back until a 100 that will not come, or the
  // rest of one the handler left unread that is too long (or broken) to
  // skip.
  if (body_failed_ || (expect_continue_ && !st_->body->done())) {
    keep_alive_ = false;
  } else if (keep_alive_ && !st_->body->done() && !co_await discard_body(resp)) {
    keep_alive_ = false;
  }
  if (!keep_alive_ && !st_->body->done()) linger_ = true;
  const std::uint64_t bytes = needs_wait(resp) ? co_await send(resp) : send_body(resp);
  log_access(bytes);
  // Its body's memory goes now, not with the request state. Destroyed and
  // made anew in place: what the frame's own Response cost, where an
  // assignment from an empty one would cost a move more per request.
  std::destroy_at(&resp);
  std::construct_at(&resp);
}

// RFC 9112 section 3.2.2: an absolute-form target is routed by its path,
// and its authority replaces the Host field (the parser let no target
// through that is neither this nor origin-, asterisk- or authority-form).
void HttpConnection::use_absolute_form() {
  if (head().target.front() == '/' || head().target == "*" || head().method == "CONNECT") return;
  const std::optional<target::AbsoluteForm> form = target::split_absolute_form(head().target);
  if (!form) return;
  head().headers.set("Host", std::string(form->authority));
  std::string origin = form->path_and_query.empty() || form->path_and_query.front() == '?'
                           ? "/"
                           : "";
  origin += form->path_and_query;
  head().target = std::move(origin);
}

// Called in a catch block: the handler's exception shaped into the answer.
void HttpConnection::handler_failed(Request& req) {
  if (taken_) {
    try {
      throw;
    } catch (const std::system_error&) {
      return;  // a taken-over connection whose peer went away: nobody to answer, nothing to report
    } catch (...) {
    }
  }
  bool broken = false;
  Response resp = failure_answer(shared(), req, broken, reported_task());
  if (broken) body_failed_ = true;  // the body cannot be skipped: answer and close
  answer(std::move(resp));
}

// A taken connection's request state went back to the server: no answer is
// sent on it, so none is kept.
void HttpConnection::answer(Response resp) {
  if (!taken_) st_->resp = std::move(resp);
}

void HttpConnection::send_continue() {
  if (!expect_continue_) return;
  expect_continue_ = false;
  st_->out += "HTTP/1.1 100 Continue\r\n\r\n";
  flush();
}

Coro<std::string> HttpConnection::read_chunk() {
  std::string piece;
  if (!st_ || !st_->body || st_->body->done()) co_return piece;  // !st_: taken, read before

  send_continue();
  try {
    for (;;) {
      const std::size_t used = st_->body->decode(reader_.buffered(), piece);
      reader_.consume(used);
      if (!piece.empty() || st_->body->done()) break;
      if (used > 0) continue;
      if (co_await fill(Wait::body) == 0) st_->body->finish_at_eof();
      stop_wait_clock();
    }
  } catch (const ParseError&) {
    body_failed_ = true;
    throw;
  }
  co_return piece;
}

Coro<std::string> HttpConnection::read_all() {
  std::string body;
  for (;;) {
    std::string piece = co_await read_chunk();
    if (piece.empty()) co_return body;
    if (body.empty()) {
      body = std::move(piece);
    } else {
      body += piece;
    }
  }
}

Coro<std::pair<StreamReader, StreamWriter>> HttpConnection::take_connection(Response answer) {
  if (taken_) throw RuntimeError("the connection was already taken over");
  co_await read_all();  // the protocol switches after the request's body, if any
  taken_ = true;
  keep_alive_ = false;
  write_head(answer, std::nullopt);
  flush();
  stop_wait_clock();
  co_await writer_.drain();
  log_access(0);  // the HTTP exchange ends here
  release_for_new_protocol();
  co_return std::pair<StreamReader, StreamWriter>(reader_, writer_);
}

// The connection may now idle for hours under its new owner, with the
// handler suspended above us: its Request stays valid (lifetime rule 5)
// with the head alone, copied to fit (a copy's field list and values have
// no spare capacity), and the rest of the request state goes back to the
// server. A body's trailers are the one thing the head does not carry: a
// request that had them keeps its state, without the answers' batch.
void HttpConnection::release_for_new_protocol() {
  if (st_->body && !st_->body->trailers().empty()) {
    std::string().swap(st_->out);
    return;
  }
  std::unique_ptr<RequestHead> head = std::move(st_->head);
  *head = RequestHead(*head);
  st_->head = std::make_unique<RequestHead>();
  server_.give_back(st_.take());
  st_.keep_head_alone(std::move(head));
}

const Headers& HttpConnection::trailers() const noexcept {
  static const Headers kNone;
  return st_ && st_->body ? st_->body->trailers() : kNone;
}

// The rest of a body the handler left unread, read and dropped so that the
// next request can be parsed; false when the connection should close
// instead (too much left, a broken body, one that stopped coming). A
// broken one also replaces the answer with the 400 it is (nginx does the
// same when it discards a body): the request was not what it said.
Coro<bool> HttpConnection::discard_body(Response& answer) {
  const std::uint64_t max_drain = shared().options.max_drain;
  const BodyFraming framing = request_framing(head());  // it passed once, in handle_request
  if (framing.kind == BodyFraming::Kind::length &&
      framing.length - st_->body->body_bytes() > max_drain) {
    co_return false;  // too long to skip: not a byte of it is waited for
  }
  std::string scratch;
  const std::uint64_t stop_at = st_->body->body_bytes() + max_drain;
  try {
    while (!st_->body->done()) {
      scratch.clear();
      const std::size_t used = st_->body->decode(reader_.buffered(), scratch);
      reader_.consume(used);
      if (st_->body->body_bytes() > stop_at) co_return false;
      if (used > 0 || st_->body->done()) continue;
      if (co_await fill(Wait::body) == 0) co_return false;
      stop_wait_clock();
    }
  } catch (const ParseError& e) {
    answer = shape_error(shared(), Request(head(), this), HTTPException(e.status(), e.what()));
    co_return false;
  }
  co_return true;
}

// Answers a request we cannot read; serve() then closes in stages.
Coro<void> HttpConnection::reject(int status, std::string message) {
  keep_alive_ = false;
  linger_ = true;
  head_only_ = false;
  start_clock();
  Response resp =
      shape_error(shared(), Request(head(), this), HTTPException(status, std::move(message)));
  const std::uint64_t bytes = co_await send(resp);
  log_access(bytes);
}

// A lingering close: our answer and our side's EOF first, then what the
// peer still sends is read and dropped, so that its unread bytes do not
// make the kernel reset the connection before the peer read the answer.
// Bounded by time (ServerOptions::lingering_time, lingering_timeout), as
// nginx does: the byte cap it had (1 MiB) cut off a client uploading a large
// body before it read its 413, and memory stays one read buffer anyway.
Coro<void> HttpConnection::linger() {
  flush();
  writer_.write_eof();
  const ServerOptions& opts = shared().options;
  const std::uint32_t end = deadline_after(opts.lingering_time);
  idle = true;  // nothing left to answer: a shutdown need not wait for us
  // Past its deadline the sweeper aborts the connection, which ends the read.
  while (earlier(loop_ms(false), end)) {
    const std::uint32_t next = deadline_after(opts.lingering_timeout);
    server_.arm(this, Wait::linger, earlier(end, next) ? end : next);
    if (co_await reader_.fill_buffer() == 0) break;
    reader_.consume(reader_.buffered().size());
  }
}

}  // namespace corio::http::detail
