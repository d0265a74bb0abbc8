// H2Stream's answer side, the AnswerSink (see h2_stream.hpp): the head as
// a HEADERS frame, the body through nghttp2's data provider out of the
// stream's bounded buffer.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <system_error>
#include <vector>

#include <corio/errors.hpp>

#include "http/h2/h2_connection.hpp"
#include "http/h2/h2_session.hpp"
#include "http/h2/h2_stream.hpp"
#include "http/h2/h2_tunnel.hpp"

namespace corio::http::detail {

namespace {

// Fields HTTP/2 forbids (RFC 9113 section 8.2.2), and the framing ones
// the server sets itself.
bool dropped(std::string_view lower) {
  static constexpr std::string_view kDropped[] = {"connection", "keep-alive", "proxy-connection",
                                                  "transfer-encoding", "upgrade", "content-length"};
  return std::find(std::begin(kDropped), std::end(kDropped), lower) != std::end(kDropped);
}

// The answer's fields as nghttp2 takes them: lower-case names (RFC 9113
// section 8.2.1), :status first, then Date, Server and Content-Length
// unless the handler set its own Date and Server. nghttp2 copies them as
// they are submitted, so the list only points: at the Response's values,
// the date cache, the options, and its own arena of lowered names and
// numbers. Two allocations per answer, where a string per field cost the
// h2 request about 10% of its instructions (callgrind, GET /hello).
class FieldList {
 public:
  FieldList(const Response& resp, std::optional<std::uint64_t> length, LoopServer& server) {
    std::size_t names = 0;
    for (const Header& h : resp.headers) names += h.name.size();
    arena_.reserve(names + 2 * kNumber);  // never reallocated: nv_ points into it
    nv_.reserve(resp.headers.size() + 4);
    add(":status", number(static_cast<std::uint64_t>(resp.status)));
    bool date = false;
    bool name = false;
    for (const Header& h : resp.headers) {
      const std::string_view lower = lowered(h.name);
      if (dropped(lower)) continue;
      date = date || lower == "date";
      name = name || lower == "server";
      add(lower, h.value);
    }
    if (!date) add("date", server.date().now());
    const std::string& server_name = server.shared().options.server_name;
    if (!name && !server_name.empty()) add("server", server_name);
    if (length && !has_no_body(resp.status)) add("content-length", number(*length));
  }
  const nghttp2_nv* data() const noexcept { return nv_.data(); }
  std::size_t size() const noexcept { return nv_.size(); }

 private:
  static constexpr std::size_t kNumber = 20;  // digits of a 64-bit number

