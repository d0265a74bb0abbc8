// A byte queue for the streams: append at the end, consume from the front.
//
// The read offset makes consuming O(1) (no memmove per readline); the bytes
// move to the front only when the free space at the end is too small, and
// the storage grows (doubling) only when compacting would not make room.
//
// An empty buffer holds no storage: the moment its last byte is consumed,
// the block goes back to the thread's BufferPool, and the next prepare()
// takes one again. An idle connection, whose buffers are drained, thus
// costs no buffer (nginx frees an idle keep-alive connection's buffers the
// same way), while a busy one pays two pointer moves per fill, not a malloc.
// Storage is left uninitialised: a 64 KiB recv buffer is not zeroed before
// every read.
//
// A buffer may also borrow: view bytes someone else holds (a lending
// transport's receive buffer) without a copy and without storage of its own
// (capacity 0). Consuming works in place; prepare() first copies what is
// borrowed into storage of its own, so whoever lent the bytes is to be told
// they were taken before that (Connection::settle_lent).
#pragma once

#include <cstddef>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace corio::detail {

// Blocks of 4 KiB to 256 KiB (powers of two), recycled through a free list
// per size on each thread (a loop's connections all live on its thread).
// Each list keeps at most kCachedBytes: a burst of busy connections must not
// pin its peak for the thread's life. Larger blocks go straight to the heap.
class BufferPool {
 public:
  static constexpr std::size_t kMinBlock = 4 * 1024;
  static constexpr std::size_t kMaxPooledBlock = 256 * 1024;
  static constexpr std::size_t kCachedBytes = 512 * 1024;  // per block size

  // A block of at least n bytes; n is rounded up to the block's size.
  static char* take(std::size_t& n);
  static void give_back(char* block, std::size_t n) noexcept;
  // For tests: the bytes this thread's lists hold, and the blocks taken on
  // this thread and not given back (held by buffers: none when every
  // connection is idle).
  static std::size_t cached_bytes() noexcept;
  static std::size_t blocks_out() noexcept;
};

class ByteBuffer {
 public:
  ByteBuffer() noexcept = default;
  ByteBuffer(ByteBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)),
        capacity_(std::exchange(o.capacity_, 0)),
        begin_(std::exchange(o.begin_, 0)),
        end_(std::exchange(o.end_, 0)) {}
  ByteBuffer& operator=(ByteBuffer&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      capacity_ = std::exchange(o.capacity_, 0);
      begin_ = std::exchange(o.begin_, 0);
      end_ = std::exchange(o.end_, 0);
    }
    return *this;
  }
  ~ByteBuffer() { release(); }

  std::size_t size() const noexcept { return end_ - begin_; }
  bool empty() const noexcept { return begin_ == end_; }
  std::string_view view() const noexcept { return {data_ + begin_, size()}; }
  // The storage held: 0 whenever the buffer is empty (outside prepare/commit)
  // or borrowed.
  std::size_t capacity() const noexcept { return capacity_; }

  // Views `bytes` in place; the buffer must be empty.
  void borrow(std::string_view bytes) noexcept {
    data_ = const_cast<char*>(bytes.data());  // never written through: capacity_ stays 0
    begin_ = 0;
    end_ = bytes.size();
  }
  bool borrowed() const noexcept { return capacity_ == 0 && !empty(); }

  void consume(std::size_t n) noexcept {
    if (n == 0) return;  // a span prepare() gave out stays valid
    begin_ += n;
    if (begin_ == end_) release();
  }
  // The first n bytes (at most size()), removed from the buffer.
  std::string take(std::size_t n) {
    std::string out(view().substr(0, n));
    consume(out.size());
    return out;
  }
  void clear() noexcept { release(); }
  // Gives the storage back if nothing was committed since prepare() (a read
  // that found nothing).
  void trim() noexcept {
    if (empty()) release();
  }

  // At least `min` bytes of free space at the end, to be filled and then
  // commit()ted. The span stays valid until the buffer is changed.
  std::span<char> prepare(std::size_t min);
  void commit(std::size_t n) noexcept { end_ += n; }
  void append(std::string_view bytes) {
    if (bytes.empty()) return;  // memcpy's pointers must not be null, even for 0 bytes
    std::memcpy(prepare(bytes.size()).data(), bytes.data(), bytes.size());
    commit(bytes.size());
  }

 private:
  void release() noexcept {
    if (capacity_ != 0) BufferPool::give_back(data_, capacity_);
    data_ = nullptr;
    capacity_ = begin_ = end_ = 0;
  }

  char* data_ = nullptr;
  std::size_t capacity_ = 0;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
};

}  // namespace corio::detail
