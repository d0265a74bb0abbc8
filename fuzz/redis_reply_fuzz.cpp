// libFuzzer target: the Redis reply parser (src/redis/reader.hpp: hiredis's
// reader with corio's object functions and limits), what a Client reads
// from its server. Input: a steering byte (bit 0: small limits, 256 bytes
// and 4 elements; the rest: where to split), then the server's bytes.
//
// Checks: the bytes parsed whole and in two pieces give the same replies
// and the same failure; no reply holds more than max_reply_elements in one
// array or more than max_reply_bytes of strings; a failure is a refusal
// past the limits or a protocol error, never anything else.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "redis/reader.hpp"

namespace {

using corio::redis::Reply;
using corio::redis::detail::Budget;
using corio::redis::detail::ReplyParser;

struct Outcome {
  std::vector<Reply> replies;
  std::string error;
};

bool same(const Reply& a, const Reply& b) {
  if (a.type != b.type || a.str != b.str || a.integer != b.integer) return false;
  if (a.elements.size() != b.elements.size()) return false;
  for (std::size_t i = 0; i < a.elements.size(); ++i) {
    if (!same(a.elements[i], b.elements[i])) return false;
  }
  return true;
}

// Strings' bytes, and the widest array, of a reply.
void measure(const Reply& r, std::size_t& bytes, std::size_t& widest) {
  bytes += r.str.size();
  widest = std::max(widest, r.elements.size());
  for (const Reply& e : r.elements) measure(e, bytes, widest);
}

// Feeds the pieces as a connection would: each one's whole replies taken,
// then the unfinished one checked against the limits.
Outcome parse(const Budget& budget, const std::vector<std::string_view>& pieces) {
  ReplyParser parser(budget);
  Outcome out;
  for (std::string_view piece : pieces) {
    parser.feed(piece);
    Reply r;
    while (parser.next(r)) out.replies.push_back(r);
    if (!parser.settle()) break;
  }
  out.error = parser.error();
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const bool small = data[0] & 1;
  const Budget budget{small ? 256u : std::size_t{1} << 20, small ? 4u : 1024u, 0, {}};
  const std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::size_t split = corio_fuzz::split_point(data[0], in.size());
  const Outcome whole = parse(budget, {in});
  const Outcome split_in_two = parse(budget, {in.substr(0, split), in.substr(split)});
  // Split, the unfinished reply is also checked between the pieces, where
  // its raw bytes (a long line of zeros, say) can be refused before it is
  // whole: then only the replies before it compare.
  FUZZ_CHECK(whole.error.empty() || !split_in_two.error.empty());
  if (whole.error.empty() && !split_in_two.error.empty()) {
    FUZZ_CHECK(split_in_two.error.rfind("reply refused", 0) == 0);
  }
  if (whole.error.empty() && split_in_two.error.empty()) {
    FUZZ_CHECK(whole.replies.size() == split_in_two.replies.size());
  }
  const std::size_t common = std::min(whole.replies.size(), split_in_two.replies.size());
  for (std::size_t i = 0; i < common; ++i) FUZZ_CHECK(same(whole.replies[i], split_in_two.replies[i]));
  for (const Reply& r : whole.replies) {
    std::size_t bytes = 0, widest = 0;
    measure(r, bytes, widest);
    FUZZ_CHECK(bytes <= budget.max_bytes && widest <= budget.max_elements);
  }
  for (const Outcome* o : {&whole, &split_in_two}) {
    FUZZ_CHECK(o->error.empty() || o->error.rfind("reply refused", 0) == 0 ||
               o->error.rfind("protocol error", 0) == 0);
  }
  return 0;
}
