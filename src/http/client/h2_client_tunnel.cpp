// H2ClientStream as a tunnel (RFC 8441's extended CONNECT, for ws_connect;
// see h2_client.hpp): waiting for the peer's SETTINGS, and the
// H2TunnelEnd that the shared H2StreamTransport (h2_tunnel.hpp) reads and
// writes.
#include <cerrno>
#include <system_error>

#include <corio/event_loop.hpp>
#include <corio/http/client_errors.hpp>
#include <corio/timeout.hpp>

#include "http/client/client_body.hpp"
#include "http/client/h2_client.hpp"

namespace corio::http::detail {

namespace {

[[noreturn]] void throw_reset() {
  throw std::system_error(ECONNRESET, std::generic_category(), "HTTP/2 stream reset");
}

}  // namespace

// The SETTINGS are sticky once come, and so is the connection's end: the
// event is set once, never cleared.
Coro<bool> H2ClientStream::connect_allowed(const Deadline& deadline) {
  while (!conn_->has_settings()) {
    if (conn_->ended()) {
      if (conn_->error()) std::rethrow_exception(conn_->error());
      throw ClientConnectionError("the HTTP/2 connection ended before its SETTINGS");
    }
    co_await timeout_at(deadline.for_read(get_running_loop().time()), conn_->changed().wait());
  }
  co_return nghttp2_session_get_remote_settings(conn_->session(),
                                                NGHTTP2_SETTINGS_ENABLE_CONNECT_PROTOCOL) == 1;
}

std::unique_ptr<corio::detail::Transport> H2ClientStream::tunnel(
    std::shared_ptr<H2ClientStream> self, std::chrono::milliseconds stall,
    std::chrono::milliseconds linger) {
  H2ClientStream& s = *self;
  auto transport = std::make_unique<H2StreamTransport>(
      get_running_loop(), s, s.conn_->peer_address(), s.conn_->local_address(), std::move(self));
  s.stall_ = stall;
  s.linger_ = linger;
  s.tunnel_ = transport.get();
  return transport;
}

std::optional<std::size_t> H2ClientStream::tunnel_read(std::span<char> buf) {
  if (body_.size() > body_at_) {
    const std::size_t n = take_front(body_, body_at_, buf);
    give_back(n);
    return n;
  }
  if (error_ || reset_code_ != 0) throw_reset();
  if (ended_) return 0;
  return std::nullopt;
}

std::size_t H2ClientStream::tunnel_write(std::string_view data) {
  if (closed_ || out_done_) throw_reset();
  if (tunnel_full()) return 0;
  const std::size_t n = std::min(data.size(), kTunnelOutBuffer - (out_.size() - out_at_));
  out_.append(data.substr(0, n));
  tunnel_resume();
  return n;
}

// The data provider's, for a tunnel: what was written, as the peer's
// window allows; END_STREAM once tunnel_end() said so and all went.
ssize_t H2ClientStream::tunnel_out(std::uint8_t* buf, std::size_t length, std::uint32_t* flags) noexcept {
  const std::size_t n = take_front(out_, out_at_, {reinterpret_cast<char*>(buf), length});
  if (out_.size() == out_at_ && out_done_) {
    *flags |= NGHTTP2_DATA_FLAG_EOF;
  } else if (n == 0) {
    deferred_ = true;
    return NGHTTP2_ERR_DEFERRED;
  }
  if (n > 0 && tunnel_ != nullptr) tunnel_->writable_now();
  return static_cast<ssize_t>(n);
}

void H2ClientStream::tunnel_resume() {
  if (deferred_ && !closed_) {
    deferred_ = false;
    nghttp2_session_resume_data(conn_->session(), id);
  }
  conn_->wake();
}

void H2ClientStream::tunnel_wake() noexcept {
  if (tunnel_ == nullptr) return;
  tunnel_->readable_now();
  tunnel_->writable_now();
}

void H2ClientStream::tunnel_stalled() noexcept {
  if (closed_) return;
  nghttp2_submit_rst_stream(conn_->session(), NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
  conn_->wake();
}

std::string H2ClientStream::tunnel_info(std::string_view name) const { return conn_->extra_info(name); }

void H2ClientStream::tunnel_end() {
  if (closed_) throw_reset();
  out_done_ = true;
  tunnel_resume();
}

// What was written still goes, then END_STREAM; the stream keeps itself
// (lingering_) until it is closed, dropping what the peer still sends, so
// that a WebSocket's last close frame is not cut off by a reset; for
// linger_ at most (TunnelLinger). Dropped from the loop, not inside
// nghttp2's callback that closed it.
void H2ClientStream::tunnel_gone() noexcept {
  tunnel_ = nullptr;
  discard_ = true;
  if (body_.size() > body_at_) give_back(body_.size() - body_at_);
  std::string().swap(body_);
  body_at_ = 0;
  if (closed_ || !conn_) return;
  try {
    lingering_ = shared_from_this();
    if (!out_done_) tunnel_end();
  } catch (...) {
    lingering_.reset();  // out of memory: the owner's release() resets it
    return;
  }
  linger_timer_.start(*this, linger_);
}

void H2ClientStream::linger_over() noexcept {
  linger_timer_.stop();
  if (!lingering_) return;
  try {
    get_running_loop().call_soon([keep = std::move(lingering_)] {});
  } catch (...) {
    // Out of memory for the callback: the stream went with it, closed.
  }
}

}  // namespace corio::http::detail
