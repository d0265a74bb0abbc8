// H2ClientConnection: its nghttp2 client session and the task that drives
// it (see h2_client.hpp). A callback never throws into nghttp2: a failure
// (out of memory) is NGHTTP2_ERR_CALLBACK_FAILURE, which ends the connection.
#include "http/client/h2_client.hpp"

#include <algorithm>
#include <new>

#include <corio/errors.hpp>
#include <corio/event_loop.hpp>
#include <corio/http/client_errors.hpp>

#include "http/client/connection_pool.hpp"
#include "http/wire/h2_glue.hpp"

namespace corio::http::detail {

namespace {

// Frames are handed to the writer until it holds this much; then the task
// waits for the peer to take them (the writer's high-water mark).
// The connection's window, in stream windows.
constexpr std::uint32_t kConnectionWindows = 16;
// Streams assumed allowed until the peer's SETTINGS say (RFC 9113 section
// 6.5.2 recommends no fewer than 100).
constexpr std::uint32_t kAssumedStreams = 100;

H2ClientStream* stream_of(nghttp2_session* session, std::int32_t id) {
  return static_cast<H2ClientStream*>(nghttp2_session_get_stream_user_data(session, id));
}

std::string_view view(const std::uint8_t* p, std::size_t n) {
  return {reinterpret_cast<const char*>(p), n};
}

int on_header(nghttp2_session* session, const nghttp2_frame* frame, const std::uint8_t* name,
              std::size_t namelen, const std::uint8_t* value, std::size_t valuelen, std::uint8_t,
              void*) {
  H2ClientStream* s = stream_of(session, frame->hd.stream_id);
  if (s == nullptr) return 0;
  try {
    s->add_field(view(name, namelen), view(value, valuelen));
  } catch (...) {
    return NGHTTP2_ERR_CALLBACK_FAILURE;
  }
  return 0;
}

int on_frame_recv(nghttp2_session* session, const nghttp2_frame* frame, void* user_data) {
  if (frame->hd.type == NGHTTP2_GOAWAY) {
    static_cast<H2ClientConnection*>(user_data)->goaway(frame->goaway.last_stream_id);
    return 0;
  }
  if (frame->hd.type == NGHTTP2_SETTINGS && (frame->hd.flags & NGHTTP2_FLAG_ACK) == 0) {
    static_cast<H2ClientConnection*>(user_data)->settings_came();
    return 0;
  }
  if (frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) return 0;
  H2ClientStream* s = stream_of(session, frame->hd.stream_id);
  if (s == nullptr) return 0;
  if (frame->hd.type == NGHTTP2_HEADERS) s->head_end();
  if ((frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0) s->data({});
  return 0;
}

int on_data_chunk_recv(nghttp2_session* session, std::uint8_t, std::int32_t id,
                       const std::uint8_t* data, std::size_t len, void*) {
  H2ClientStream* s = stream_of(session, id);
  if (s == nullptr || len == 0) {
    nghttp2_session_consume(session, id, len);  // nobody will read it
    return 0;
  }
  try {
    s->data(view(data, len));
  } catch (...) {
    return NGHTTP2_ERR_CALLBACK_FAILURE;
  }
  return 0;
}

int on_stream_close(nghttp2_session* session, std::int32_t id, std::uint32_t code, void*) {
  if (H2ClientStream* s = stream_of(session, id)) s->closed(code);
  return 0;
}

// Read-only once made: shared by every loop's thread.
const nghttp2_session_callbacks* client_callbacks() {
  static const H2Callbacks callbacks = [] {
    H2Callbacks cb = new_h2_callbacks();
    nghttp2_session_callbacks* p = cb.get();
    nghttp2_session_callbacks_set_on_header_callback(p, on_header);
    nghttp2_session_callbacks_set_on_frame_recv_callback(p, on_frame_recv);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(p, on_data_chunk_recv);
    nghttp2_session_callbacks_set_on_stream_close_callback(p, on_stream_close);
    return cb;
  }();
  return callbacks.get();
}


nghttp2_session* new_client_session(void* user_data) {
  const H2Option option = new_h2_option();  // windows open as bodies are read
  nghttp2_option_set_peer_max_concurrent_streams(option.get(), kAssumedStreams);
  nghttp2_session* session = nullptr;
  if (nghttp2_session_client_new2(&session, client_callbacks(), user_data, option.get()) != 0) {
    throw std::bad_alloc();
  }
  const nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, kStreamWindow},
  };
  if (nghttp2_submit_settings(session, NGHTTP2_FLAG_NONE, settings, std::size(settings)) != 0 ||
      nghttp2_session_set_local_window_size(session, NGHTTP2_FLAG_NONE, 0,
                                            kStreamWindow * kConnectionWindows) != 0) {
    nghttp2_session_del(session);
    throw std::bad_alloc();
  }
  return session;
}

}  // namespace

H2ClientConnection::H2ClientConnection(StreamReader reader, StreamWriter writer,
                                       std::chrono::milliseconds keepalive)
    : reader_(std::move(reader)),
      writer_(std::move(writer)),
      session_(new_client_session(this)),
      keepalive_(keepalive) {}

H2ClientConnection::~H2ClientConnection() { nghttp2_session_del(session_); }

void H2ClientConnection::start() {
  arm_idle();
  get_running_loop().create_task(drive(shared_from_this()));
}

bool H2ClientConnection::full() const noexcept {
  return streams_.size() >=
         nghttp2_session_get_remote_settings(session_, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);
}

