// The provided-buffer ring (see buffer_ring.hpp). Built only with liburing.
#ifdef CORIO_HAVE_LIBURING

#include "core/backend/io_uring/buffer_ring.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <utility>
#include <system_error>

namespace corio::detail::uring {

namespace {

constexpr std::size_t kRingBytes = BufferRing::kCount * sizeof(io_uring_buf);
constexpr std::size_t kMemBytes = static_cast<std::size_t>(BufferRing::kCount) * BufferRing::kSize;

void* map(std::size_t bytes) {
  // MAP_NORESERVE: the buffers cost memory only once the kernel writes them.
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw std::system_error(errno, std::generic_category(), "mmap(buffer ring)");
  return p;
}

}  // namespace

BufferRing::BufferRing() {
  ring_ = static_cast<io_uring_buf_ring*>(map(kRingBytes));
  try {
    mem_ = static_cast<char*>(map(kMemBytes));
  } catch (...) {
    ::munmap(ring_, kRingBytes);
    throw;
  }
  io_uring_buf_ring_init(ring_);
}

BufferRing::~BufferRing() {
  // The backend exits its ring first: no request can write here any more.
  ::munmap(mem_, kMemBytes);
  ::munmap(ring_, kRingBytes);
}

void BufferRing::register_with(io_uring& ring) {
  io_uring_buf_reg reg{};
  reg.ring_addr = reinterpret_cast<std::uintptr_t>(ring_);
  reg.ring_entries = kCount;
  reg.bgid = kGroup;
  if (int err = io_uring_register_buf_ring(&ring, &reg, 0); err < 0) {
    throw std::system_error(-err, std::generic_category(), "io_uring_register_buf_ring");
  }
  for (unsigned bid = kCount; bid-- > 0;) give_back(bid);  // buffer 0 on top
  publish();
}

void BufferRing::publish() noexcept {
  const unsigned want = std::clamp(2 * std::exchange(taken_, 0), kMinPublished, kCount);
  int added = 0;
  for (; published_ < want && stacked_ > 0; ++published_, ++added) {
    const unsigned bid = stack_[--stacked_];
    io_uring_buf_ring_add(ring_, data(bid), kSize, static_cast<unsigned short>(bid),
                          io_uring_buf_ring_mask(kCount), added);
  }
  if (added > 0) io_uring_buf_ring_advance(ring_, added);
}

}  // namespace corio::detail::uring

#endif  // CORIO_HAVE_LIBURING
