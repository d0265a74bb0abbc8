// nghttp2's allocations, counted (see h2_memory.hpp): each block carries
// its size in a header of one max_align_t, so that free and realloc, which
// nghttp2 calls without a size, can count it back. The size also lets the
// blocks come from the thread's frame pool (frame_alloc.hpp), as coroutine
// frames do: nghttp2 allocates and frees about five small blocks per
// request (a stream, its frames' items), and a loop that takes many
// requests per turn overflows glibc's per-size cache of 7 blocks, whose
// slow path was most of the 2,700 instructions malloc and free cost an h2
// GET over TLS (callgrind, h2load -c100 -m1).
#include "http/h2/h2_memory.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include <corio/detail/frame_alloc.hpp>

namespace corio::http::detail {

namespace {

constexpr std::size_t kHeader = alignof(std::max_align_t);

thread_local H2Memory t_memory;

void counted(std::ptrdiff_t delta) noexcept {
  t_memory.live = static_cast<std::size_t>(static_cast<std::ptrdiff_t>(t_memory.live) + delta);
  if (t_memory.live > t_memory.peak) t_memory.peak = t_memory.live;
}

void* user(void* base, std::size_t size) noexcept {
  std::memcpy(base, &size, sizeof size);
  return static_cast<char*>(base) + kHeader;
}

void* base_of(void* p) noexcept { return static_cast<char*>(p) - kHeader; }

std::size_t size_of(void* p) noexcept {
  std::size_t size = 0;
  std::memcpy(&size, base_of(p), sizeof size);
  return size;
}

void* mem_malloc(std::size_t size, void*) {
  if (size > SIZE_MAX - kHeader) return nullptr;
  void* base = nullptr;
  try {
    base = corio::detail::frame_alloc(size + kHeader);
  } catch (const std::bad_alloc&) {
    return nullptr;  // nghttp2 reports NGHTTP2_ERR_NOMEM
  }
  counted(static_cast<std::ptrdiff_t>(size));
  return user(base, size);
}

void mem_free(void* p, void*) {
  if (p == nullptr) return;
  const std::size_t size = size_of(p);
  counted(-static_cast<std::ptrdiff_t>(size));
  corio::detail::frame_free(base_of(p), size + kHeader);
}

void* mem_calloc(std::size_t n, std::size_t size, void* ud) {
  if (size != 0 && n > (SIZE_MAX - kHeader) / size) return nullptr;
  void* p = mem_malloc(n * size, ud);
  if (p != nullptr) std::memset(p, 0, n * size);
  return p;
}

// A new block and a copy: pooled blocks cannot grow in place (nghttp2
// reallocates rarely: its HPACK tables and buffers as they grow).
void* mem_realloc(void* p, std::size_t size, void* ud) {
  if (p == nullptr) return mem_malloc(size, ud);
  void* q = mem_malloc(size, ud);
  if (q == nullptr) return nullptr;  // p stays, as realloc's does
  std::memcpy(q, p, std::min(size, size_of(p)));
  mem_free(p, ud);
  return q;
}

nghttp2_mem g_mem{nullptr, mem_malloc, mem_free, mem_calloc, mem_realloc};

}  // namespace

H2Memory& h2_memory() noexcept { return t_memory; }

nghttp2_mem* counting_mem() noexcept { return &g_mem; }

}  // namespace corio::http::detail
