// A file range read ahead of its DATA frames (see h2_file.hpp).
#include "http/h2/h2_file.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <new>
#include <utility>

#include "http/wire/body_file.hpp"
#include "http/wire/h2_glue.hpp"

namespace corio::http::detail {

void H2FileReader::start(int fd, ByteRange range) noexcept {
  fd_ = fd;
  at_ = range.first;
  end_ = range.last + 1;
  error_ = 0;
}

// A read that fails, or finds the file ended before the range (it shrank
// while sent), ends the range: at_ jumps to its end.
bool H2FileReader::read(std::size_t ahead, H2Output& out) noexcept {
  try {
    if (piece_.empty()) piece_ = take_piece_buffer();
    const std::size_t want =
        static_cast<std::size_t>(std::min<std::uint64_t>({left(), ahead, piece_.size()}));
    const ssize_t got = ::pread(fd_, piece_.data(), want, static_cast<off_t>(at_));
    error_ = got < 0 ? errno : got == 0 ? EIO : 0;
    if (error_ == 0) {
      piece_at_ = 0;
      piece_end_ = static_cast<std::size_t>(got);
      out.add_ahead(piece_end_);
      return true;
    }
  } catch (const std::bad_alloc&) {
    error_ = ENOMEM;
  }
  at_ = end_;
  return false;
}

// A piece is overwritten only once all of it was taken, and then it went to
// the pass already: a new one is taken for the next read.
std::string_view H2FileReader::take(std::size_t length, std::size_t ahead, H2Output& out) noexcept {
  if (buffered() == 0 && !read(ahead, out)) return {};
  const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(length, buffered()));
  const std::string_view frame(piece_.data() + piece_at_, n);
  piece_at_ += n;
  at_ += n;
  out.sub_ahead(n);
  lent_in_ = out.passes();
  if (buffered() == 0) {
    try {
      out.keep_piece(std::move(piece_));
    } catch (const std::bad_alloc&) {
      error_ = ENOMEM;  // the frame cannot be kept for its write: end the range without it
      at_ = end_;
      return {};
    }
    piece_.clear();
  }
  return frame;
}

// Bytes read and never taken leave the pass's count; a piece that the
// current pass still refers to is kept until that pass ends.
void H2FileReader::finish(H2Output& out) noexcept {
  out.sub_ahead(buffered());
  piece_at_ = piece_end_ = 0;
  fd_ = -1;
  at_ = end_ = 0;
  if (piece_.empty()) return;
  if (lent_in_ != out.passes()) {
    recycle_piece(std::move(piece_));
  } else {
    try {
      out.keep_piece(std::move(piece_));
    } catch (const std::bad_alloc&) {
      out.drop();  // out of memory: the pass's frames are lost, not read from freed memory
    }
  }
  piece_.clear();
}

}  // namespace corio::http::detail
