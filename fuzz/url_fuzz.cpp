// libFuzzer target: Url::parse and resolve, percent-encoding and query
// strings. Properties: what parses prints as a URL that parses back to the
// same URL; resolving against a base gives such a URL too; decoding undoes
// encoding; a parsed query encodes and parses back to itself. Errors are
// ValueError, nothing else.
#include <cstdint>

#include <corio/errors.hpp>
#include <corio/http/url.hpp>

#include "fuzz_check.hpp"

namespace {

using corio::ValueError;
using namespace corio::http;

bool same(const Url& a, const Url& b) {
  return a.scheme == b.scheme && a.host == b.host && a.port == b.port && a.path == b.path &&
         a.query == b.query;
}

void check_round_trip(const Url& u) {
  FUZZ_CHECK(!u.host.empty() && !u.path.empty() && u.path[0] == '/' && u.port != 0);
  FUZZ_CHECK(same(Url::parse(u.to_string()), u));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  try {
    check_round_trip(Url::parse(in));
  } catch (const ValueError&) {
  }
  static const Url base = Url::parse("http://a/b/c/d;p?q");
  try {
    check_round_trip(base.resolve(in));
  } catch (const ValueError&) {
  }
  FUZZ_CHECK(percent_decode(percent_encode(in)) == in);
  FUZZ_CHECK(percent_decode(percent_encode(in, false), false) == in);
  try {
    QueryParams params = parse_query(in);
    FUZZ_CHECK(parse_query(encode_query(params)) == params);
  } catch (const ValueError&) {
  }
  return 0;
}
