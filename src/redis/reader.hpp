// The reply reader's object functions: hiredis's own (0.14) allocate an
// array's element slots for the count the server announces, so 13 bytes,
// `*100000000\r\n`, cost 800 MB. Ours build the same redisReply trees
// (ReplyParser turns them into Replies) but grow an array's slots with the
// elements that arrive, and refuse a reply past the client's limits.
//
// A reply's size is the bytes of its strings plus kElementCost per element
// (the node, its slot in the parent and the allocator's share). A refused
// reply makes hiredis fail the reader; the connection then closes and its
// commands fail with `Budget::refused`.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <hiredis/read.h>

#include <corio/redis/reply.hpp>

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

// hiredis's reply reader with our object functions and a Budget, turning
// the bytes of a connection into Replies. Once failed() (a protocol error,
// a reply over the limits), it takes no more bytes: the connection must
// close, with error() as the reason.
class ReplyParser {
 public:
  explicit ReplyParser(Budget budget);
  ReplyParser(const ReplyParser&) = delete;
  ReplyParser& operator=(const ReplyParser&) = delete;
  ~ReplyParser();

  // Takes the bytes (copied into the reader's buffer).
  void feed(std::string_view bytes);
  // The next whole reply into `out`; false when none is whole yet, or failed().
  bool next(Reply& out);
  // After the whole replies were taken: whether the unfinished one fits the
  // budget (false fails the parser), and the buffer's memory released when
  // nothing is left in it (an idle connection holds no read buffer).
  bool settle();
  bool failed() const noexcept { return !error_.empty(); }
  const std::string& error() const noexcept { return error_; }

 private:
  void fail();
  Budget budget_;
  redisReader* reader_;
  std::size_t peak_ = 0;  // the most the reader's buffer held since it was made
  std::string error_;
};

}  // namespace corio::redis::detail
