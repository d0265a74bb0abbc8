// parse_json (corio/json/parse.hpp): JSON from a peer within a depth and a
// size limit. 100,000 levels overflowed the stack in a copy before the limit;
// now each is an error and the process lives; a syntax error says where it
// is. Its users in the http layer
// are tested in tests/http/json_limits_test.cpp.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "json/json_support.hpp"
#include <corio/json/parse.hpp>

namespace corio_json_test {
namespace {

using corio::http::JsonError;
using corio::http::JsonLimits;
using corio::http::parse_json;

JsonError::Kind kind_of(std::string_view text, const JsonLimits& limits = {}) {
  try {
    parse_json(text, limits);
  } catch (const JsonError& e) {
    return e.kind();
  }
  ADD_FAILURE() << "accepted: " << text.substr(0, 40);
  return JsonError::Kind::syntax;
}

TEST(Json, DeepNestingIsRefusedWithoutRecursion) {
  EXPECT_EQ(kind_of(nested_arrays(100'000)), JsonError::Kind::too_deep);
  EXPECT_EQ(kind_of(nested_objects(100'000)), JsonError::Kind::too_deep);
  EXPECT_EQ(kind_of("[" + nested_objects(100'000) + "]"), JsonError::Kind::too_deep);
}

TEST(Json, TheDepthLimitIsExactAndConfigurable) {
  const JsonLimits defaults;
  EXPECT_EQ(parse_json(nested_arrays(defaults.max_depth)).size(), 1u);
  EXPECT_EQ(kind_of(nested_arrays(defaults.max_depth + 1)), JsonError::Kind::too_deep);
  EXPECT_NO_THROW(parse_json(nested_objects(3), {.max_depth = 3}));
  EXPECT_EQ(kind_of(nested_objects(4), {.max_depth = 3}), JsonError::Kind::too_deep);
  // Brackets inside strings are no nesting, nor are escaped quotes ends of one.
  const std::string in_string = "[\"" + std::string(1000, '[') + "\\\"{{{\"]";
  EXPECT_EQ(parse_json(in_string, {.max_depth = 2})[0].get<std::string>().size(), 1004u);
}

TEST(Json, SizeNulAndGarbageAreErrorsInOurOwnWords) {
  EXPECT_EQ(kind_of(std::string(100, ' ') + "{}", {.max_size = 50}), JsonError::Kind::too_large);
  EXPECT_EQ(kind_of(std::string("{}\0", 3)), JsonError::Kind::syntax);
  EXPECT_EQ(kind_of(std::string("{\"a\":1}\0garbage", 15)), JsonError::Kind::syntax);
  EXPECT_EQ(kind_of("{} x"), JsonError::Kind::syntax);
  EXPECT_EQ(kind_of("1e9999"), JsonError::Kind::syntax);
  try {
    parse_json("{\"a\": tru}");
    ADD_FAILURE() << "accepted";
  } catch (const JsonError& e) {
    EXPECT_EQ(std::string(e.what()).find("json.exception"), std::string::npos) << e.what();
  }
}

// Where a syntax error was found, as Python's JSONDecodeError.pos says for
// the same text (FastAPI's json_invalid loc): the byte the parser stopped at.
TEST(Json, ASyntaxErrorSaysItsOffset) {
  const std::pair<const char*, std::size_t> cases[] = {
      {"", 0}, {" ", 1}, {"{", 1}, {"{\"a\": }", 6}, {"{\"a\":1,}", 7}, {"[1,2] x", 6}, {"[1 2]", 3}};
  for (const auto& [text, python_pos] : cases) {
    try {
      parse_json(text);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const JsonError& e) {
      EXPECT_EQ(e.offset(), python_pos) << text;
    }
  }
  try {
    parse_json(std::string("[1,\0]", 5));
  } catch (const JsonError& e) {
    EXPECT_EQ(e.offset(), 3u) << "a NUL's own byte";
  }
}

}  // namespace
}  // namespace corio_json_test
