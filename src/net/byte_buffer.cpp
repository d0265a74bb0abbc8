// BufferPool and ByteBuffer's growth (see byte_buffer.hpp).
#include "net/byte_buffer.hpp"

#include <bit>
#include <new>

#include <corio/detail/sanitizers.hpp>

#ifdef CORIO_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace corio::detail {

namespace {

constexpr std::size_t kClasses =
    std::countr_zero(BufferPool::kMaxPooledBlock / BufferPool::kMinBlock) + 1;

// The free lists, destroyed with their thread (a function-local thread_local:
// one guard test per access, against a loop iteration's thousands of
// instructions). Cached blocks are poisoned under ASan, so that a use after
// give_back() is still caught.
class Lists {
 public:
  Lists() = default;
  Lists(const Lists&) = delete;
  Lists& operator=(const Lists&) = delete;
  ~Lists() {
    for (std::size_t c = 0; c < kClasses; ++c) {
      while (head_[c] != nullptr) ::operator delete(pop(c));
    }
  }

  char* pop(std::size_t c) noexcept {
    Block* b = head_[c];
    if (b == nullptr) return nullptr;
#ifdef CORIO_ASAN
    ASAN_UNPOISON_MEMORY_REGION(b, block_size(c));
#endif
    head_[c] = b->next;
    --count_[c];
    return reinterpret_cast<char*>(b);
  }
  bool push(std::size_t c, char* p) noexcept {
    if (count_[c] >= BufferPool::kCachedBytes / block_size(c)) return false;
    auto* b = reinterpret_cast<Block*>(p);
    b->next = head_[c];
    head_[c] = b;
    ++count_[c];
#ifdef CORIO_ASAN
    ASAN_POISON_MEMORY_REGION(b, block_size(c));
#endif
    return true;
  }
  std::size_t cached_bytes() const noexcept {
    std::size_t sum = 0;
    for (std::size_t c = 0; c < kClasses; ++c) sum += count_[c] * block_size(c);
    return sum;
  }

  static constexpr std::size_t block_size(std::size_t c) noexcept {
    return BufferPool::kMinBlock << c;
  }

 private:
  struct Block {
    Block* next;
  };
  Block* head_[kClasses] = {};
  std::size_t count_[kClasses] = {};

 public:
  std::size_t out = 0;  // blocks taken and not given back
};

Lists& lists() {
  thread_local Lists l;
  return l;
}

// The class of a block of at least n bytes (n <= kMaxPooledBlock).
std::size_t class_of(std::size_t n) noexcept {
  if (n <= BufferPool::kMinBlock) return 0;
  return std::bit_width((n - 1) / BufferPool::kMinBlock);
}

}  // namespace

char* BufferPool::take(std::size_t& n) {
  Lists& l = lists();
  char* p = nullptr;
  if (n > kMaxPooledBlock) {
    p = static_cast<char*>(::operator new(n));
  } else {
    const std::size_t c = class_of(n);
    n = Lists::block_size(c);
    p = l.pop(c);
    if (p == nullptr) p = static_cast<char*>(::operator new(n));
  }
  ++l.out;
  return p;
}

void BufferPool::give_back(char* block, std::size_t n) noexcept {
  Lists& l = lists();
  --l.out;
  if (n <= kMaxPooledBlock && std::has_single_bit(n) && l.push(class_of(n), block)) return;
  ::operator delete(block);
}

std::size_t BufferPool::cached_bytes() noexcept { return lists().cached_bytes(); }

std::size_t BufferPool::blocks_out() noexcept { return lists().out; }

// Borrowed bytes (capacity 0) always take the copying branch.
std::span<char> ByteBuffer::prepare(std::size_t min) {
  if (capacity_ < end_ + min) {
    const std::size_t used = size();
    if (capacity_ >= used + min && capacity_ != 0) {
      std::memmove(data_, data_ + begin_, used);
    } else {
      std::size_t cap = capacity_ ? capacity_ * 2 : min;
      if (cap < used + min) cap = used + min;
      char* bigger = BufferPool::take(cap);
      if (used) std::memcpy(bigger, data_ + begin_, used);
      if (capacity_ != 0) BufferPool::give_back(data_, capacity_);
      data_ = bigger;
      capacity_ = cap;
    }
    begin_ = 0;
    end_ = used;
  }
  return {data_ + end_, capacity_ - end_};
}

}  // namespace corio::detail
