// The FIFO of a Conn's received buffers and of a listener's accepted fds.
//
// Not std::deque: libstdc++'s allocates a 512-byte node when constructed
// (twice per Conn, listening or not) and a new one every few dozen pushes,
// and a thousand connections' nodes are that many more cache misses per
// message. These queues hold a handful of entries (kRecvCap, kAcceptCap, a
// little past them while a cancel is on its way), so a ring that doubles when
// full stays in a cache line or two. Its first entry lives inline: a
// request-sized message is one received buffer, so a connection that reads
// as it receives never allocates, and one that drained a burst gives its
// ring back (an idle connection holds none: 64 bytes of heap each).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace corio::detail::uring {

template <class T>
class Fifo {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  Fifo() noexcept = default;
  Fifo(const Fifo&) = delete;  // buf_ may point into this object
  Fifo& operator=(const Fifo&) = delete;
  ~Fifo() { release(); }

  bool empty() const noexcept { return size_ == 0; }
  std::size_t size() const noexcept { return size_; }
  T& front() noexcept { return buf_[head_]; }
  const T& front() const noexcept { return buf_[head_]; }
  void push_back(const T& value) {
    if (size_ == cap_) grow();
    buf_[(head_ + size_) & (cap_ - 1)] = value;
    ++size_;
  }
  void pop_front() noexcept {
    head_ = (head_ + 1) & (cap_ - 1);
    if (--size_ == 0 && buf_ != &inline_) release();
  }

 private:
  void grow() {
    const std::uint32_t cap = 2 * cap_;  // a power of two: masks, not modulo
    T* bigger = new T[cap];
    for (std::uint32_t i = 0; i < size_; ++i) bigger[i] = buf_[(head_ + i) & (cap_ - 1)];
    release();
    buf_ = bigger;
    cap_ = cap;
    head_ = 0;
  }
  void release() noexcept {
    if (buf_ != &inline_) delete[] buf_;
    buf_ = &inline_;
    cap_ = 1;
    head_ = 0;
  }

  T* buf_ = &inline_;
  std::uint32_t cap_ = 1, head_ = 0, size_ = 0;
  T inline_{};  // last: a 12-byte Chunk packs after the counters
};

}  // namespace corio::detail::uring
