// The shared nghttp2 glue (see h2_glue.hpp).
#include "http/wire/h2_glue.hpp"

#include <new>
#include <string>
#include <string_view>

#include <corio/errors.hpp>
#include <corio/timeout.hpp>

namespace corio::http::detail {

H2Callbacks new_h2_callbacks() {
  nghttp2_session_callbacks* p = nullptr;
  if (nghttp2_session_callbacks_new(&p) != 0) throw std::bad_alloc();
  return H2Callbacks(p);
}

H2Option new_h2_option() {
  nghttp2_option* p = nullptr;
  if (nghttp2_option_new(&p) != 0) throw std::bad_alloc();
  nghttp2_option_set_no_auto_window_update(p, 1);
  return H2Option(p);
}

namespace {

// Frames below this size are gathered and handed to the writer together; a
// larger one (a DATA frame of a body) goes on its own, uncopied. One write
// per frame cost a send(2) each: two per GET /hello over h2c (HEADERS, then
// DATA), 96% of the server's syscall time under h2load (strace -c).
constexpr std::size_t kH2Gather = 4096;

void flush(StreamWriter& w, std::string& batch) {
  if (batch.empty()) return;
  w.write(batch);
  batch.clear();
}

}  // namespace

Coro<bool> send_h2_frames(nghttp2_session* session, StreamWriter& w,
                          std::optional<std::chrono::duration<double>> send_timeout) {
  std::string batch;
  for (;;) {
    while (w.get_write_buffer_size() + batch.size() < kH2WriteHigh) {
      const std::uint8_t* data = nullptr;
      const ssize_t n = nghttp2_session_mem_send(session, &data);
      if (n < 0 || w.is_closing()) co_return false;
      if (n == 0) {
        flush(w, batch);
        co_return true;
      }
      const std::string_view frame(reinterpret_cast<const char*>(data), static_cast<std::size_t>(n));
      if (frame.size() < kH2Gather) {
        batch += frame;  // valid until the next mem_send: kept
      } else {
        flush(w, batch);
        w.write(frame);
      }
    }
    flush(w, batch);
    if (!send_timeout) {
      co_await w.drain();
      continue;
    }
    try {
      co_await wait_for(w.drain(), *send_timeout);
    } catch (const TimeoutError&) {
      w.abort();  // a peer that does not read: as HTTP/1.1's send_timeout
      co_return false;
    }
  }
}

}  // namespace corio::http::detail
