// The JSON Schema subset that checks request bodies and MCP tool
// arguments: each keyword accepts what it should and rejects what it
// should, with the path of the problem.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <corio/json/schema.hpp>

namespace corio_json_test {
namespace {

using corio::http::validate;
using nlohmann::json;

// The problems, joined, for readable failures ("" when valid).
std::string problems(const json& schema, const json& value) {
  std::string out;
  for (const std::string& p : validate(schema, value)) out += p + "; ";
  return out;
}

TEST(Schema, Types) {
  EXPECT_EQ(problems({{"type", "string"}}, "x"), "");
  EXPECT_EQ(problems({{"type", "string"}}, 3), "/: must be of type string, not number; ");
  EXPECT_EQ(problems({{"type", "integer"}}, 3), "");
  EXPECT_EQ(problems({{"type", "integer"}}, 3.0), "") << "JSON Schema: 3.0 is an integer";
  EXPECT_NE(problems({{"type", "integer"}}, 3.5), "");
  EXPECT_EQ(problems({{"type", "number"}}, 3.5), "");
  EXPECT_NE(problems({{"type", "boolean"}}, "true"), "");
  EXPECT_EQ(problems({{"type", json::array({"string", "null"})}}, nullptr), "");
  EXPECT_NE(problems({{"type", json::array({"string", "null"})}}, 1), "");
  EXPECT_EQ(problems(true, 1), "");
  EXPECT_NE(problems(false, 1), "");
}

TEST(Schema, ObjectsRequiredPropertiesAndAdditional) {
  const json schema = json::parse(R"({
    "type": "object",
    "properties": {"date": {"type": "string"}, "n": {"type": "integer", "minimum": 1, "maximum": 10}},
    "required": ["date"],
    "additionalProperties": false
  })");
  EXPECT_EQ(problems(schema, {{"date", "2026-11-29"}, {"n", 3}}), "");
  EXPECT_EQ(problems(schema, json::object()), "/: missing required property \"date\"; ");
  EXPECT_EQ(problems(schema, {{"date", 5}}), "/date: must be of type string, not number; ");
  EXPECT_EQ(problems(schema, {{"date", "d"}, {"n", 11}}), "/n: must be at most 10; ");
  EXPECT_EQ(problems(schema, {{"date", "d"}, {"n", 0}}), "/n: must be at least 1; ");
  EXPECT_EQ(problems(schema, {{"date", "d"}, {"x", 1}}), "/x: is not an allowed property; ");
  EXPECT_EQ(problems(schema, json::array()), "/: must be of type object, not array; ");
}

TEST(Schema, EnumsConstsAndExclusiveBounds) {
  EXPECT_EQ(problems({{"enum", {"a", "b"}}}, "a"), "");
  EXPECT_EQ(problems({{"enum", {"a", "b"}}}, "c"), "/: must be one of [\"a\",\"b\"]; ");
  EXPECT_EQ(problems({{"const", 4}}, 4), "");
  EXPECT_NE(problems({{"const", 4}}, 5), "");
  EXPECT_EQ(problems({{"exclusiveMinimum", 0}}, 0.5), "");
  EXPECT_NE(problems({{"exclusiveMinimum", 0}}, 0), "");
  EXPECT_NE(problems({{"exclusiveMaximum", 1}}, 1), "");
}

TEST(Schema, StringLengthsCountCodePoints) {
  const json schema = {{"type", "string"}, {"minLength", 2}, {"maxLength", 3}};
  EXPECT_EQ(problems(schema, "ab"), "");
  EXPECT_EQ(problems(schema, "\xc3\xa9\xc3\xa9\xc3\xa9"), "") << "three characters, six bytes";
  EXPECT_EQ(problems(schema, "a"), "/: must have at least 2 characters; ");
  EXPECT_EQ(problems(schema, "abcd"), "/: must have at most 3 characters; ");
}

TEST(Schema, ArraysAndNestedPaths) {
  const json schema = json::parse(R"({
    "type": "array", "minItems": 1, "maxItems": 3,
    "items": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}
  })");
  EXPECT_EQ(problems(schema, json::parse(R"([{"id": 1}, {"id": 2}])")), "");
  EXPECT_EQ(problems(schema, json::array()), "/: must have at least 1 items; ");
  EXPECT_EQ(problems(schema, json::parse(R"([{"id": 1}, {"id": "x"}, {}])")),
            "/1/id: must be of type integer, not string; /2: missing required property \"id\"; ");
}

TEST(Schema, Combinators) {
  const json any = {{"anyOf", {{{"type", "string"}}, {{"type", "integer"}}}}};
  EXPECT_EQ(problems(any, 1), "");
  EXPECT_NE(problems(any, 1.5), "");
  const json one = {{"oneOf", {{{"type", "number"}}, {{"type", "integer"}}}}};
  EXPECT_EQ(problems(one, 1.5), "");
  EXPECT_NE(problems(one, 1), "") << "an integer is a number too: two matches";
  EXPECT_NE(problems({{"not", {{"type", "null"}}}}, nullptr), "");
  EXPECT_EQ(problems({{"allOf", {{{"minimum", 1}}, {{"maximum", 3}}}}}, 2), "");
  EXPECT_NE(problems({{"allOf", {{{"minimum", 1}}, {{"maximum", 3}}}}}, 4), "");
}

TEST(Schema, UnsupportedKeywordsRejectNothing) {
  EXPECT_EQ(problems({{"type", "string"}, {"pattern", "^a$"}, {"format", "date"}}, "zzz"), "");
}

TEST(Schema, ErrorsComeWithTheirPathAsAJsonPointer) {
  const json schema = {{"properties", {{"a/b", {{"type", "string"}}}, {"m~n", {{"minimum", 1}}}}}};
  const std::vector<corio::http::SchemaError> errors =
      corio::http::schema_errors(schema, {{"a/b", 1}, {"m~n", 0}});
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].path, "/a~1b") << "RFC 6901: / in a name is ~1";
  EXPECT_EQ(errors[0].message, "must be of type string, not number");
  EXPECT_EQ(errors[1].path, "/m~0n") << "and ~ is ~0";
  EXPECT_EQ(errors[1].to_string(), "/m~0n: must be at least 1");
  EXPECT_TRUE(corio::http::schema_errors(schema, {{"a/b", "x"}}).empty());
}

}  // namespace
}  // namespace corio_json_test