  std::string_view kept(std::string_view bytes) {
    const std::size_t at = arena_.size();
    arena_.append(bytes);
    return std::string_view(arena_).substr(at);
  }
  std::string_view lowered(std::string_view name) {
    if (std::none_of(name.begin(), name.end(), [](char ch) { return ch >= 'A' && ch <= 'Z'; })) return name;
    const std::size_t at = arena_.size();
    for (const char ch : name) arena_.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
    return std::string_view(arena_).substr(at);
  }
  std::string_view number(std::uint64_t n) {
    char digits[kNumber];
    const auto end = std::to_chars(std::begin(digits), std::end(digits), n).ptr;
    return kept(std::string_view(digits, static_cast<std::size_t>(end - digits)));
  }
  void add(std::string_view name, std::string_view value) {
    nv_.push_back({reinterpret_cast<std::uint8_t*>(const_cast<char*>(name.data())),
                   reinterpret_cast<std::uint8_t*>(const_cast<char*>(value.data())), name.size(),
                   value.size(), NGHTTP2_NV_FLAG_NONE});
  }
  std::string arena_;
  std::vector<nghttp2_nv> nv_;
};

}  // namespace

// A body follows unless there is none to send: then the HEADERS frame ends
// the stream.
void H2Stream::head(const Response& resp, std::optional<std::uint64_t> length) {
  const FieldList fields(resp, length, conn_.loop_server());
  const bool body = !head_only_ && !has_no_body(resp.status) && (!length || *length > 0);
  const nghttp2_data_provider provider = body_provider(this);
  const int rv = nghttp2_submit_response(conn_.session(), id_, fields.data(), fields.size(),
                                         body ? &provider : nullptr);
  if (rv != 0) throw std::system_error(ECONNRESET, std::generic_category(), nghttp2_strerror(rv));
  out_done_ = !body;
  if (out_done_) answer_sent();
  conn_.wake();
}

// An answer given before the request's body came whole (a 413 refusing
// it, or a handler that did not read it): the peer may stop sending it
// (RFC 9113 section 8.1: RST_STREAM with NO_ERROR, queued after the
// answer's last frame). Not a tunnel's: its END_STREAM is a half-close,
// after which the peer ends its side when it is done (RFC 8441 section 5).
void H2Stream::answer_sent() noexcept {
  if (!in_done_ && !closed_ && !taken_)
    nghttp2_submit_rst_stream(conn_.session(), NGHTTP2_FLAG_NONE, id_, NGHTTP2_NO_ERROR);
}

void H2Stream::append(std::string_view bytes) {
  trim();
  out_ += bytes;
  resume();
}

// A piece read into a drained buffer becomes the buffer: the file's bytes
// are copied once, by the kernel, into the socket.
Coro<void> H2Stream::file_range(int fd, ByteRange range) {
  for (std::uint64_t at = range.first; at <= range.last;) {
    if (closed_) throw std::system_error(ECONNRESET, std::generic_category(), "HTTP/2 stream reset");
    std::string bytes = read_piece(fd, at, range.last + 1 - at);
    at += bytes.size();
    trim();
    if (pending() == 0) {
      out_ = std::move(bytes);
      out_at_ = 0;
      resume();
    } else {
      append(bytes);
    }
    co_await room();
  }
}

Coro<void> H2Stream::piece(std::string_view bytes) {
  if (closed_) throw std::system_error(ECONNRESET, std::generic_category(), "HTTP/2 stream reset");
  append(bytes);
  co_await room();
}

// Above kOutBuffer the producer waits for nghttp2 to take the bytes, as
// the peer's window lets it (within send_timeout: a window that stays
// shut resets the stream).
Coro<void> H2Stream::room() {
  while (pending() > kOutBuffer) {
    co_await wait(conn_.shared().options.send_timeout);
    if (closed_) throw std::system_error(ECONNRESET, std::generic_category(), "HTTP/2 stream reset");
  }
}

void H2Stream::end_stream() {
  out_done_ = true;
  resume();
}

void H2Stream::abort_stream() noexcept { reset(NGHTTP2_INTERNAL_ERROR); }

// The body moves into the stream's buffer: no copy before nghttp2's own.
std::uint64_t H2Stream::whole(Response& resp) {
  head(resp, resp.body.size());
  if (out_done_) return 0;  // HEAD, or a status without a body
  out_ = std::move(resp.body);
  out_at_ = 0;
  end_stream();
  return out_.size();
}

void H2Stream::resume() noexcept {
  if (deferred_) {
    deferred_ = false;
    nghttp2_session_resume_data(conn_.session(), id_);
  }
  conn_.wake();
}

// nghttp2's pull, as the peer's windows allow: how much the next DATA frame
// takes, which send_out() then refers to where it lies.
ssize_t H2Stream::read_out(std::size_t length, std::uint32_t* flags) noexcept {
  trim();
  const std::size_t n = std::min(length, pending());
  if (n == 0 && !out_done_) {
    deferred_ = true;
    return NGHTTP2_ERR_DEFERRED;
  }
  *flags |= NGHTTP2_DATA_FLAG_NO_COPY;
  conn_.data_sent();
  if (n == pending() && out_done_) {
    *flags |= NGHTTP2_DATA_FLAG_EOF;
    answer_sent();
  }
  if (pending() - n <= kOutBuffer) wake_.set();
  if (tunnel_ != nullptr) tunnel_->writable_now();
  return static_cast<ssize_t>(n);
}

void H2Stream::send_out(std::string_view header, std::size_t length) {
  H2Output& out = conn_.output();
  out.copy(header);
  if (out.refer(std::string_view(out_).substr(out_at_, length))) lent_in_ = out.passes();
  out_at_ += length;
}

bool H2Stream::lent() const noexcept { return lent_in_ == conn_.output().passes(); }

// Taken bytes are dropped from the buffer's front once they are half of it,
// so that a body that never drains completely does not grow it; a whole
// answer taken frees its memory too.
void H2Stream::trim() noexcept {
  if (lent()) return;
  if (pending() == 0) {
    if (out_done_) {
      std::string().swap(out_);
    } else {
      out_.clear();
    }
    out_at_ = 0;
  } else if (out_at_ > out_.size() / 2) {
    out_.erase(0, out_at_);
    out_at_ = 0;
  }
}

}  // namespace corio::http::detail
