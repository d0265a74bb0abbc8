// libFuzzer target: MultipartParser. The first byte picks small limits
// (bit 0) and a split point; the rest is the body, under the boundary
// "b0undary". Properties: the body parsed at once and in two pieces (fed
// as MultipartReader feeds it, unconsumed bytes kept) gives the same parts
// (headers and bodies) or the same error status; errors are MultipartError
// with 400 or 413 only; a part's body never exceeds the part limit.
#include <cstdint>
#include <string>
#include <vector>

#include <corio/http/multipart_parser.hpp>

#include "fuzz_check.hpp"

namespace {

using namespace corio::http;

struct Outcome {
  std::vector<std::pair<std::string, std::string>> parts;  // flattened headers, body
  int status = 0;  // 0: parsed to its end (done, or need_more at EOF turned into 400)
  bool operator==(const Outcome&) const = default;
};

MultipartLimits limits_for(unsigned char selector) {
  MultipartLimits l;
  if (selector & 1) {
    l.max_parts = 3;
    l.max_part_head = 32;
    l.max_part_size = 64;
    l.max_total = 512;
  }
  return l;
}

std::string flatten(const Headers& h) {
  std::string out;
  for (const Header& f : h) out += f.name + ":" + f.value + "\n";
  return out;
}

Outcome run(std::string_view body, std::size_t split, const MultipartLimits& limits) {
  Outcome out;
  MultipartParser p("b0undary", limits);
  std::string buf(body.substr(0, split));
  bool fed_all = split >= body.size();
  try {
    for (;;) {
      const MultipartParser::Step s = p.parse(buf);
      FUZZ_CHECK(s.used <= buf.size());
      if (s.event == MultipartParser::Event::part) out.parts.emplace_back(flatten(p.headers()), "");
      if (s.event == MultipartParser::Event::data) {
        FUZZ_CHECK(!out.parts.empty() && !s.data.empty());
        out.parts.back().second += s.data;
        if (limits.max_part_size) FUZZ_CHECK(out.parts.back().second.size() <= *limits.max_part_size);
      }
      buf.erase(0, s.used);
      if (s.event == MultipartParser::Event::done) return out;
      if (s.event != MultipartParser::Event::need_more) continue;
      if (fed_all) {
        p.finish();
        FUZZ_CHECK(false);  // finish() throws unless done
      }
      buf += body.substr(split);
      fed_all = true;
    }
  } catch (const MultipartError& e) {
    FUZZ_CHECK(e.status() == 400 || e.status() == 413);
    out.status = e.status();
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  const MultipartLimits limits = limits_for(data[0]);
  const Outcome whole = run(body, body.size(), limits);
  const std::size_t split = body.empty() ? 0 : (data[0] >> 1) % body.size();
  const Outcome pieces = run(body, split, limits);
  // A limit may trip at a different point of the input, but never differently.
  FUZZ_CHECK(whole.status == pieces.status);
  if (whole.status == 0) FUZZ_CHECK(whole == pieces);
  return 0;
}
