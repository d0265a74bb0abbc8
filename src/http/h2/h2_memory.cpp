// nghttp2's allocations, counted (see h2_memory.hpp): each block carries
// its size in a header of one max_align_t, so that free and realloc, which
// nghttp2 calls without a size, can count it back.
#include "http/h2/h2_memory.hpp"

#include <cstdlib>
#include <cstring>

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
  void* base = std::malloc(size + kHeader);
  if (base == nullptr) return nullptr;
  counted(static_cast<std::ptrdiff_t>(size));
  return user(base, size);
}

void mem_free(void* p, void*) {
  if (p == nullptr) return;
  counted(-static_cast<std::ptrdiff_t>(size_of(p)));
  std::free(base_of(p));
}

void* mem_calloc(std::size_t n, std::size_t size, void* ud) {
  if (size != 0 && n > (SIZE_MAX - kHeader) / size) return nullptr;
  void* p = mem_malloc(n * size, ud);
  if (p != nullptr) std::memset(p, 0, n * size);
  return p;
}

void* mem_realloc(void* p, std::size_t size, void* ud) {
  if (p == nullptr) return mem_malloc(size, ud);
  const std::size_t old = size_of(p);
  void* base = std::realloc(base_of(p), size + kHeader);
  if (base == nullptr) return nullptr;
  counted(static_cast<std::ptrdiff_t>(size) - static_cast<std::ptrdiff_t>(old));
  return user(base, size);
}

nghttp2_mem g_mem{nullptr, mem_malloc, mem_free, mem_calloc, mem_realloc};

}  // namespace

H2Memory& h2_memory() noexcept { return t_memory; }

nghttp2_mem* counting_mem() noexcept { return &g_mem; }

}  // namespace corio::http::detail
