// A file range of an HTTP/2 answer (H2Stream::file_range()), read ahead of
// its DATA frames: a piece of up to kFilePiece at a time, as far as the
// peer's windows and the send pass's room allow, and handed to nghttp2
// frame by frame (NGHTTP2_DATA_FLAG_NO_COPY) from that piece.
//
// A pread per frame cost a 64 KiB answer four 16 KiB reads (the frame size
// clients allow) where nginx makes two; one piece reads it at once, over
// h2c and TLS (bench/http2/README.md). The bytes read ahead are bounded
// twice:
//   - per stream, by the windows: only bytes nghttp2 may send without the
//     peer's leave are read, so a peer that never opens its window pins no
//     file bytes, and at most one piece (kFilePiece) otherwise, kept only
//     while the pass or the socket is behind;
//   - per connection, by the pass (H2Output::read_room(), and the frame
//     being taken past it, as a pass ends past its bound by a frame): the
//     streams' unsent bytes read ahead count against the pass's room, so
//     that ten streams interleaved frame by frame do not read ten pieces for
//     one pass (past the room a stream reads one frame, as before).
// A piece whose last frame was taken goes to the pass (H2Output::keep_piece),
// recycled once the pass's write is over.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "http/server/file_ranges.hpp"

namespace corio::http::detail {

class H2Output;

class H2FileReader {
 public:
  void start(int fd, ByteRange range) noexcept;
  // Bytes of the range not yet taken by a frame.
  std::uint64_t left() const noexcept { return end_ - at_; }
  // The next frame's bytes, at most `length`, out of the piece read ahead,
  // or of a new one of up to `ahead` bytes read now. They stay where they
  // are until `out`'s pass ends. Empty when the read failed (error()):
  // the range is over then.
  std::string_view take(std::size_t length, std::size_t ahead, H2Output& out) noexcept;
  // Bytes read ahead and not yet taken: none, and take() reads.
  std::size_t buffered() const noexcept { return piece_end_ - piece_at_; }
  // errno of a failed read; EIO when the file ended early (it shrank).
  int error() const noexcept { return error_; }
  // The range is over (taken, failed or abandoned): no byte is read ahead
  // any more, and the piece goes back.
  void finish(H2Output& out) noexcept;

 private:
  bool read(std::size_t ahead, H2Output& out) noexcept;

  int fd_ = -1;
  std::uint64_t at_ = 0;      // the next byte a frame takes
  std::uint64_t end_ = 0;     // one past the range's last byte
  std::string piece_;         // a piece buffer (body_file.hpp), or none
  std::size_t piece_at_ = 0;  // piece_'s bytes from here to piece_end_ are at_'s on
  std::size_t piece_end_ = 0;
  std::uint64_t lent_in_ = UINT64_MAX;  // the pass whose frames refer to piece_
  int error_ = 0;
};

}  // namespace corio::http::detail
