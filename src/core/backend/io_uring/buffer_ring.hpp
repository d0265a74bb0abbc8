// The provided-buffer ring the io_uring backend's multishot receives fill
// (Linux 5.19): a fixed number of equal buffers shared by every stream socket
// of one loop, so that receive memory is fixed however many connections
// there are, and an idle connection holds none (the kernel picks a buffer
// only when bytes arrive). A buffer goes back when a try_recv() has copied
// it out, or when its fd was detached.
//
// Warm buffers first: the kernel takes buffers in the order they were put in
// the ring, so a ring holding every free buffer hands out the one returned
// longest ago, and the loop's receives cycle through all 4 MiB (more than a
// core's L2) even when ten connections use ten buffers at a time. So a
// returned buffer waits on a stack, and each poll() publishes, most recently
// returned first, only about twice what the last poll() took (at least
// kMinPublished): the kernel's next receives land in memory still in the
// cache. A burst that takes more than was published gets ENOBUFS on the
// rest, which re-arm at the next poll() (their bytes wait in the socket),
// and the next publish covers the burst.
#pragma once

#include <liburing.h>

#include <cstddef>
#include <cstdint>

namespace corio::detail::uring {

class BufferRing {
 public:
  // 64 buffers of 64 KiB: 4 MiB per loop, mapped lazily, resident only as
  // far as the largest burst reached (buffers are published warmest first,
  // above). Measured when the ring still cycled through every buffer (fewer
  // buffers were warmer ones then), server CPU per echo round trip, same
  // runs, 64 against 128 buffers: 64 KiB x 10 connections 19.5 against 20.1 us, 64 KiB x 100 19.5
  // against 23.3, 1 KiB x 1,000 5.0 against 5.2 (32 buffers: no better at
  // 64 KiB x 100). The HTTP client's streaming test holds corio to 16 MiB of
  // growth, which leaves no room for many more anyway. 64 KiB takes a 64 KiB
  // message in one buffer: in one echo run (64 KiB x 10 connections) 32 KiB
  // buffers cost 1.35x the raw io_uring C server, 64 KiB 1.06-1.15x. A reader
  // that does not keep up is capped per fd (kRecvCap); one starved of buffers
  // reads into its own, so 64 still serve 1,000 connections.
  static constexpr unsigned kCount = 64;  // a power of two, as the ring requires
  static constexpr unsigned kSize = 64 * 1024;
  static constexpr int kGroup = 0;

  BufferRing();  // maps the memory; throws std::system_error
  ~BufferRing();
  BufferRing(const BufferRing&) = delete;
  BufferRing& operator=(const BufferRing&) = delete;

  // Published at least, so that a quiet loop's first receives find buffers.
  static constexpr unsigned kMinPublished = 8;

  // Registers the ring and publishes the first buffers; throws std::system_error.
  void register_with(io_uring& ring);
  // Before each submit: tops the ring up to twice what was taken since the
  // last publish (see above), from the most recently returned buffers.
  void publish() noexcept;

  char* data(unsigned bid) noexcept { return mem_ + static_cast<std::size_t>(bid) * kSize; }
  // A completion took a buffer out of the ring.
  void taken() noexcept {
    --published_;
    ++taken_;
  }
  void give_back(unsigned bid) noexcept { stack_[stacked_++] = static_cast<std::uint16_t>(bid); }
  // Free buffers, published or not: none means every buffer holds bytes.
  unsigned free_count() const noexcept { return published_ + stacked_; }

 private:
  io_uring_buf_ring* ring_ = nullptr;
  char* mem_ = nullptr;
  unsigned published_ = 0;              // in the ring, not taken yet
  unsigned taken_ = 0;                  // since the last publish()
  std::uint16_t stack_[kCount] = {};    // returned, not published: the top is the warmest
  unsigned stacked_ = 0;
};

}  // namespace corio::detail::uring
