// A response body read in place from the connection (see client_body.hpp).
#include "http/client/client_body.hpp"

#include <algorithm>
#include <limits>
#include <system_error>

#include <corio/event_loop.hpp>
#include <corio/http/client.hpp>
#include <corio/http/client_errors.hpp>
#include <corio/ssl.hpp>
#include <corio/timeout.hpp>

namespace corio::http::detail {

namespace {

std::optional<double> earlier(std::optional<double> total_at, double now,
                              std::optional<double> span) noexcept {
  if (span && (!total_at || now + *span < *total_at)) return now + *span;
  return total_at;
}

std::optional<double> seconds(const std::optional<std::chrono::milliseconds>& d) {
  if (!d) return std::nullopt;
  return std::chrono::duration<double>(*d).count();
}

}  // namespace

Deadline start_deadline(const ClientTimeout& t) {
  Deadline d;
  if (t.total) d.total_at = get_running_loop().time() + *seconds(t.total);
  d.sock_read = seconds(t.sock_read);
  d.connect = seconds(t.connect);
  d.sock_connect = t.sock_connect;
  return d;
}

std::optional<double> Deadline::for_read(double now) const noexcept {
  return earlier(total_at, now, sock_read);
}

std::optional<double> Deadline::for_connect(double now) const noexcept {
  return earlier(total_at, now, connect);
}

Coro<std::size_t> fill_buffer(StreamReader& reader, std::optional<double> deadline,
                              TlsEof tls_eof) {
  try {
    if (deadline) co_return co_await timeout_at(*deadline, reader.fill_buffer());
    co_return co_await reader.fill_buffer();
  } catch (const SslEofError&) {
    if (tls_eof == TlsEof::is_truncation) throw;
    co_return 0;
  } catch (const std::system_error& e) {
    throw ClientConnectionError(std::string("connection lost: ") + e.what(), e.code());
  }
}

namespace {

// The body's size is bounded by whoever reads it (read()'s max_size, or
// read_chunk's piece at a time), not by the decoder: a streamed download
// may be any size.
Limits unbounded_body(Limits limits) {
  limits.max_body = std::numeric_limits<std::uint64_t>::max();
  return limits;
}

}  // namespace

Http1Body::Http1Body(Lease lease, BodyFraming framing, const Limits& limits, bool keep_alive,
                     std::optional<Inflater> inflater, Deadline deadline)
    : lease_(std::move(lease)),
      decoder_(framing, unbounded_body(limits)),
      keep_alive_(keep_alive),
      inflater_(std::move(inflater)),
      deadline_(deadline) {
  // No body at all (HEAD, 204, 304, Content-Length: 0): the connection is
  // free at once, as aiohttp frees it.
  if (decoder_.done()) complete();
}

Coro<bool> Http1Body::pump(std::string& out, std::size_t max) {
  if (state_ == State::finished) co_return false;
  if (state_ != State::reading) {
    throw ClientConnectionError(state_ == State::released ? "the response was released"
                                                          : "an earlier read of this body failed");
  }
  try {
    co_return co_await pump_once(out, std::max<std::size_t>(max, 1));
  } catch (...) {
    // Timed out, cancelled, cut short, corrupt: where the next message
    // starts is unknown, so the connection cannot be reused.
    state_ = State::failed;
    lease_.release(false);
    throw;
  }
}

Coro<bool> Http1Body::pump_once(std::string& out, std::size_t max) {
  const std::size_t start = out.size();
  for (;;) {
    if (!spill_.empty()) {
      const std::size_t n = std::min(max, spill_.size());
      out.append(spill_, 0, n);
      spill_.erase(0, n);
      co_return true;
    }
    if (inflater_ && inflater_->inflate(out, max) > 0) co_return true;
    if (decoder_.done()) {
      complete();
      co_return false;
    }
    if (!lease_.reader.buffered().empty()) {
      const std::size_t used = decode_buffered(out, start, max);
      if (out.size() > start) co_return true;
      if (used > 0) continue;
    }
    co_await fill_or_end();
  }
}

std::size_t Http1Body::decode_buffered(std::string& out, std::size_t start, std::size_t max) {
  const std::string_view buf = lease_.reader.buffered();
  std::string& sink = inflater_ ? scratch_ : out;
  // Compressed bytes all go to the inflater, which bounds its output; plain
  // ones are sliced so at most max come out (chunk framing only shrinks).
  const std::size_t slice = inflater_ ? buf.size() : max;
  std::size_t used = 0;
  try {
    used = decoder_.decode(buf.substr(0, slice), sink);
    if (used == 0 && buf.size() > slice) used = decoder_.decode(buf, sink);  // a chunk line longer than max
  } catch (const ParseError& e) {
    // A bad chunk size or chunk end: the head was fine, the body is not
    // what it says (aiohttp's TransferEncodingError, a ClientPayloadError).
    throw ClientPayloadError(std::string("the response body is malformed: ") + e.what());
  }
  lease_.reader.consume(used);
  if (inflater_) {
    inflater_->feed(scratch_);
    scratch_.clear();
  } else if (out.size() - start > max) {
    spill_.assign(out, start + max);
    out.resize(start + max);
  }
  return used;
}

Coro<void> Http1Body::fill_or_end() {
  std::size_t n = 0;
  try {
    n = co_await fill_buffer(lease_.reader, deadline_.for_read(get_running_loop().time()),
                             TlsEof::is_truncation);
  } catch (const SslEofError& e) {
    // Without close_notify the end may be an attacker's or a crash's cut,
    // not the server's: a body read until close would be accepted short.
    throw ClientPayloadError(
        std::string("the body was cut short: the TLS peer closed without close_notify (") +
        e.what() + ")");
  } catch (const ClientConnectionError& e) {
    throw ClientPayloadError(std::string("the body was cut short: ") + e.what());
  }
  if (n > 0) co_return;
  try {
    decoder_.finish_at_eof();
  } catch (const ParseError& e) {
    throw ClientPayloadError(std::string("the response body is not complete: ") + e.what());
  }
  keep_alive_ = false;  // a body delimited by the connection's end
}

void Http1Body::complete() {
  if (inflater_) inflater_->finish();
  state_ = State::finished;
  lease_.release(keep_alive_);
}

void Http1Body::release() noexcept {
  if (state_ != State::reading) return;
  state_ = State::released;
  // At the body's end the connection is at a message boundary even if the
  // inflater still holds output nobody wanted: reusable.
  lease_.release(keep_alive_ && decoder_.done());
}

}  // namespace corio::http::detail
