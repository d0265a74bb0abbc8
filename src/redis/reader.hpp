// The reply reader's object functions: hiredis's own (0.14) allocate an
// array's element slots for the count the server announces, so 13 bytes,
// `*100000000\r\n`, cost 800 MB. Ours build the same redisReply trees
// (hiredis's pub/sub code reads them) but grow an array's slots with the
// elements that arrive, and refuse a reply past the client's limits.
//
// A reply's size is the bytes of its strings plus kElementCost per element
// (the node, its slot in the parent and the allocator's share). A refused
// reply makes hiredis fail the reader; the connection then closes and its
// commands fail with `Budget::refused`.
#pragma once

#include <cstddef>
#include <string>

#include <hiredis/read.h>

namespace corio::redis::detail {

inline constexpr std::size_t kElementCost = 64;

struct Budget {
  std::size_t max_bytes;
  std::size_t max_elements;  // in one array
  std::size_t used = 0;      // by the reply being read
  std::string refused;       // why a reply was refused; empty if none was
};

// Makes `reader` build replies with our object functions, within `budget`
// (which outlives the reader).
void use_budget(redisReader* reader, Budget* budget);

// After bytes were fed to `reader` and every whole reply taken: whether the
// reply still being read fits, counting the bytes buffered for it and the
// length its unfinished bulk string announced. Sets `budget->refused` when
// not; the caller closes the connection then.
bool pending_reply_fits(const redisReader* reader, Budget* budget);

}  // namespace corio::redis::detail
