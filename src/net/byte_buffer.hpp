// A byte queue for the streams: append at the end, consume from the front.
//
// The read offset makes consuming O(1) (no memmove per readline); the bytes
// move to the front only when the free space at the end is too small, and
// the storage grows (doubling) only when compacting would not make room.
// Storage is left uninitialised (make_unique_for_overwrite): a 64 KiB recv
// buffer is not zeroed before every read.
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace corio::detail {

class ByteBuffer {
 public:
  std::size_t size() const noexcept { return end_ - begin_; }
  bool empty() const noexcept { return begin_ == end_; }
  std::string_view view() const noexcept { return {data_.get() + begin_, size()}; }

  void consume(std::size_t n) noexcept {
    begin_ += n;
    if (begin_ == end_) begin_ = end_ = 0;  // empty: the next write starts at the front
  }
  // The first n bytes (at most size()), removed from the buffer.
  std::string take(std::size_t n) {
    std::string out(view().substr(0, n));
    consume(out.size());
    return out;
  }
  void clear() noexcept { begin_ = end_ = 0; }

  // At least `min` bytes of free space at the end, to be filled and then
  // commit()ted. The span stays valid until the buffer is changed.
  std::span<char> prepare(std::size_t min);
  void commit(std::size_t n) noexcept { end_ += n; }
  void append(std::string_view bytes) {
    if (bytes.empty()) return;  // memcpy's pointers must not be null, even for 0 bytes
    std::memcpy(prepare(bytes.size()).data(), bytes.data(), bytes.size());
    commit(bytes.size());
  }
  // Gives the storage back when the buffer is empty and bigger than
  // `keep`: one burst must not pin its peak size for the connection's life.
  void shrink_if_empty(std::size_t keep) noexcept {
    if (empty() && capacity_ > keep) {
      data_.reset();
      capacity_ = 0;
    }
  }

 private:
  std::unique_ptr<char[]> data_;
  std::size_t capacity_ = 0;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
};

inline std::span<char> ByteBuffer::prepare(std::size_t min) {
  if (capacity_ - end_ < min) {
    const std::size_t used = size();
    if (capacity_ - used >= min) {
      std::memmove(data_.get(), data_.get() + begin_, used);
    } else {
      std::size_t cap = capacity_ ? capacity_ * 2 : min;
      if (cap < used + min) cap = used + min;
      auto bigger = std::make_unique_for_overwrite<char[]>(cap);
      if (used) std::memcpy(bigger.get(), data_.get() + begin_, used);
      data_ = std::move(bigger);
      capacity_ = cap;
    }
    begin_ = 0;
    end_ = used;
  }
  return {data_.get() + end_, capacity_ - end_};
}

}  // namespace corio::detail
