// The shared nghttp2 glue (see h2_glue.hpp).
#include "http/wire/h2_glue.hpp"

#include <new>
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

Coro<bool> send_h2_frames(nghttp2_session* session, StreamWriter& w,
                          std::optional<std::chrono::duration<double>> send_timeout) {
  for (;;) {
    while (w.get_write_buffer_size() < kH2WriteHigh) {
      const std::uint8_t* data = nullptr;
      const ssize_t n = nghttp2_session_mem_send(session, &data);
      if (n < 0 || w.is_closing()) co_return false;
      if (n == 0) co_return true;
      w.write(std::string_view(reinterpret_cast<const char*>(data), static_cast<std::size_t>(n)));
    }
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
