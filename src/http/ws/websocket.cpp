// WebSocket (see websocket.hpp): receiving, sending, the closing handshake
// and the heartbeat, over the streams a handshake handed over.
#include <openssl/rand.h>

#include <cstring>

#include <type_traits>

#include <corio/detail/entropy.hpp>
#include <corio/errors.hpp>
#include <corio/event_loop.hpp>
#include <corio/http/websocket.hpp>
#include <corio/sleep.hpp>
#include <corio/timeout.hpp>

#include "http/ws/ws_session.hpp"

namespace corio::http {

using detail::Opcode;
using detail::WsEvent;
using detail::WsRole;
using detail::WsSettings;
using detail::WsState;

namespace {

// Unmasked payloads above this go to the writer as they are, after their
// header: one copy fewer. Below it the frame is built whole on the stack,
// for one send, and no buffer outlives the send.
constexpr std::size_t kWriteDirect = 16 * 1024;

double now() { return get_running_loop().time(); }

// What this side sends, and what the peer does (permessage-deflate agreed).
detail::DeflateDirection sending(const detail::WsSetup& setup) {
  return setup.role == WsRole::server ? setup.deflate->server() : setup.deflate->client();
}
detail::DeflateDirection receiving(const detail::WsSetup& setup) {
  return setup.role == WsRole::server ? setup.deflate->client() : setup.deflate->server();
}

detail::WsReaderConfig reader_config(const detail::WsSetup& setup) {
  detail::WsReaderConfig c;
  c.expect_masked = setup.role == WsRole::server;
  c.max_msg_size = setup.options.max_msg_size;
  if (setup.deflate) c.inflater = std::make_unique<detail::WsInflater>(receiving(setup));
  return c;
}

std::unique_ptr<detail::WsDeflater> make_deflater(const detail::WsSetup& setup) {
  if (!setup.deflate) return nullptr;
  return std::make_unique<detail::WsDeflater>(sending(setup), setup.options.deflate.level);
}

std::string close_payload(int code, std::string_view reason) {
  std::string p;
  p += static_cast<char>(code >> 8);
  p += static_cast<char>(code & 0xFF);
  p += reason;
  return p;
}

// The heartbeat (websocket.hpp): holds the state until the connection ends
// or it is cancelled.
Coro<void> heartbeat_loop(std::shared_ptr<WsState> s, std::chrono::milliseconds period) {
  const double p = std::chrono::duration<double>(period).count();
  while (!s->done) {
    const double quiet_until = s->last_heard + p;
    if (now() < quiet_until) {
      co_await sleep(std::chrono::duration<double>(quiet_until - now()));
      continue;
    }
    const double sent = now();
    if (s->close_sent) co_return;
    s->write_frame(Opcode::ping, true, false, {});
    co_await sleep(std::chrono::duration<double>(p / 2));
    if (s->done) co_return;
    if (s->last_heard < sent) {
      s->rare().heartbeat.reset();  // this task: nothing to cancel
      s->end(ws_close::abnormal, "no answer to the heartbeat's ping", true);
      co_return;
    }
  }
}

}  // namespace

namespace detail {

Coro<bool> drained(WsState& s) {
  try {
    co_await s.writer.drain();
  } catch (const std::system_error&) {
    co_return false;
  }
  co_return true;
}

// Read by every connection whose settings are these (no WsRare).
namespace {
const WsOptions kDefaultOptions;
const WsSettings kDefaultSettings(kDefaultOptions);
const std::string kNone;
}  // namespace

WsState::WsState(StreamReader r, StreamWriter w, WsSetup setup)
    : reader(std::move(r)),
      writer(std::move(w)),
      parser(reader_config(setup)),
      deflater(make_deflater(setup)),
      last_heard(now()),
      role(setup.role) {
  const WsOptions& o = setup.options;
  const WsOptions& d = kDefaultOptions;
  if (!setup.protocol.empty() || o.close_timeout != d.close_timeout || o.max_fragment != d.max_fragment ||
      o.deflate.min_size != d.deflate.min_size) {
    rare_ = std::make_unique<WsRare>(o);
    rare_->protocol = std::move(setup.protocol);
  }
}

WsRare& WsState::rare() {
  if (!rare_) rare_ = std::make_unique<WsRare>(kDefaultOptions);
  return *rare_;
}

const WsSettings& WsState::settings() const noexcept { return rare_ ? rare_->settings : kDefaultSettings; }
const std::string& WsState::protocol() const noexcept { return rare_ ? rare_->protocol : kNone; }
const std::string& WsState::reason() const noexcept { return rare_ ? rare_->reason : kNone; }

std::optional<std::uint32_t> WsState::next_mask() {
  if (role == WsRole::server) return std::nullopt;
  // RFC 6455 section 10.3: keys the payload's author cannot predict.
  std::uint32_t key = 0;
  if (!corio::detail::seeded_secret(&key, sizeof key) &&
      RAND_bytes(reinterpret_cast<unsigned char*>(&key), sizeof key) != 1) {
    throw std::runtime_error("RAND_bytes failed");
  }
  return key;
}

void WsState::write_frame(Opcode op, bool fin, bool rsv1, std::string_view payload) {
  if (writer.is_closing()) return;  // failed or aborted: drain() reports it
  const std::optional<std::uint32_t> mask = next_mask();
  char frame[kMaxFrameHeader + kWriteDirect];
  const std::size_t head = frame_header(frame, op, fin, rsv1, payload.size(), mask);
  if (!mask && payload.size() > kWriteDirect) {
    writer.write(std::string_view(frame, head));
    writer.write(payload);
  } else if (payload.size() <= kWriteDirect) {
    if (!payload.empty()) std::memcpy(frame + head, payload.data(), payload.size());  // data() may be null
    if (mask) apply_mask(frame + head, payload.size(), *mask);
    writer.write(std::string_view(frame, head + payload.size()));
  } else {  // a client's large frame: masked into a copy
    std::string whole;
    append_frame(whole, op, fin, rsv1, payload, mask);
    writer.write(whole);
  }
}

void WsState::end(int close_code, std::string why, bool abort_transport) {
  if (!code) {
    code = close_code;
    if (!why.empty()) rare().reason = std::move(why);
  }
  done = true;
  if (rare_) rare_->finished.set();
  if (abort_transport) {
    writer.abort();
  } else {
    writer.close();
  }
  if (rare_ && rare_->heartbeat) {
    rare_->heartbeat->cancel();
    rare_->heartbeat.reset();
  }
  if (rare_) rare_->server_tie.reset();  // last: the tie may be what called us
}

}  // namespace detail

WebSocket::WebSocket(StreamReader reader, StreamWriter writer, detail::WsSetup setup) {
  const std::optional<std::chrono::milliseconds> period = setup.options.heartbeat;
  Request* const taken_from = setup.taken_from;
  s_ = std::make_shared<WsState>(std::move(reader), std::move(writer), std::move(setup));
  if (period) s_->rare().heartbeat.emplace(create_task(heartbeat_loop(s_, *period), "ws-heartbeat"));
  if (taken_from != nullptr) detail::tie_to_server(*s_, *taken_from);
}

static_assert(std::is_nothrow_move_constructible_v<WebSocket> && !std::is_copy_constructible_v<WebSocket>,
              "a WebSocket is one connection: moved, never copied");

WebSocket::WebSocket(WebSocket&&) noexcept = default;
WebSocket& WebSocket::operator=(WebSocket&&) noexcept = default;

WebSocket::~WebSocket() {
  if (s_ && !s_->done) s_->end(ws_close::abnormal, "the WebSocket was destroyed", false);
}

namespace detail {

WsStep WsState::step(WsMessage& msg) {
  for (;;) {
    WsEvent ev;
    std::size_t n = 0;
    try {
      n = parser.parse(reader.buffered(), ev);
    } catch (const WsProtocolError& e) {
      // Fail the connection (RFC 6455 section 7.1.7): our close, then no more.
      if (!close_sent) write_frame(Opcode::close, true, false, close_payload(e.code(), {}));
      close_sent = true;
      end(e.code(), e.what(), false);
      return WsStep::ended;
    }
    if (n == 0) {
      parser.park();  // the connection may now idle: no inflate stream while it does
      std::optional<std::size_t> got;
      try {
        got = reader.try_fill();
      } catch (const std::system_error&) {
        got = 0;  // reset or aborted: the same as an EOF without a close frame
      }
      if (!got) return WsStep::wait;
      if (*got == 0) {
        end(ws_close::abnormal, "the connection ended without a close frame", true);
        return WsStep::ended;
      }
      last_heard = now();
      continue;
    }
    reader.consume(n);
    switch (ev.kind) {
      case WsEvent::Kind::none:
      case WsEvent::Kind::pong:
        break;
      case WsEvent::Kind::text:
      case WsEvent::Kind::binary:
        if (close_sent) break;  // closing: what still comes is dropped
        msg.type = ev.kind == WsEvent::Kind::text ? WsMsgType::text : WsMsgType::binary;
        msg.data = std::move(ev.data);
        return WsStep::message;
      case WsEvent::Kind::ping:
        if (close_sent) break;
        write_frame(Opcode::pong, true, false, ev.data);
        return WsStep::drain;  // a peer pinging without reading is pushed back
      case WsEvent::Kind::close:
        // Answered with its code (none for none), which completes the handshake.
        if (!close_sent) {
          write_frame(Opcode::close, true, false,
                      ev.code == ws_close::no_status ? std::string() : close_payload(ev.code, {}));
          close_sent = true;
        }
        end(ev.code, std::move(ev.data), false);
        return WsStep::ended;
    }
  }
}

}  // namespace detail

// The frame an idle WebSocket is suspended in, kept small: the work is in
// WsState::step(), and the wait for the socket is the reader's own
// (try_fill, readable), in this frame, not in two more below it.
Coro<std::optional<WsMessage>> WebSocket::receive() {
  WsState& s = *s_;
  if (s.done) co_return std::nullopt;
  if (s.reading) throw RuntimeError("WebSocket::receive() is already running in another task");
  s.reading = true;
  struct Reading {
    WsState& s;
    ~Reading() { s.reading = false; }
  } reading{s};
  WsMessage msg;
  for (;;) {
    switch (s.step(msg)) {
      case detail::WsStep::message:
        co_return std::move(msg);
      case detail::WsStep::ended:
        co_return std::nullopt;
      case detail::WsStep::wait:
        try {
          co_await s.reader.readable();
        } catch (const std::system_error&) {  // reset or aborted: as an EOF without a close frame
          s.end(ws_close::abnormal, "the connection ended without a close frame", true);
          co_return std::nullopt;
        }
        break;
      case detail::WsStep::drain:
        if (!co_await detail::drained(s)) {
          s.end(ws_close::abnormal, "the connection failed", true);
          co_return std::nullopt;
        }
        break;
    }
  }
}

namespace detail {

Coro<void> send_message(WsState& s, const WsMessage& msg, std::shared_ptr<void> /*keep*/) {
  if (s.close_sent || s.done) throw RuntimeError("send on a closing WebSocket");
  auto guard = co_await s.send_lock.scoped_lock();
  const WsSettings& settings = s.settings();
  const bool compress = s.deflater && msg.data.size() >= settings.min_compressed;
  const std::string compressed = compress ? s.deflater->compress(msg.data) : std::string();
  const std::string_view payload = compress ? std::string_view(compressed) : std::string_view(msg.data);
  const Opcode op = msg.is_text() ? Opcode::text : Opcode::binary;
  const std::size_t piece = settings.max_fragment > 0 ? settings.max_fragment : payload.size();
  std::size_t at = 0;
  do {
    const std::size_t n = std::min(piece, payload.size() - at);
    const bool fin = at + n == payload.size();
    s.write_frame(at == 0 ? op : Opcode::continuation, fin, compress && at == 0, payload.substr(at, n));
    at += n;
    co_await s.writer.drain();
  } while (at < payload.size());
}

Coro<void> send_control(WsState& s, Opcode op, std::string_view payload) {
  if (payload.size() > kMaxControlPayload) throw ValueError("a control frame's payload is at most 125 bytes");
  if (s.close_sent || s.done) throw RuntimeError("ping or pong on a closing WebSocket");
  s.write_frame(op, true, false, payload);
  co_await s.writer.drain();
}

void check_close(int code, std::string_view reason) {
  if (!is_valid_close_code(code)) throw ValueError("close code " + std::to_string(code) + " may not be sent");
  if (reason.size() > kMaxControlPayload - 2) throw ValueError("a close reason is at most 123 bytes");
}

void WsState::send_close(int close_code, std::string_view reason) {
  if (close_sent) return;
  close_sent = true;
  write_frame(Opcode::close, true, false, close_payload(close_code, reason));
}

}  // namespace detail

// Not coroutines: the sends' frames are detail's, shared with ServerWebSocket.
Coro<void> WebSocket::send(const WsMessage& msg) { return detail::send_message(*s_, msg); }

// The message named first: g++ 12 frees a temporary inside a co_await twice.
Coro<void> WebSocket::send_str(std::string_view text) {
  const WsMessage msg{WsMsgType::text, std::string(text)};
  co_await send(msg);
}

Coro<void> WebSocket::send_bytes(std::string_view data) {
  const WsMessage msg{WsMsgType::binary, std::string(data)};
  co_await send(msg);
}

namespace {

// Reads (and drops) until the peer's close frame or the end.
Coro<void> read_to_close(WebSocket& ws) {
  // Named, not tested inside the condition: g++ 12 miscompiles a co_await
  // temporary there.
  while (std::optional<WsMessage> msg = co_await ws.receive()) {
  }
}

}  // namespace

Coro<void> WebSocket::ping(std::string_view payload) { co_await detail::send_control(*s_, Opcode::ping, payload); }

Coro<void> WebSocket::pong(std::string_view payload) { co_await detail::send_control(*s_, Opcode::pong, payload); }

Coro<void> WebSocket::close(int code, std::string_view reason) {
  detail::check_close(code, reason);
  const std::shared_ptr<WsState> s = s_;  // this WebSocket may be moved from meanwhile
  if (s->done) co_return;
  s->send_close(code, reason);
  try {
    if (s->reading) {
      co_await wait_for(s->rare().finished.wait(), s->settings().close_timeout);
    } else {
      co_await wait_for(read_to_close(*this), s->settings().close_timeout);
    }
  } catch (const TimeoutError&) {
    s->end(ws_close::abnormal, "no close frame from the peer in time", true);
  } catch (const CancelledError&) {
    // Nobody will read the peer's close frame now: without this the socket
    // stayed open until the WebSocket was destroyed (the cancellation sweep
    // found it). Our close frame still goes out before the FIN.
    s->end(ws_close::abnormal, "close() was cancelled", false);
    throw;
  }
}

void WebSocket::abort() noexcept {
  if (!s_->done) s_->end(ws_close::abnormal, "aborted", true);
}

bool WebSocket::closed() const noexcept { return s_->close_sent || s_->done; }
std::optional<int> WebSocket::close_code() const noexcept { return s_->done ? s_->code : std::nullopt; }
const std::string& WebSocket::close_reason() const noexcept { return s_->reason(); }
const std::string& WebSocket::protocol() const noexcept { return s_->protocol(); }
bool WebSocket::compressed() const noexcept { return s_->deflater != nullptr; }
std::string WebSocket::peername() const { return s_->writer.get_extra_info("peername"); }

}  // namespace corio::http
