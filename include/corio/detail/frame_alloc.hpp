// Per-thread recycling of coroutine frames, task states and callback handles.
//
// Every co_await of a Coro allocates a frame; every create_task allocates a task
// state. Their sizes fall into a handful of classes, so a per-thread free list per
// size class turns glibc's malloc+free (~20 ns through tcache) into two pointer
// moves. Classes are 16c+8 bytes: glibc adds an 8-byte header and rounds chunks
// to 16, so a 16c+8 block fills its chunk exactly (a 104-byte task state costs
// one 112-byte chunk, not 128). Blocks may be freed on another thread than the one that allocated
// them: they simply join that thread's lists. Sanitizer builds use plain new/delete
// so that ASan and TSan see every frame.
#pragma once

#include <cstddef>
#include <new>

#include "corio/detail/sanitizers.hpp"

#if defined(CORIO_ASAN) || defined(CORIO_TSAN)
#define CORIO_NO_FRAME_POOL 1
#endif

namespace corio::detail {

struct FramePool {
  static constexpr std::size_t kGranule = 16;
  static constexpr std::size_t kClasses = 64;  // blocks up to 1 KiB are pooled
  static constexpr std::size_t size_class(std::size_t n) noexcept { return (n + 7) / kGranule; }
  static constexpr std::size_t block_size(std::size_t c) noexcept { return c * kGranule + 8; }
  static constexpr unsigned kMaxCached = 4096;  // per class: bounds memory kept after a burst
  struct Block {
    Block* next;
  };
  Block* head[kClasses];
  unsigned count[kClasses];
};

// constinit and trivially destructible: access compiles to one fs-relative load,
// without the TLS init-guard call a non-trivial thread_local would cost.
inline constinit thread_local FramePool tls_frame_pool{};

inline void* frame_alloc(std::size_t n) {
#ifndef CORIO_NO_FRAME_POOL
  const std::size_t c = FramePool::size_class(n);
  if (c < FramePool::kClasses) {
    FramePool& pool = tls_frame_pool;
    if (FramePool::Block* b = pool.head[c]) {
      pool.head[c] = b->next;
      --pool.count[c];
      return b;
    }
    return ::operator new(FramePool::block_size(c));
  }
#endif
  return ::operator new(n);
}

inline void frame_free(void* p, [[maybe_unused]] std::size_t n) noexcept {
#ifndef CORIO_NO_FRAME_POOL
  const std::size_t c = FramePool::size_class(n);
  if (c < FramePool::kClasses) {
    FramePool& pool = tls_frame_pool;
    if (pool.count[c] < FramePool::kMaxCached) {
      auto* b = static_cast<FramePool::Block*>(p);
      b->next = pool.head[c];
      pool.head[c] = b;
      ++pool.count[c];
      return;
    }
  }
#endif
  ::operator delete(p);
}

// Mixin giving a class pooled operator new/delete.
struct Pooled {
  static void* operator new(std::size_t n) { return frame_alloc(n); }
  static void operator delete(void* p, std::size_t n) noexcept { frame_free(p, n); }
};

}  // namespace corio::detail
