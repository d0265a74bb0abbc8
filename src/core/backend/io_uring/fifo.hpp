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
// ring back (an idle connection holds none). The inline entry and the
// pointer to a grown ring share their bytes, and the counters are 16 bits:
// 16 bytes in all for a Chunk or an fd, inside every Conn. A queue never
// nears 2^15 entries: receives are capped by the 64 provided buffers, and
// accepts by kAcceptCap plus what one reap of the completion queue (4,096
// entries) adds before the cancel is submitted.
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
  Fifo(const Fifo&) = delete;
  Fifo& operator=(const Fifo&) = delete;
  ~Fifo() { release(); }

  bool empty() const noexcept { return size_ == 0; }
  std::size_t size() const noexcept { return size_; }
  T& front() noexcept { return data()[head_]; }
  const T& front() const noexcept { return cap_ == 1 ? one_ : many_[head_]; }
  void push_back(const T& value) {
    if (size_ == cap_) grow();
    data()[(head_ + size_) & (cap_ - 1)] = value;
    ++size_;
  }
  void pop_front() noexcept {
    head_ = static_cast<std::uint16_t>((head_ + 1) & (cap_ - 1));
    if (--size_ == 0) release();
  }

 private:
  T* data() noexcept { return cap_ == 1 ? &one_ : many_; }
  void grow() {
    const auto cap = static_cast<std::uint16_t>(2 * cap_);  // a power of two: masks, not modulo
    T* bigger = new T[cap];
    for (std::uint16_t i = 0; i < size_; ++i) bigger[i] = data()[(head_ + i) & (cap_ - 1)];
    release();
    many_ = bigger;
    cap_ = cap;
  }
  void release() noexcept {
    if (cap_ > 1) delete[] many_;
    one_ = T{};
    cap_ = 1;
    head_ = 0;
  }

  union {
    T one_{};  // while cap_ is 1
    T* many_;  // a grown ring of cap_ entries
  };
  std::uint16_t cap_ = 1, head_ = 0, size_ = 0;
};

}  // namespace corio::detail::uring
