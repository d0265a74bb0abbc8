// libFuzzer target: RequestParser, request_framing and BodyDecoder.
// Input: one steering byte (limits, split point), then the bytes of a
// connection. The head is parsed whole and in two pieces, which must agree
// exactly; then its body is decoded whole and in two pieces, likewise.
#include <cstdint>

#include "fuzz_check.hpp"

using namespace corio_fuzz;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  Limits limits = pick_limits(data[0]);
  std::size_t split = split_point(data[0], in.size());

  using Result = HeadResult<RequestParser, RequestHead>;
  Result whole = parse_head<RequestParser, RequestHead>(in, in.size(), limits);
  Result halves = parse_head<RequestParser, RequestHead>(in, split, limits);
  FUZZ_CHECK(whole.error == halves.error);
  FUZZ_CHECK(whole.length == halves.length);
  if (whole.length == 0) return 0;
  FUZZ_CHECK(whole.head.method == halves.head.method);
  FUZZ_CHECK(whole.head.target == halves.head.target);
  FUZZ_CHECK(whole.head.version_minor == halves.head.version_minor);
  FUZZ_CHECK(same_fields(whole.head.headers, halves.head.headers));
  FUZZ_CHECK(!whole.head.method.empty() && !whole.head.target.empty());

  BodyFraming framing;
  try {
    framing = request_framing(whole.head);
  } catch (const ParseError& e) {
    FUZZ_CHECK(e.status() == 400 || e.status() == 501);
    return 0;
  }
  FUZZ_CHECK(framing.kind != BodyFraming::Kind::until_close);
  keep_alive(whole.head.version_minor, whole.head.headers);
  std::string_view body = in.substr(whole.length);
  check_same_body(decode_body(framing, body, body.size(), limits, false),
                  decode_body(framing, body, split_point(data[0], body.size()), limits, false));
  return 0;
}
