// The FIFO of a Conn's received buffers and of a listener's accepted fds.
//
// Not std::deque: libstdc++'s allocates a 512-byte node when constructed
// (twice per Conn, listening or not) and a new one every few dozen pushes,
// and a thousand connections' nodes are that many more cache misses per
// message. These queues hold a handful of entries (kRecvCap, kAcceptCap, a
// little past them while a cancel is on its way), so a ring that allocates
// nothing before its first push and doubles when full stays in a cache line
// or two.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>

namespace corio::detail::uring {

template <class T>
class Fifo {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
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
    --size_;
  }

 private:
  void grow() {
    const std::uint32_t cap = cap_ != 0 ? 2 * cap_ : 4;  // a power of two: masks, not modulo
    auto bigger = std::make_unique<T[]>(cap);
    for (std::uint32_t i = 0; i < size_; ++i) bigger[i] = buf_[(head_ + i) & (cap_ - 1)];
    buf_ = std::move(bigger);
    cap_ = cap;
    head_ = 0;
  }

  std::unique_ptr<T[]> buf_;
  std::uint32_t cap_ = 0, head_ = 0, size_ = 0;
};

}  // namespace corio::detail::uring
