// H2Stream's answer side, the AnswerSink (see h2_stream.hpp): the head as
// a HEADERS frame, the body through nghttp2's data provider out of the
// stream's bounded buffer.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <new>
#include <system_error>
#include <utility>
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
// numbers. Two buffers, where a string per field cost the h2 request about
// 10% of its instructions (callgrind, GET /hello); and those the thread's,
// kept from answer to answer (two of the ten allocations of an h2 GET
// /hello), unless a large head grew them.
class FieldList {
 public:
  FieldList(const Response& resp, std::optional<std::uint64_t> length, LoopServer& server)
      : arena_(scratch().arena), nv_(scratch().nv) {
    arena_.clear();
    nv_.clear();
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
  ~FieldList() {
    if (arena_.capacity() > kKeepBytes) std::string().swap(arena_);
    if (nv_.capacity() > kKeepFields) std::vector<nghttp2_nv>().swap(nv_);
  }
  FieldList(const FieldList&) = delete;
  FieldList& operator=(const FieldList&) = delete;
  const nghttp2_nv* data() const noexcept { return nv_.data(); }
  std::size_t size() const noexcept { return nv_.size(); }

 private:
  static constexpr std::size_t kNumber = 20;  // digits of a 64-bit number
  static constexpr std::size_t kKeepBytes = 1024;
  static constexpr std::size_t kKeepFields = 32;

  // One list is made at a time (head() submits it before it returns).
  struct Scratch {
    std::string arena;
    std::vector<nghttp2_nv> nv;
  };
  static Scratch& scratch() noexcept {
    thread_local Scratch s;
    return s;
  }

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
  std::string& arena_;
  std::vector<nghttp2_nv>& nv_;
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
  declared_ = length;
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
  given_ += bytes.size();
  resume();
}

// The range is read as nghttp2 takes it (take_file()), so none of it
// waits here for the peer's window; this waits until it was all taken.
// When the head's length says the body ends with it, its last DATA frame
// ends the stream: no empty frame (and pass) after it for end_stream().
Coro<void> H2Stream::file_range(int fd, ByteRange range) {
  if (closed_) throw std::system_error(ECONNRESET, std::generic_category(), "HTTP/2 stream reset");
  struct Done {  // however the wait ends, nothing reads the file any more
    H2Stream& s;
    ~Done() {
      s.file_.finish(s.conn_.output());
      s.file_ends_body_ = false;
    }
  } done{*this};
  file_.start(fd, range);
  given_ += range.length();
  file_ends_body_ = declared_ && given_ == *declared_;
  resume();
  while (file_.left() > 0) {
    co_await wait(conn_.shared().options.send_timeout);
    // A stream that took its last frame closes with it: not a reset.
    if (closed_ && file_.left() > 0) {
      throw std::system_error(ECONNRESET, std::generic_category(), "HTTP/2 stream reset");
    }
  }
  if (file_.error() != 0) throw std::system_error(file_.error(), std::generic_category(), "pread");
  out_done_ = out_done_ || file_ends_body_;
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
  if (out_done_) return;  // a file's last frame ended it (file_range())
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
// takes, which send_out() then refers to where it lies: out_'s bytes
// first, then the file's, read now.
ssize_t H2Stream::read_out(std::size_t length, std::uint32_t* flags) noexcept {
  trim();
  std::size_t n = std::min(length, pending());
  const bool from_file = n == 0 && file_.left() > 0;
  if (from_file) {
    n = take_file(length);
    if (n == 0) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;  // nghttp2 resets the stream
  }
  if (n == 0 && !out_done_) {
    deferred_ = true;
    return NGHTTP2_ERR_DEFERRED;
  }
  *flags |= NGHTTP2_DATA_FLAG_NO_COPY;
  conn_.data_sent();
  const std::size_t rest = from_file ? 0 : pending() - n;
  if (rest == 0 && file_.left() == 0 && (out_done_ || file_ends_body_)) {
    *flags |= NGHTTP2_DATA_FLAG_EOF;
    answer_sent();
  }
  if (from_file || rest <= kOutBuffer) wake_.set();
  if (tunnel_ != nullptr) tunnel_->writable_now();
  return static_cast<ssize_t>(n);
}

// Read ahead as far as the peer's windows let nghttp2 send (the
// connection's less what other streams read ahead for it), and the pass's
// room (h2_file.hpp) and a frame past it, as a pass ends past its bound
// by a frame at most (so a 64 KiB answer over TLS, its HEADERS frame
// first, is one read and one pass, not a second of the last 111 bytes).
// A failed read ends the range (file_range() throws its error): 0.
std::size_t H2Stream::take_file(std::size_t length) noexcept {
  H2Output& out = conn_.output();
  std::size_t ahead = length;
  if (file_.buffered() == 0) {
    nghttp2_session* session = conn_.session();
    const auto open = [](std::int64_t w) {
      return static_cast<std::size_t>(std::max<std::int64_t>(w, 0));
    };
    const std::int64_t shared = nghttp2_session_get_remote_window_size(session);
    const std::size_t connection = open(shared - static_cast<std::int64_t>(out.ahead()));
    const std::size_t stream = open(nghttp2_session_get_stream_remote_window_size(session, id_));
    ahead = std::max(length, std::min({stream, connection, out.read_room() + length}));
  }
  file_frame_ = file_.take(length, ahead, out);
  if (file_frame_.empty()) wake_.set();
  return file_frame_.size();
}

void H2Stream::send_out(std::string_view header, std::size_t length) {
  H2Output& out = conn_.output();
  out.copy(header);
  if (!file_frame_.empty()) {
    out.refer(std::exchange(file_frame_, {}));
    return;
  }
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
