// The nghttp2 callbacks and session settings (see h2_session.hpp). A
// callback never throws into nghttp2: a failure (out of memory) is
// NGHTTP2_ERR_CALLBACK_FAILURE, which ends the connection.
#include "http/h2/h2_session.hpp"

#include <algorithm>
#include <memory>
#include <new>
#include <string_view>

#include "http/h2/h2_connection.hpp"
#include "http/h2/h2_memory.hpp"
#include "http/h2/h2_stream.hpp"
#include "http/wire/h2_glue.hpp"

namespace corio::http::detail {

namespace {

// The connection's window, in initial windows: how much unread body all
// of a connection's streams may hold together.
constexpr std::uint32_t kConnectionWindows = 16;

// SETTINGS_MAX_FRAME_SIZE: the server keeps RFC 9113's default.
constexpr std::size_t kMaxFrame = 16384;

constexpr std::size_t kFrameHeader = 9;  // RFC 9113 section 4.1

H2Connection& conn(void* user_data) { return *static_cast<H2Connection*>(user_data); }

std::string_view view(const std::uint8_t* p, std::size_t n) {
  return {reinterpret_cast<const char*>(p), n};
}

int on_begin_headers(nghttp2_session*, const nghttp2_frame* frame, void* user_data) {
  if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
  try {
    conn(user_data).open_stream(frame->hd.stream_id);
  } catch (...) {
    return NGHTTP2_ERR_CALLBACK_FAILURE;
  }
  return 0;
}

int on_header(nghttp2_session*, const nghttp2_frame* frame, const std::uint8_t* name,
              std::size_t namelen, const std::uint8_t* value, std::size_t valuelen, std::uint8_t,
              void* user_data) {
  H2Connection& c = conn(user_data);
  H2Stream* s = c.stream(frame->hd.stream_id);
  if (s == nullptr) return 0;
  try {
    if (s->add_field(view(name, namelen), view(value, valuelen))) return 0;
  } catch (...) {
    return NGHTTP2_ERR_CALLBACK_FAILURE;
  }
  c.enhance_your_calm();  // an HPACK bomb (h2_guard.hpp)
  return NGHTTP2_ERR_CALLBACK_FAILURE;
}

// Every frame's header, before nghttp2 looks further: the guard counts
// those nghttp2 ignores too (PRIORITY, with no priority tree).
int on_begin_frame(nghttp2_session*, const nghttp2_frame_hd* hd, void* user_data) {
  if (hd->type != NGHTTP2_HEADERS && hd->type != NGHTTP2_DATA)
    conn(user_data).control_frame(hd->type);
  return 0;
}

int on_frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* user_data) {
  if (frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) return 0;
  H2Connection& c = conn(user_data);
  H2Stream* s = c.stream(frame->hd.stream_id);
  if (s == nullptr) return 0;
  try {
    if (frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
      s->head_done();
      if (!c.start_request(*s)) return 0;
    }
  } catch (...) {
    return NGHTTP2_ERR_CALLBACK_FAILURE;
  }
  if ((frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0) s->body_end();
  return 0;
}

int on_data_chunk_recv(nghttp2_session* session, std::uint8_t, std::int32_t stream_id,
                       const std::uint8_t* data, std::size_t len, void* user_data) {
  H2Stream* s = conn(user_data).stream(stream_id);
  if (s == nullptr) {
    nghttp2_session_consume_connection(session, len);  // nobody will read it
    return 0;
  }
  try {
    s->body_data(view(data, len));
  } catch (...) {
    return NGHTTP2_ERR_CALLBACK_FAILURE;
  }
  return 0;
}

int on_stream_close(nghttp2_session*, std::int32_t stream_id, std::uint32_t, void* user_data) {
  conn(user_data).close_stream(stream_id);
  return 0;
}

ssize_t read_body(nghttp2_session*, std::int32_t, std::uint8_t*, std::size_t length,
                  std::uint32_t* flags, nghttp2_data_source* source, void*) {
  return static_cast<H2Stream*>(source->ptr)->read_out(length, flags);
}

// read_body's frame (NGHTTP2_DATA_FLAG_NO_COPY). The server sets no padding
// callback, so nghttp2 pads nothing.
int send_body(nghttp2_session*, nghttp2_frame* frame, const std::uint8_t* framehd, std::size_t length,
              nghttp2_data_source* source, void* user_data) {
  if (frame->data.padlen > 0) return NGHTTP2_ERR_CALLBACK_FAILURE;
  try {
    static_cast<H2Stream*>(source->ptr)->send_out(view(framehd, kFrameHeader), length);
  } catch (...) {
    return NGHTTP2_ERR_CALLBACK_FAILURE;
  }
  // A full pass ends here (H2Output::full()): without the pause, one
  // mem_send gave every stream's DATA as far as the windows allowed
  // (640 KiB at h2load -c10 -m10 for 64 KiB answers), which the writer's
  // buffer then took as a copy beyond what the socket took.
  return conn(user_data).output().full() ? NGHTTP2_ERR_PAUSE : 0;
}

// Read-only once made: shared by every loop's thread.
const nghttp2_session_callbacks* server_callbacks() {
  static const H2Callbacks callbacks = [] {
    H2Callbacks cb = new_h2_callbacks();
    nghttp2_session_callbacks* p = cb.get();
    nghttp2_session_callbacks_set_on_begin_headers_callback(p, on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(p, on_header);
    nghttp2_session_callbacks_set_on_begin_frame_callback(p, on_begin_frame);
    nghttp2_session_callbacks_set_on_frame_recv_callback(p, on_frame_recv);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(p, on_data_chunk_recv);
    nghttp2_session_callbacks_set_on_stream_close_callback(p, on_stream_close);
    nghttp2_session_callbacks_set_send_data_callback(p, send_body);
    return cb;
  }();
  return callbacks.get();
}

}  // namespace

nghttp2_session* new_server_session(H2Connection& c, const ServerOptions& options) {
  // Windows open as handlers read (h2_stream.hpp), not as bytes arrive
  // (new_h2_option). A header block's frames hold no more than the
  // header-list limit (and one frame): a longer one would be refused with
  // 431 anyway, so the CONTINUATION frames past it end the connection
  // (h2_guard.hpp).
  const H2Option option = new_h2_option();
  nghttp2_option_set_max_continuations(option.get(), options.limits.max_head_bytes / kMaxFrame + 1);
  nghttp2_session* session = nullptr;
  if (nghttp2_session_server_new3(&session, server_callbacks(), &c, option.get(), counting_mem()) != 0) {
    throw std::bad_alloc();
  }
  const std::uint32_t window = std::min<std::uint32_t>(options.initial_window_size, NGHTTP2_MAX_WINDOW_SIZE);
  const nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, options.max_concurrent_streams},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, window},
      {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE,
       static_cast<std::uint32_t>(std::min<std::size_t>(options.limits.max_head_bytes, UINT32_MAX))},
      // No RFC 7540 priority tree: PRIORITY frames cost nghttp2 nothing to
      // keep, and closed streams are not kept for it.
      {NGHTTP2_SETTINGS_NO_RFC7540_PRIORITIES, 1},
      // RFC 8441: extended CONNECT, for WebSockets over h2 (h2_tunnel.hpp).
      {NGHTTP2_SETTINGS_ENABLE_CONNECT_PROTOCOL, 1},
  };
  const std::uint64_t conn_window =
      std::min<std::uint64_t>(std::uint64_t{window} * kConnectionWindows, NGHTTP2_MAX_WINDOW_SIZE);
  if (nghttp2_submit_settings(session, NGHTTP2_FLAG_NONE, settings, std::size(settings)) != 0 ||
      nghttp2_session_set_local_window_size(session, NGHTTP2_FLAG_NONE, 0,
                                            static_cast<std::int32_t>(conn_window)) != 0) {
    nghttp2_session_del(session);
    throw std::bad_alloc();
  }
  return session;
}

nghttp2_data_provider body_provider(void* stream) noexcept {
  nghttp2_data_provider p;
  p.source.ptr = stream;
  p.read_callback = read_body;
  return p;
}

}  // namespace corio::http::detail
