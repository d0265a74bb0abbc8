// H2Stream's request side and its task (see h2_stream.hpp): the head and
// body as nghttp2 delivers them, the handler run through the server's
// dispatch, the answer through the shared answer code (h2_answer.cpp).
#include "http/h2/h2_stream.hpp"

#include <charconv>
#include <new>

#include <corio/errors.hpp>
#include <corio/event_loop.hpp>
#include <corio/timeout.hpp>

#include "http/h2/h2_connection.hpp"
#include "http/h2/h2_tunnel.hpp"
#include "http/server/dispatch.hpp"
#include "http/server/server_errors.hpp"

namespace corio::http::detail {

H2Stream::H2Stream(H2Connection& conn, std::int32_t id) : conn_(conn), id_(id) {
  head_.version_minor = 0;  // Request::version() says {2, 0}
}

// Nothing the handler read is owed back to the peer's window any more, but
// the connection's window still counts what was left unread.
H2Stream::~H2Stream() {
  if (tunnel_ != nullptr) tunnel_->detach(in_done_ && unread() == 0);
  if (unread() != 0) nghttp2_session_consume_connection(conn_.session(), unread());
  if (!lent()) return;
  // Closed in the send pass that refers to its answer: the buffer stays
  // until the pass's write (a moved string keeps its bytes where they are:
  // referred-to payloads are never short enough to be stored inline).
  try {
    conn_.output().keep(std::move(out_));
  } catch (const std::bad_alloc&) {
    conn_.output().drop();  // out of memory: the pass's frames are lost, not read from freed memory
  }
}

// Pseudo-header fields make the request line (nghttp2 checked that they
// come first, once each, and that no connection-specific field is there);
// :authority stands in for Host (RFC 9113 section 8.3.1). Past the limits
// the head is not kept, and the answer is a 431.
bool H2Stream::add_field(std::string_view name, std::string_view value) {
  const Limits& limits = conn_.shared().options.limits;
  head_bytes_ += name.size() + value.size() + 4;  // as "name: value\r\n"
  Headers& fields = in_trailers_ ? trailers_ : head_.headers;
  if (head_bytes_ > limits.max_head_bytes || fields.size() >= limits.max_headers) {
    too_large_ = true;
    return conn_.guard().head_within(head_bytes_);
  }
  if (in_trailers_ || name.empty() || name[0] != ':') {
    fields.add_copy(name, value);  // into the thread's spare strings (headers.hpp)
  } else if (name == ":method") {
    head_.method = value;
    head_only_ = value == "HEAD";
  } else if (name == ":path") {
    head_.target = value;
  } else if (name == ":protocol") {
    protocol_ = value;
  } else if (name == ":authority") {
    if (!head_.headers.contains("host")) head_.headers.add_copy("host", value);
    if (head_.target.empty()) head_.target = value;  // CONNECT's authority-form
  }
  return true;
}

// A declared Content-Length over Limits::max_body is refused before a byte
// of the body is read, as HTTP/1.1's (body_decoder.cpp): the handler never
// runs, the answer is a 413, and what DATA still comes is given back to
// the windows unread (nghttp2 checked the value is a number).
//
// An extended CONNECT (RFC 8441 section 4; nghttp2 let :protocol through
// only because the server's SETTINGS allow it) is shown to the router as
// the HTTP/1.1 Upgrade it replaces: a GET with `Upgrade: <protocol>`. Its
// DATA is the tunnel's, never a body: no max_body applies to it.
void H2Stream::head_done() noexcept {
  in_trailers_ = true;
  if (head_.method == "CONNECT" && !protocol_.empty() && !too_large_) {
    try {
      head_.headers.add("upgrade", std::move(protocol_));
      head_.method = "GET";
      tunnel_wanted_ = true;
    } catch (const std::bad_alloc&) {
      too_large_ = true;  // answered 431, as a head it cannot keep
    }
    return;
  }
  const std::string_view declared = head_.headers.get_or("content-length", "");
  std::uint64_t length = 0;
  const auto [end, ec] =
      std::from_chars(declared.data(), declared.data() + declared.size(), length);
  if (ec == std::errc() && end != declared.data() &&
      length > conn_.shared().options.limits.max_body) {
    over_limit_ = true;
  }
}

void H2Stream::body_data(std::string_view bytes) {
  in_total_ += bytes.size();
  if (in_total_ > conn_.shared().options.limits.max_body && !tunnel_wanted_) over_limit_ = true;
  if (discard_ || over_limit_) {
    nghttp2_session_consume(conn_.session(), id_, bytes.size());  // nobody will read it
  } else {
    in_ += bytes;
  }
  wake_.set();
  if (tunnel_ != nullptr) tunnel_->readable_now();
}

void H2Stream::body_end() noexcept {
  in_done_ = true;
  wake_.set();
  if (tunnel_ != nullptr) tunnel_->readable_now();
}

void H2Stream::closed() noexcept {
  closed_ = true;
  linger_.stop();
  wake_.set();
  if (tunnel_ != nullptr) {
    tunnel_->readable_now();
    tunnel_->writable_now();
  }
}

void H2Stream::cancel() noexcept {
  if (!task_ended_ && task_.task() != nullptr) task_.cancel("HTTP/2 connection closed");
}

std::string H2Stream::peername() const { return conn_.peername(); }

// Waits for wake_ within limit; then the stream is reset (the peer's
// fault: a body that stopped coming, a window that stays shut).
Coro<void> H2Stream::wait(std::chrono::milliseconds limit) {
  wake_.clear();
  try {
    co_await wait_for(wake_.wait(), limit);
  } catch (const TimeoutError&) {
    reset(NGHTTP2_CANCEL);
    throw std::system_error(ETIMEDOUT, std::generic_category(), "HTTP/2 stream timed out");
  }
}

void H2Stream::stalled() noexcept { reset(NGHTTP2_CANCEL); }

void H2Stream::reset(std::uint32_t code) noexcept {
  if (closed_) return;
  nghttp2_submit_rst_stream(conn_.session(), NGHTTP2_FLAG_NONE, id_, code);
  conn_.wake();
}

Coro<std::string> H2Stream::read_chunk() {
  for (;;) {
    if (over_limit_) throw ParseError(413, "the request body is over the limit");
    if (!in_.empty()) {
      std::string piece = std::move(in_);
      in_.clear();
      give_back(piece.size());
      co_return piece;
    }
    if (in_done_) co_return std::string();
    if (closed_) throw std::system_error(ECONNRESET, std::generic_category(), "HTTP/2 stream reset");
    co_await wait(conn_.shared().options.body_timeout);
  }
}

void H2Stream::give_back(std::size_t n) noexcept {
  nghttp2_session_consume(conn_.session(), id_, n);
  conn_.wake();  // its WINDOW_UPDATE, when nghttp2 decides one is due
}

Coro<std::string> H2Stream::read_all() {
  std::string body;
  for (std::string piece; !(piece = co_await read_chunk()).empty();) body += piece;
  co_return body;
}

Coro<void> H2Stream::run(H2Stream* self) {
  try {
    co_await self->respond();
  } catch (...) {
    // Cancelled (the connection ends), or the stream went away under the
    // answer: nobody to answer, nothing to report.
  }
}

void H2Stream::started(TaskRef task) noexcept {
  task_ = std::move(task);
  task_ended_ = false;
  done_.stream = this;
  done_.fire = [](corio::detail::Callback* cb, corio::detail::FutureStateBase&) noexcept {
    static_cast<Done*>(cb)->stream->task_done();
  };
  task_.task()->add_callback(&done_);
}

// Lifetime rule 2 of h2_connection.hpp: however the task ended (run() may
// never have run), its connection hears of it; its frame (and the Request
// in it) is gone by then: a task's root frame is destroyed before its
// completion fires. A tunnel whose transport lives on (a WebSocket
// moved out of its handler) keeps reading.
void H2Stream::task_done() noexcept {
  task_ended_ = true;
  discard_ = tunnel_ == nullptr;
  if (discard_ && !in_.empty()) {
    nghttp2_session_consume(conn_.session(), id_, in_.size());
    std::string().swap(in_);
  }
  conn_.stream_done(this);  // may destroy this
}

Coro<void> H2Stream::respond() {
  if (conn_.shared().options.access_log) started_ = std::chrono::steady_clock::now();
  Request req(head_, static_cast<RequestSource*>(this));
  Response resp = co_await answer(req);
  if (closed_ || taken_) co_return;  // taken: whatever the handler returned is dropped
  if (!valid_fields(resp.headers)) refuse_bad_fields(resp, head_.target, current_task());
  std::uint64_t bytes = 0;
  if (!resp.file_path.empty()) {
    bytes = co_await send_file(*this, resp);
    end_stream();  // a file's body has no end of its own on HTTP/1.1: its length says it
  } else if (resp.producer) {
    bytes = co_await send_stream(*this, resp, current_task());
  } else {
    bytes = whole(resp);
  }
  log_access(resp.status, bytes);
}

Coro<Response> H2Stream::answer(Request& req) {
  const ServerShared& shared = conn_.shared();
  Response resp;
  if (too_large_) co_return shape_error(shared, req, HTTPException(431, "request header fields too large"));
  if (over_limit_)
    co_return shape_error(shared, req, HTTPException(413, "the body is over the size limit"));
  try {
    Coro<Response> handler = start_handler(shared, req, resp);
    if (handler.valid()) resp = co_await std::move(handler);
  } catch (const CancelledError&) {
    throw;
  } catch (...) {
    // A stream the peer reset has nobody to answer, and nothing to report.
    if (closed_) co_return Response();
    bool broken = false;  // on its own stream, a broken body harms no other request
    resp = failure_answer(shared, req, broken, current_task());
  }
  co_return resp;
}

void H2Stream::log_access(int status, std::uint64_t bytes) {
  const AccessLog& log = conn_.shared().options.access_log;
  if (!log) return;
  const std::string remote = peername();
  const auto took = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::steady_clock::now() - started_);
  log(AccessLogEntry{remote, head_.method, head_.target, status, bytes, took});
}

}  // namespace corio::http::detail
