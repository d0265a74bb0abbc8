// libFuzzer target: ResponseParser, response_framing and BodyDecoder,
// including the end of the connection (finish_at_eof). Input: one steering
// byte (limits, split point, the request's method), then the response.
#include <cstdint>

#include "fuzz_check.hpp"

using namespace corio_fuzz;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  static constexpr std::string_view kMethods[] = {"GET", "HEAD", "CONNECT", "POST"};
  std::string_view method = kMethods[data[1] % 4];
  std::string_view in(reinterpret_cast<const char*>(data) + 2, size - 2);
  Limits limits = pick_limits(data[0]);
  std::size_t split = split_point(data[0], in.size());

  using Result = HeadResult<ResponseParser, ResponseHead>;
  Result whole = parse_head<ResponseParser, ResponseHead>(in, in.size(), limits);
  Result halves = parse_head<ResponseParser, ResponseHead>(in, split, limits);
  FUZZ_CHECK(whole.error == halves.error);
  FUZZ_CHECK(whole.length == halves.length);
  if (whole.length == 0) return 0;
  FUZZ_CHECK(whole.head.status == halves.head.status);
  FUZZ_CHECK(whole.head.status >= 100 && whole.head.status <= 999);
  FUZZ_CHECK(whole.head.reason == halves.head.reason);
  FUZZ_CHECK(same_fields(whole.head.headers, halves.head.headers));

  BodyFraming framing;
  try {
    framing = response_framing(whole.head, method);
  } catch (const ParseError& e) {
    FUZZ_CHECK(e.status() == 400 || e.status() == 501);
    return 0;
  }
  keep_alive(whole.head.version_minor, whole.head.headers);
  std::string_view body = in.substr(whole.length);
  bool at_eof = (data[1] & 4) != 0;
  check_same_body(decode_body(framing, body, body.size(), limits, at_eof),
                  decode_body(framing, body, split_point(data[0], body.size()), limits, at_eof));
  return 0;
}
