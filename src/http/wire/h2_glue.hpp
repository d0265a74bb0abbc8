// What HTTP/2's server (src/http/h2/) and client (src/http/client/h2_*)
// share of their nghttp2 glue: owning handles for its setup objects, and the
// loop that moves the frames nghttp2 has to send into a stream's writer.
#pragma once

#include <nghttp2/nghttp2.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

// Where a pass over TLS ends (H2Output::full()): past it by a frame at most,
// it is still what one TLS write takes (tls_transport.cpp's try_writev); the
// rest of a larger pass would be copied into the writer's buffer.
inline constexpr std::size_t kH2PassBytes = 64 * 1024;
// Over a plain socket a pass may hold more: its payloads go out by one
// gathered send, not a copy, and fewer sends cost less (h2c 64 KiB answers
// at -c10 -m10: 10% more CPU in passes of 64 KiB). 256 KiB is what the
// pieces' spare buffers (H2Output::keep_piece) hold per thread.
inline constexpr std::size_t kH2PlainPassBytes = 256 * 1024;

// What one pass of send_h2_frames hands the writer at once, in one
// writelines(): nghttp2's frames copied together, and the payloads of DATA
// frames sent with NGHTTP2_DATA_FLAG_NO_COPY (the server's answers) referred
// to where they lie, each after its 9-byte header. The payloads must stay
// put until the pass's flush; a buffer that would go away before it (its
// stream closed in the pass) is kept here until then. An idle connection
// holds no buffer of it (release()).
class H2Output {
 public:
  void copy(std::string_view bytes);
  // False: copied instead (a small payload is cheaper copied than gathered).
  bool refer(std::string_view bytes);
  void keep(std::string buffer) { kept_.push_back(std::move(buffer)); }
  // A file's piece buffer (body_file.hpp) that the pass may refer to, given
  // up by its stream (H2FileReader): kept until the pass ends, then recycled,
  // so that a loop's answers share a few buffers warm in the cache, where a
  // 64 KiB piece held per answer until its end held 100 of them at `-c100`.
  void keep_piece(std::string piece) { pieces_kept_.push_back(std::move(piece)); }
  // File bytes read ahead of their DATA frames by this connection's streams
  // (H2FileReader), not yet taken: they count against the pass's room, and
  // outlive a pass that ends before taking them.
  void add_ahead(std::size_t n) noexcept { ahead_ += n; }
  void sub_ahead(std::size_t n) noexcept { ahead_ -= n; }
  std::size_t ahead() const noexcept { return ahead_; }
  // What the pass still takes besides its frames so far and the bytes read
  // ahead for it.
  std::size_t read_room() const noexcept {
    return size_ + ahead_ < pass_bytes_ ? pass_bytes_ - size_ - ahead_ : 0;
  }
  std::size_t size() const noexcept { return size_; }
  // As much as a pass takes (set_over_tls()). nghttp2 sends the DATA frames
  // of NGHTTP2_DATA_FLAG_NO_COPY one after another within one mem_send,
  // stream after stream, as far as the windows allow: a send_data_callback
  // returns NGHTTP2_ERR_PAUSE once the pass is full, so that it ends there
  // (send_h2_pass goes on after such a pause while its bound allows).
  bool full() const noexcept { return size_ >= pass_bytes_; }
  // Over TLS: passes end at kH2PassBytes (else kH2PlainPassBytes), and a
  // pass waits while TLS holds records the socket did not take
  // (send_h2_pass). Not over a plain socket, whose only such bytes are
  // io_uring's send queue, which batches a loop's sends on purpose.
  void set_over_tls() noexcept {
    pass_bytes_ = kH2PassBytes;
    over_tls_ = true;
  }
  bool over_tls() const noexcept { return over_tls_; }
  // Passes ended (flushed or dropped): bytes referred to in an earlier pass
  // are free to move.
  std::uint64_t passes() const noexcept { return passes_; }
  void flush(StreamWriter& w);
  void drop() noexcept;
  void release() noexcept;  // its buffers' memory too

 private:
  struct Piece {
    const char* data;  // null: the arena's, from `at`
    std::size_t at;
    std::size_t size;
  };
  std::string arena_;
  std::vector<Piece> pieces_;
  std::vector<std::string> kept_;
  std::vector<std::string> pieces_kept_;  // keep_piece()'s
  std::size_t size_ = 0;
  std::size_t ahead_ = 0;
  std::uint64_t passes_ = 0;
  std::size_t pass_bytes_ = kH2PlainPassBytes;
  bool over_tls_ = false;
};

// Frames go to w until its buffer holds kH2WriteHigh bytes, then wait for
// it to drain (within send_timeout, if any: past it, w is aborted), so that
// past the bound they wait in nghttp2, which pulls DATA from the streams
// only as it sends, not in our memory. True when nghttp2 has nothing more
// to send; false when the session failed, w is closing, or the peer is too slow.
constexpr std::size_t kH2WriteHigh = 64 * 1024;
Coro<bool> send_h2_frames(nghttp2_session* session, StreamWriter& w, H2Output& out,
                          std::optional<std::chrono::duration<double>> send_timeout);
// One pass of it, without waiting: 1 when nghttp2 has nothing more to send,
// 0 when w holds `bound` bytes, -1 as send_h2_frames' false.
int send_h2_pass(nghttp2_session* session, StreamWriter& w, H2Output& out,
                 std::size_t bound = kH2WriteHigh);
// send_h2_frames' step before any wait: a pass only when nghttp2 has output
// (most calls after a read find none), out's buffers released when the pass
// ends it (idle, or ending). As send_h2_pass: 1, 0 (then wait and call
// again) or -1. Callable without a coroutine frame, for the common case.
int send_h2_ready(nghttp2_session* session, StreamWriter& w, H2Output& out);

}  // namespace corio::http::detail
