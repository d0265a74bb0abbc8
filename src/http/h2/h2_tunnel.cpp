// The tunnel of an extended CONNECT (see h2_tunnel.hpp): H2StreamTransport,
// and the side of H2Stream it uses.
#include "http/h2/h2_tunnel.hpp"

#include <algorithm>
#include <cerrno>
#include <memory>
#include <system_error>

#include <corio/errors.hpp>
#include <corio/event_loop.hpp>
#include <corio/stream_reader.hpp>
#include <corio/timeout.hpp>

#include "http/h2/h2_connection.hpp"
#include "http/h2/h2_stream.hpp"

namespace corio::http::detail {

namespace {

[[noreturn]] void throw_reset() {
  throw std::system_error(ECONNRESET, std::generic_category(), "HTTP/2 stream reset");
}

}  // namespace

// A read moves no bytes but those it takes; the consumed front is dropped
// once it is both over kCompactAt and no smaller than what is left, so
// compacting costs at most as much as the reads did.
std::size_t take_front(std::string& in, std::size_t& at, std::span<char> buf) noexcept {
  constexpr std::size_t kCompactAt = 16 * 1024;
  const std::size_t n = std::min(buf.size(), in.size() - at);
  in.copy(buf.data(), n, at);
  at += n;
  if (at == in.size()) {
    in.clear();
    at = 0;
  } else if (at >= kCompactAt && at >= in.size() - at) {
    in.erase(0, at);
    at = 0;
  }
  return n;
}

// ---- H2Stream's side -----------------------------------------------------------------

// The answer's head goes now, with no END_STREAM: from here on its DATA
// frames are the tunnel's bytes (RFC 8441 section 5).
Coro<std::pair<StreamReader, StreamWriter>> H2Stream::take_connection(Response answer) {
  if (taken_) throw RuntimeError("take_connection() called twice");
  if (!tunnel_wanted_) throw RuntimeError("take_connection() on an HTTP/2 request that is no extended CONNECT");
  if (answer.status < 200 || answer.status > 299) throw ValueError("an extended CONNECT is taken with a 2xx");
  if (closed_) throw_reset();
  auto transport = std::make_unique<H2StreamTransport>(get_running_loop(), *this, conn_.peer_address(),
                                                       conn_.local_address());
  head(answer, std::nullopt);
  taken_ = true;
  tunnel_ = transport.get();
  co_return corio::detail::make_streams(std::move(transport), kDefaultStreamLimit);
}

LoopServer& H2Stream::loop_server() const noexcept { return conn_.loop_server(); }

corio::detail::ServerSlot H2Stream::new_slot() const noexcept { return conn_.another_slot(); }

std::optional<std::size_t> H2Stream::tunnel_read(std::span<char> buf) {
  if (unread() != 0) {
    const std::size_t n = take_front(in_, in_at_, buf);
    give_back(n);
    return n;
  }
  if (in_done_) return 0;
  if (closed_) throw_reset();
  return std::nullopt;
}

std::size_t H2Stream::tunnel_write(std::string_view data) {
  if (closed_ || out_done_) throw_reset();
  trim();
  if (pending() >= kOutBuffer) return 0;
  const std::size_t n = std::min(data.size(), kOutBuffer - pending());
  append(data.substr(0, n));
  return n;
}

std::chrono::milliseconds H2Stream::tunnel_timeout() const noexcept {
  return conn_.shared().options.send_timeout;
}

std::string H2Stream::tunnel_info(std::string_view name) const { return conn_.extra_info(name); }

void H2Stream::tunnel_end() {
  if (closed_) throw_reset();
  end_stream();
}

// What the peer still sends is given back unread, until its END_STREAM
// closes the stream, for lingering_time at most (TunnelLinger: the time a
// closing connection keeps reading, h2_connection.cpp). With the handler's
// task over, the stall timer watches it too: a peer that never takes our
// last DATA keeps it no longer than send_timeout.
void H2Stream::tunnel_gone() noexcept {
  tunnel_ = nullptr;
  discard_ = true;
  if (unread() != 0) give_back(unread());
  std::string().swap(in_);
  in_at_ = 0;
  if (closed_) return;
  if (!out_done_) end_stream();
  linger_.start(*this, conn_.shared().options.lingering_time);
  if (task_ended_) conn_.watch_answers();
}

// ---- TunnelLinger -----------------------------------------------------------------------

void TunnelLinger::start(H2TunnelEnd& end, std::chrono::milliseconds after) noexcept {
  try {
    timer_ = get_running_loop().call_later(after, [this, &end] {
      timer_ = TimerHandle();
      end.tunnel_stalled();
    });
  } catch (...) {
    end.tunnel_stalled();  // no timer to bound the wait: no wait
  }
}

void TunnelLinger::stop() noexcept {
  if (!timer_) return;
  timer_.cancel();
  timer_ = TimerHandle();
}

// ---- H2StreamTransport -----------------------------------------------------------------

H2StreamTransport::H2StreamTransport(EventLoop& loop, H2TunnelEnd& stream, SocketAddress peer,
                                     SocketAddress local, std::shared_ptr<void> owner)
    : loop_(loop),
      stream_(&stream),
      owner_(std::move(owner)),
      peer_(std::move(peer)),
      local_(std::move(local)) {}

std::optional<std::size_t> H2StreamTransport::try_read(std::span<char> buf) {
  if (stream_ != nullptr) return stream_->tunnel_read(buf);
  if (closed_) throw std::system_error(EBADF, std::generic_category(), "HTTP/2 tunnel closed");
  if (eof_) return 0;
  throw_reset();
}

std::size_t H2StreamTransport::try_write(std::string_view data) {
  if (stream_ == nullptr) throw_reset();
  return stream_->tunnel_write(data);
}

// Within send_timeout, as an answer's producer waits (h2_answer.cpp): a
// window shut for longer resets the stream.
Coro<void> H2StreamTransport::wait_writable() {
  while (stream_ != nullptr && stream_->tunnel_full()) {
    try {
      co_await wait_for(corio::detail::IoWait(loop_, write_slot_), stream_->tunnel_timeout());
    } catch (const TimeoutError&) {
      if (stream_ != nullptr) stream_->tunnel_stalled();
      throw std::system_error(ETIMEDOUT, std::generic_category(), "HTTP/2 stream timed out");
    }
  }
  if (stream_ == nullptr) throw_reset();
}

void H2StreamTransport::shutdown_write() {
  if (stream_ == nullptr) throw_reset();
  stream_->tunnel_end();
}

void H2StreamTransport::close() noexcept {
  if (closed_) return;
  closed_ = true;
  if (stream_ != nullptr) std::exchange(stream_, nullptr)->tunnel_gone();
  owner_.reset();
  read_slot_.fire(true);
  write_slot_.fire(true);
}

std::string H2StreamTransport::extra_info(std::string_view name) const {
  return stream_ != nullptr ? stream_->tunnel_info(name) : std::string();
}

void H2StreamTransport::detach(bool eof) noexcept {
  stream_ = nullptr;
  eof_ = eof;
  read_slot_.fire();
  write_slot_.fire();
}

}  // namespace corio::http::detail
