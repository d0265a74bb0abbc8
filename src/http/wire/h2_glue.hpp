// What HTTP/2's server (src/http/h2/) and client (src/http/client/h2_*)
// share of their nghttp2 glue: owning handles for its setup objects, and the
// loop that moves the frames nghttp2 has to send into a stream's writer.
#pragma once

#include <nghttp2/nghttp2.h>

#include <chrono>
#include <memory>
#include <optional>

#include <corio/coro.hpp>
#include <corio/stream_writer.hpp>

namespace corio::http::detail {

struct H2CallbacksDeleter {
  void operator()(nghttp2_session_callbacks* p) const noexcept { nghttp2_session_callbacks_del(p); }
};
struct H2OptionDeleter {
  void operator()(nghttp2_option* p) const noexcept { nghttp2_option_del(p); }
};
using H2Callbacks = std::unique_ptr<nghttp2_session_callbacks, H2CallbacksDeleter>;
using H2Option = std::unique_ptr<nghttp2_option, H2OptionDeleter>;

// New, empty; std::bad_alloc when nghttp2 has no memory. Options start with
// the window updates the glue's own: windows open as bodies are read.
H2Callbacks new_h2_callbacks();
H2Option new_h2_option();

// Frames go to w until its buffer holds kH2WriteHigh bytes, then wait for
// it to drain (within send_timeout, if any: past it, w is aborted), so that
// past the bound they wait in nghttp2, which pulls DATA from the streams
// only as it sends, not in our memory. True when nghttp2 has nothing more
// to send; false when the session failed, w is closing, or the peer is too slow.
constexpr std::size_t kH2WriteHigh = 64 * 1024;
Coro<bool> send_h2_frames(nghttp2_session* session, StreamWriter& w,
                          std::optional<std::chrono::duration<double>> send_timeout);

}  // namespace corio::http::detail
