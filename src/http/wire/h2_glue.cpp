// The shared nghttp2 glue (see h2_glue.hpp).
#include "http/wire/h2_glue.hpp"

#include <algorithm>
#include <cstdint>
#include <new>
#include <string>
#include <string_view>

#include <corio/errors.hpp>
#include <corio/timeout.hpp>

#include "http/wire/body_file.hpp"

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

// Frames below this size are gathered into one write per pass; a larger one
// (a DATA frame of a body nghttp2 copied) is written with what was gathered
// before it, before the next mem_send reuses its buffer. One write per frame
// cost a send(2) each: two per GET /hello over h2c (HEADERS, then DATA), 96%
// of the server's syscall time under h2load (strace -c).
constexpr std::size_t kH2Gather = 4096;

// Payloads below this are copied into the pass's arena rather than referred
// to: a piece of its own costs more than the copy.
constexpr std::size_t kH2Refer = 1024;

// The arena's first size (copy()): a small answer's HEADERS and DATA frames.
constexpr std::size_t kH2Arena = 512;

}  // namespace

// Until a payload is referred to, the arena is the whole pass and no piece
// is listed (small answers: no list to allocate).
void H2Output::copy(std::string_view bytes) {
  if (bytes.empty()) return;
  // Room for an answer's small frames at once: grown frame by frame, the
  // arena was allocated twice per GET /hello (its HEADERS, then its DATA
  // frame), and released with the pass. No more than malloc's per-thread
  // cache serves: 4 KiB from its bins cost more than the two allocations.
  if (arena_.capacity() < kH2Arena) arena_.reserve(kH2Arena);
  if (!pieces_.empty()) {
    if (pieces_.back().data != nullptr) pieces_.push_back({nullptr, arena_.size(), 0});
    pieces_.back().size += bytes.size();
  }
  arena_.append(bytes);
  size_ += bytes.size();
}

bool H2Output::refer(std::string_view bytes) {
  if (bytes.size() < kH2Refer) {
    copy(bytes);
    return false;
  }
  if (pieces_.empty() && !arena_.empty()) pieces_.push_back({nullptr, 0, arena_.size()});
  pieces_.push_back({bytes.data(), 0, bytes.size()});
  size_ += bytes.size();
  return true;
}

// The arena's pieces are resolved only now: it may have moved as it grew.
// However the write ends, the pass is over.
void H2Output::flush(StreamWriter& w) {
  struct Dropped {
    H2Output& out;
    ~Dropped() { out.drop(); }
  } dropped{*this};
  if (pieces_.empty()) {
    if (!arena_.empty()) w.write(arena_);
    return;
  }
  const auto view = [this](const Piece& p) {
    return std::string_view(p.data != nullptr ? p.data : arena_.data() + p.at, p.size);
  };
  std::vector<std::string_view> views;
  views.reserve(pieces_.size());
  for (const Piece& p : pieces_) views.push_back(view(p));
  w.writelines(views);
}

void H2Output::drop() noexcept {
  arena_.clear();
  pieces_.clear();
  kept_.clear();
  for (std::string& piece : pieces_kept_) recycle_piece(std::move(piece));
  pieces_kept_.clear();
  size_ = 0;
  ++passes_;
}

void H2Output::release() noexcept {
  drop();
  std::string().swap(arena_);
  std::vector<Piece>().swap(pieces_);
  std::vector<std::string>().swap(kept_);
  std::vector<std::string>().swap(pieces_kept_);
}

namespace {

// Whether a pass goes on taking frames from nghttp2. Not past `bound`; and
// over TLS, a bounded pass with nothing gathered yet (starting, or just
// flushed) stops while TLS holds records the socket did not take: the next
// flush would be refused, copied into the writer's buffer, and taken from
// there later.
bool pass_goes_on(const StreamWriter& w, const H2Output& out, std::size_t bound) {
  if (w.get_write_buffer_size() + out.size() >= bound) return false;
  return !out.over_tls() || out.size() > 0 || bound == SIZE_MAX || w.is_flushed();
}

}  // namespace

int send_h2_pass(nghttp2_session* session, StreamWriter& w, H2Output& out, std::size_t bound) {
  while (pass_goes_on(w, out, bound)) {
    const std::uint8_t* data = nullptr;
    const ssize_t n = nghttp2_session_mem_send(session, &data);
    if (n < 0 || w.is_closing()) {
      out.drop();
      return -1;
    }
    if (n == 0) {
      const bool paused = out.full();  // see H2Output::full(): more may follow
      out.flush(w);
      if (!paused) return 1;
      continue;
    }
    const std::string_view frame(reinterpret_cast<const char*>(data), static_cast<std::size_t>(n));
    if (frame.size() < kH2Gather) {
      out.copy(frame);
    } else {
      out.refer(frame);
      out.flush(w);  // the frame is nghttp2's until its next mem_send
    }
  }
  out.flush(w);
  return 0;
}

int send_h2_ready(nghttp2_session* session, StreamWriter& w, H2Output& out) {
  if (w.is_closing()) return -1;
  if (nghttp2_session_want_write(session) == 0) return 1;
  const int pass = send_h2_pass(session, w, out);
  if (pass != 0) out.release();  // idle, or ending: no buffer kept
  return pass;
}

Coro<bool> send_h2_frames(nghttp2_session* session, StreamWriter& w, H2Output& out,
                          std::optional<std::chrono::duration<double>> send_timeout) {
  for (;;) {
    const int pass = send_h2_ready(session, w, out);
    if (pass != 0) co_return pass > 0;
    if (w.is_flushed() && !w.is_closing()) continue;  // the socket took it all
    // Above its high-water mark: drain() waits until the buffer is down to
    // the low one. Else, the transport held some back (pass_goes_on), or
    // the buffer is on its way: wait until that is out.
    const bool above = w.get_write_buffer_size() > w.get_write_buffer_limits().second;
    Coro<void> room = above ? w.drain() : w.wait_writable();
    if (!send_timeout) {
      co_await std::move(room);
      continue;
    }
    try {
      co_await wait_for(std::move(room), *send_timeout);
    } catch (const TimeoutError&) {
      w.abort();  // a peer that does not read: as HTTP/1.1's send_timeout
      co_return false;
    }
  }
}

}  // namespace corio::http::detail
