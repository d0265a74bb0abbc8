// What the fuzz targets share: a check that aborts (libFuzzer then saves
// the input as a crash), and the comparison of two parses of one message.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include <corio/http/parser.hpp>

#define FUZZ_CHECK(cond)                                                      \
  do {                                                                        \
    if (!(cond)) {                                                            \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                           \
    }                                                                         \
  } while (0)

namespace corio_fuzz {

using namespace corio::http;

// Small limits (chosen by a bit of the input) let short inputs reach
// every limit; the defaults reach the rest.
inline Limits pick_limits(unsigned char selector) {
  Limits l;
  if (selector & 1) {
    l.max_start_line = 64;
    l.max_head_bytes = 256;
    l.max_headers = 8;
    l.max_body = 1024;
    l.max_chunk_line = 32;
  }
  return l;
}

inline bool same_fields(const Headers& a, const Headers& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].value != b[i].value) return false;
  }
  return true;
}

// A head parsed from the input: its length (0 if incomplete) or the
// ParseError status, given the whole input at once or in two calls, the
// first with only the bytes before `split`.
template <class Parser, class Head>
struct HeadResult {
  std::size_t length = 0;
  int error = 0;
  Head head;
};

template <class Parser, class Head>
HeadResult<Parser, Head> parse_head(std::string_view in, std::size_t split, const Limits& limits) {
  HeadResult<Parser, Head> r;
  Parser p(limits);
  try {
    if (split < in.size()) r.length = p.parse(in.substr(0, split), r.head);
    if (r.length == 0) r.length = p.parse(in, r.head);
    FUZZ_CHECK(r.length <= in.size());
  } catch (const ParseError& e) {
    FUZZ_CHECK(e.status() >= 400 && e.status() <= 505);
    r.error = e.status();
  }
  return r;
}

struct BodyResult {
  std::string body;
  std::size_t used = 0;
  bool done = false;
  int error = 0;
  Headers trailers;
};

// Decodes the body in two pieces split at `split`, as a reader would: what
// the first call leaves unused is offered again with the rest.
inline BodyResult decode_body(BodyFraming framing, std::string_view in, std::size_t split,
                              const Limits& limits, bool at_eof) {
  BodyResult r;
  try {
    BodyDecoder dec(framing, limits);
    if (split < in.size()) r.used = dec.decode(in.substr(0, split), r.body);
    FUZZ_CHECK(r.used <= split || split >= in.size());
    r.used += dec.decode(in.substr(r.used), r.body);
    FUZZ_CHECK(r.used <= in.size());
    FUZZ_CHECK(dec.body_bytes() == r.body.size());
    if (at_eof) dec.finish_at_eof();
    r.done = dec.done();
    FUZZ_CHECK(!at_eof || r.done);
    r.trailers = dec.trailers();
  } catch (const ParseError& e) {
    FUZZ_CHECK(e.status() == 400 || e.status() == 413 || e.status() == 431);
    r.error = e.status();
  }
  return r;
}

inline void check_same_body(const BodyResult& a, const BodyResult& b) {
  FUZZ_CHECK(a.error == b.error);
  if (a.error != 0) return;  // each decoded a different part before the error
  FUZZ_CHECK(a.body == b.body);
  FUZZ_CHECK(a.used == b.used);
  FUZZ_CHECK(a.done == b.done);
  FUZZ_CHECK(same_fields(a.trailers, b.trailers));
}

// The first input byte steers: bit 0 the limits, the rest where to split.
inline std::size_t split_point(unsigned char steer, std::size_t size) {
  return static_cast<std::size_t>(steer >> 1) * (size + 1) / 128;
}

}  // namespace corio_fuzz
