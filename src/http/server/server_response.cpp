// HttpConnection's answers (see server_connection.hpp): the head in the
// batch buffer st_->out, the body after it (or straight to the writer when it
// is large), files with sendfile(2) (whole, or the ranges file_ranges.hpp
// decided on), streams chunked.
#include <sys/sendfile.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <system_error>

#include <fmt/core.h>

#include <corio/errors.hpp>
#include <corio/event_loop.hpp>

#include "http/server/answer_sink.hpp"
#include "http/server/server_connection.hpp"
#include "http/wire/body_file.hpp"

namespace corio::http::detail {

namespace {

// Bodies above this skip the batch buffer: one copy fewer, and a big body
// does not sit in st_->out while the socket takes it.
constexpr std::size_t kCopyIntoBatch = 16 * 1024;

enum class Framing { length, chunked, none };

void append_field(std::string& out, std::string_view name, std::string_view value) {
  out += name;
  out += ": ";
  out += value;
  out += "\r\n";
}

// The fields of a handler's answer that the head writer acts on. Told
// apart by length first: most names then cost no comparison at all.
enum class Field { other, server, date, connection, content_length, transfer_encoding };

Field classify(std::string_view name) noexcept {
  switch (name.size()) {
    case 4: return iequals(name, "Date") ? Field::date : Field::other;
    case 6: return iequals(name, "Server") ? Field::server : Field::other;
    case 10: return iequals(name, "Connection") ? Field::connection : Field::other;
    case 14: return iequals(name, "Content-Length") ? Field::content_length : Field::other;
    case 17: return iequals(name, "Transfer-Encoding") ? Field::transfer_encoding : Field::other;
    default: return Field::other;
  }
}

bool is_framing_field(Field f) {
  return f == Field::content_length || f == Field::transfer_encoding || f == Field::connection;
}

// A handler's field the head writer does not write itself. Connection is
// ours ("close" is acted on, "keep-alive" follows the request), but other
// options are the handler's: the Upgrade of a 426 (RFC 9110 section 7.8),
// the whole field on a switching head.
bool passes_through(const Header& h, Field f, bool switching) {
  if (!is_framing_field(f)) return true;
  if (f != Field::connection) return false;
  return switching || (!iequals(h.value, "close") && !iequals(h.value, "keep-alive"));
}

// Which of those a handler's answer has, in one pass.
struct Present {
  bool server = false;
  bool date = false;
  bool close = false;  // the first Connection field says close
};

Present present_fields(const Headers& headers) {
  Present p;
  bool connection = false;
  for (const Header& h : headers) {
    const Field f = classify(h.name);
    p.server = p.server || f == Field::server;
    p.date = p.date || f == Field::date;
    if (f == Field::connection && !connection) {
      connection = true;
      p.close = iequals(h.value, "close");
    }
  }
  return p;
}

// "HTTP/1.1 200 OK\r\n", put together on the stack and appended once:
// each append is a call and a memcpy. (The status is printed unsigned, as
// it always was; no reason phrase is as long as 32 characters.)
void append_status_line(std::string& out, int status) {
  const std::string_view reason = reason_phrase(status).substr(0, 32);
  char line[64] = "HTTP/1.1 ";
  char* p = std::to_chars(line + 9, line + 29, static_cast<std::uint64_t>(status)).ptr;
  *p++ = ' ';
  p = std::copy(reason.begin(), reason.end(), p);
  *p++ = '\r';
  *p++ = '\n';
  out.append(line, static_cast<std::size_t>(p - line));
}

// "Content-Length: 13\r\n", appended once (see append_status_line).
void append_content_length(std::string& out, std::uint64_t length) {
  char line[48] = "Content-Length: ";
  char* p = std::to_chars(line + 16, line + sizeof line - 2, length).ptr;
  *p++ = '\r';
  *p++ = '\n';
  out.append(line, static_cast<std::size_t>(p - line));
}

}  // namespace

void HttpConnection::write_head(const Response& resp, std::optional<std::uint64_t> length) {
  const Present present = present_fields(resp.headers);
  if (present.close || server_.stopping()) keep_alive_ = false;
  st_->sent_status = resp.status;
  // A head take_connection() sends: what follows is another protocol's.
  const bool switching = taken_;
  const Framing framing = has_no_body(resp.status) || switching ? Framing::none
                          : length                 ? Framing::length
                          : head().version_minor >= 1 ? Framing::chunked
                                                     : Framing::none;  // 1.0: until close
  if (framing == Framing::none && !length && !has_no_body(resp.status)) keep_alive_ = false;

  append_status_line(st_->out, resp.status);
  const std::string& server_name = shared().options.server_name;
  if (!present.server && !present.date) {
    st_->out += server_.date().fields();  // both, the usual case: one cached block
  } else {
    if (!server_name.empty() && !present.server) append_field(st_->out, "Server", server_name);
    if (!present.date) append_field(st_->out, "Date", server_.date().now());
  }
  if (framing == Framing::length) {
    append_content_length(st_->out, *length);
  } else if (framing == Framing::chunked) {
    st_->out += "Transfer-Encoding: chunked\r\n";
  }
  if (!keep_alive_ && !switching) {  // a switching head's Connection is the handler's
    st_->out += "Connection: close\r\n";
  } else if (head().version_minor == 0 && !switching) {
    st_->out += "Connection: keep-alive\r\n";
  }
  for (const Header& h : resp.headers) {
    if (passes_through(h, classify(h.name), switching)) append_field(st_->out, h.name, h.value);
  }
  st_->out += "\r\n";
}

bool HttpConnection::needs_wait(Response& resp) {
  if (!valid_fields(resp.headers)) refuse_bad_fields(resp, head().target, reported_task());
  return !resp.file_path.empty() || resp.producer;
}

std::uint64_t HttpConnection::send_body(Response& resp) {
  write_head(resp, resp.body.size());
  if (head_only_ || has_no_body(resp.status)) return 0;
  if (resp.body.size() <= kCopyIntoBatch) {
    st_->out += resp.body;
  } else {
    flush();
    write(resp.body);
  }
  return resp.body.size();
}

// The AnswerSink of an HTTP/1.1 connection: the head and what follows it
// into the batch buffer, files by sendfile(2), streams chunked (until
// close for an HTTP/1.0 peer).
struct HttpConnection::Sink final : AnswerSink {
  HttpConnection& c;
  explicit Sink(HttpConnection& conn) noexcept : c(conn) {}
  const RequestHead& request() const noexcept override { return c.head(); }
  bool head_only() const noexcept override { return c.head_only_; }
  void head(const Response& resp, std::optional<std::uint64_t> length) override {
    c.write_head(resp, length);
    // A stream's head goes at once: its first piece may be long in coming (events).
    if (!length && !c.head_only_ && !has_no_body(resp.status)) c.flush();
  }
  void append(std::string_view bytes) override { c.st_->out += bytes; }
  Coro<void> file_range(int fd, ByteRange range) override { return c.send_range(fd, range); }
  Coro<void> piece(std::string_view bytes) override {
    if (c.writer_.is_closing()) {
      throw std::system_error(ECONNRESET, std::generic_category(), "connection closed");
    }
    if (c.head().version_minor >= 1) {
      std::string frame = fmt::format("{:x}\r\n", bytes.size());
      frame += bytes;
      frame += "\r\n";
      c.write(frame);
    } else {
      c.write(bytes);
    }
    // A failed send shows in is_closing() above, at the next piece.
    return c.drain();
  }
  void end_stream() override {
    if (c.head().version_minor >= 1) c.write("0\r\n\r\n");
  }
  void abort_stream() noexcept override {
    c.keep_alive_ = false;
    c.writer_.abort();
  }
  std::uint64_t whole(Response& resp) override { return c.send_body(resp); }
};

Coro<std::uint64_t> HttpConnection::send(Response& resp) {
  if (!needs_wait(resp)) co_return send_body(resp);
  Sink sink(*this);
  if (!resp.file_path.empty()) co_return co_await send_file(sink, resp);
  co_return co_await send_stream(sink, resp, reported_task());
}

// TLS encrypts in user space: the file has to pass through it.
Coro<void> HttpConnection::send_range(int fd, ByteRange range) {
  flush();
  if (tls_) {
    co_await copy_file(fd, range.first, range.length());
  } else {
    co_await sendfile_all(fd, range.first, range.length());
  }
}

Coro<void> HttpConnection::sendfile_all(int fd, std::uint64_t from, std::uint64_t size) {
  // The head first, in order: sendfile must not overtake buffered bytes.
  if (!writer_.is_flushed()) co_await wait_writable();
  // sendfile has no MSG_NOSIGNAL: a peer gone mid-file is EPIPE only
  // because the EventLoop ignores SIGPIPE (see docs/asyncio-to-corio.md).
  off_t offset = static_cast<off_t>(from);
  const std::uint64_t end = from + size;
  while (static_cast<std::uint64_t>(offset) < end) {
    const std::uint64_t left = end - static_cast<std::uint64_t>(offset);
    const ssize_t n = ::sendfile(writer_.fileno(), fd, &offset, std::min<std::uint64_t>(left, 1 << 30));
    if (n > 0) {
      sent_by_hand(static_cast<std::uint64_t>(n));
      continue;
    }
    if (n == 0) throw std::system_error(EIO, std::generic_category(), "file shrank while sent");
    if (errno == EINTR) continue;
    if (errno != EAGAIN) throw std::system_error(errno, std::generic_category(), "sendfile");
    co_await wait_writable();
  }
}

Coro<void> HttpConnection::copy_file(int fd, std::uint64_t from, std::uint64_t size) {
  for (std::uint64_t offset = from; offset < from + size;) {
    std::string piece = read_piece(fd, offset, from + size - offset);
    offset += piece.size();
    write(piece);
    recycle_piece(std::move(piece));
    co_await drain();
  }
}

// The status of the head that went out: a handler's 200 for a file can
// turn into the 404 or 403 that send_file() answered instead.
void HttpConnection::log_access(std::uint64_t bytes) {
  const AccessLog& log = shared().options.access_log;
  if (!log) return;
  // Not kept between requests: an idle connection holds no string for it.
  const std::string remote = peername();
  const auto took = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::steady_clock::now() - st_->started);
  log(AccessLogEntry{remote, head().method, head().target, st_->sent_status, bytes, took});
}

}  // namespace corio::http::detail