bool H2ClientConnection::usable() const noexcept { return alive() && !full(); }

Coro<void> H2ClientConnection::drive(std::shared_ptr<H2ClientConnection> self) {
  std::exception_ptr error;
  try {
    co_await self->run();
  } catch (const std::system_error& e) {
    error = std::make_exception_ptr(ClientConnectionError(std::string("connection lost: ") + e.what(), e.code()));
  } catch (...) {
    error = std::current_exception();  // cancelled with the loop
  }
  if (!error) error = std::make_exception_ptr(ClientConnectionError("the server closed the HTTP/2 connection"));
  self->end(error);
  self->try_out_wait();
  self->writer_.close();  // what nghttp2 last gave (a GOAWAY) goes out first
}

Coro<void> H2ClientConnection::run() {
  for (;;) {
    if (!co_await send_pending() || shutting_) break;
    if (nghttp2_session_want_read(session_) == 0 && nghttp2_session_want_write(session_) == 0) break;
    if (ended_ || (going_away_ && streams_.empty())) break;
    if (reader_.buffered().empty()) {
      const std::optional<std::size_t> got = reader_.try_fill();
      if (!got) {
        waiting_ = true;
        co_await reader_.readable();
        waiting_ = false;
        continue;  // bytes, or a stream's wake(): send first, then read
      }
      if (*got == 0) break;
    }
    if (!feed()) {
      co_await send_pending();  // nghttp2's GOAWAY for the error
      break;
    }
  }
}

// A TLS reader whose wait ended keeps its close_notify exchange waiting
// until it tries to read again (tls_transport.cpp): the task, which may
// have left its wait for a wake(), tries once before closing.
void H2ClientConnection::try_out_wait() noexcept {
  try {
    (void)reader_.try_fill();
  } catch (...) {
    // Broken already: nothing to wait for.
  }
}

bool H2ClientConnection::feed() {
  const std::string_view in = reader_.buffered();
  const ssize_t n = nghttp2_session_mem_recv(session_, reinterpret_cast<const std::uint8_t*>(in.data()),
                                             in.size());
  if (n < 0) return false;
  reader_.consume(in.size());
  return true;
}

Coro<bool> H2ClientConnection::send_pending() {
  return send_h2_frames(session_, writer_, output_, std::nullopt);
}

void H2ClientConnection::wake() noexcept {
  if (waiting_) corio::detail::interrupt_wait(reader_);
}

void H2ClientConnection::opened(H2ClientStream* s) {
  streams_.emplace(s->id, s);
  ++served_;
  if (idle_timer_) {
    idle_timer_->cancel();
    idle_timer_.reset();
  }
  wake();
}

H2ClientStream* H2ClientConnection::stream(std::int32_t id) const noexcept {
  const auto it = streams_.find(id);
  return it == streams_.end() ? nullptr : it->second;
}

void H2ClientConnection::forget(H2ClientStream* s) noexcept {
  streams_.erase(s->id);
  if (!ended_) nghttp2_session_set_stream_user_data(session_, s->id, nullptr);
  if (streams_.empty() && !ended_) {
    try {
      arm_idle();
    } catch (...) {
      going_away_ = true;  // out of memory for a timer: let the connection end
    }
  }
  wake();
}

// The streams above last_stream_id are closed by nghttp2 as REFUSED_STREAM;
// those below finish; no new one starts here.
void H2ClientConnection::goaway(std::int32_t) noexcept {
  going_away_ = true;
  wake();
}

void H2ClientConnection::settings_came() noexcept {
  settings_ = true;
  changed_.set();
}

void H2ClientConnection::arm_idle() {
  if (idle_timer_) idle_timer_->cancel();
  idle_timer_ = get_running_loop().call_later(keepalive_, [this] {
    idle_timer_.reset();
    if (!streams_.empty()) return;
    going_away_ = true;
    nghttp2_session_terminate_session(session_, NGHTTP2_NO_ERROR);
    wake();
  });
}

void H2ClientConnection::pooled(std::weak_ptr<ConnectionPool> pool, PoolHost* host,
                                std::optional<Semaphore::Guard> host_permit,
                                std::optional<Semaphore::Guard> total_permit) noexcept {
  pool_ = std::move(pool);
  host_ = host;
  host_permit_ = std::move(host_permit);
  total_permit_ = std::move(total_permit);
}

void H2ClientConnection::unpool() noexcept {
  host_ = nullptr;
  host_permit_.reset();
  total_permit_.reset();
  pool_.reset();
}

// Rule 3: the open streams fail; the pool forgets the connection and its
// permits go back.
void H2ClientConnection::end(std::exception_ptr error) noexcept {
  if (ended_) return;
  ended_ = true;
  error_ = error;
  changed_.set();
  if (idle_timer_) idle_timer_->cancel();
  idle_timer_.reset();
  for (auto& [id, s] : streams_) s->fail(error);
  streams_.clear();
  if (const std::shared_ptr<ConnectionPool> pool = pool_.lock(); pool && host_) {
    pool->h2_ended(*host_, this);
  }
  unpool();
}

// The task sends the GOAWAY and closes: closing here, while its read waits
// on the socket, would have TLS's close_notify exchange wait on the same
// socket beside it.
StreamWriter H2ClientConnection::shut() noexcept {
  going_away_ = true;
  shutting_ = true;
  nghttp2_session_terminate_session(session_, NGHTTP2_NO_ERROR);
  unpool();
  wake();
  return writer_;
}

}  // namespace corio::http::detail
