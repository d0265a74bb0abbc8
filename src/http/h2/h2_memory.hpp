// The bytes nghttp2 allocates for this thread's server sessions (their
// frames queued, streams, HPACK tables), counted by the allocator every
// session is made with: what a peer can make a loop's HTTP/2 connections
// hold inside nghttp2, for the defences' tests and the idle benchmark.
// Thread-local: one loop per thread, and sessions live on their loop's.
#pragma once

#include <cstddef>

#include <nghttp2/nghttp2.h>

namespace corio::http::detail {

struct H2Memory {
  std::size_t live = 0;  // bytes allocated now
  std::size_t peak = 0;  // the most live so far (reset it to watch a stretch)
};

H2Memory& h2_memory() noexcept;  // the calling thread's
nghttp2_mem* counting_mem() noexcept;

}  // namespace corio::http::detail
