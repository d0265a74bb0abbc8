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

// The problems' order: the declared one where the schema gives it (what
// json_as<T> validates with), each missing field where it stands and the
// value's other properties after; without it, missing first, then by name.
TEST(Schema, ProblemsFollowTheDeclaredFieldOrder) {
  json schema = json::parse(R"({"type": "object",
      "properties": {"z": {"type": "integer"}, "m": {"type": "integer"}, "a": {"type": "integer"}},
      "required": ["z", "m", "a"], "additionalProperties": false})");
  const json value = json::parse(R"({"a": "x", "b": 1, "z": "x"})");
  EXPECT_EQ(problems(schema, value),
            "/: missing required property \"m\"; /a: must be of type integer, not string; "
            "/b: is not an allowed property; /z: must be of type integer, not string; ");
  schema[corio::http::detail::kFieldOrder] = {"z", "m", "a"};
  EXPECT_EQ(problems(schema, value),
            "/z: must be of type integer, not string; /: missing required property \"m\"; "
            "/a: must be of type integer, not string; /b: is not an allowed property; ");
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
  EXPECT_EQ(problems({{"type", "string"}, {"format", "date"}, {"$ref", "#/x"}}, "zzz"), "");
  EXPECT_EQ(problems({{"pattern", "(unclosed"}}, "zzz"), "") << "nor does a pattern that does not compile";
}

TEST(Schema, PatternsAreSearchedAsEcmaScript) {
  EXPECT_EQ(problems({{"pattern", "^[a-z]+$"}}, "abc"), "");
  EXPECT_EQ(problems({{"pattern", "^[a-z]+$"}}, "abC"), "/: must match the pattern \"^[a-z]+$\"; ");
  EXPECT_EQ(problems({{"pattern", "b"}}, "abc"), "") << "unanchored: a match anywhere (JSON Schema, pydantic)";
  EXPECT_EQ(problems({{"pattern", "^\\d{3}-\\d{4}$"}}, "555-1234"), "");
  EXPECT_EQ(problems({{"pattern", "^a$"}}, 7), "") << "a pattern bounds strings only";
}

// The default std::regex matcher recurses once per character and overflows
// the stack near a megabyte; backtracking makes (a|aa)+ exponential.
TEST(Schema, PatternsStayLinearOnLongAndHostileInput) {
  EXPECT_EQ(problems({{"pattern", "^[a-z]+$"}}, std::string(4'000'000, 'a')), "");
  EXPECT_NE(problems({{"pattern", "^(a|aa)+$"}}, std::string(5'000, 'a') + "b"), "");
}

// Each entry as pydantic 2.13 reports it for the same constraints
// (Field(min_length=2, pattern=...), Field(ge=0, le=10), Field(gt=0),
// an Enum, Field(min_length=1) on a list, extra="forbid"), its url left out
// as FastAPI leaves it out.
TEST(Schema, ErrorDetailsAreFastApisShapeAndPydanticsWords) {
  const json schema = json::parse(R"({"type": "object", "additionalProperties": false,
      "properties": {"name": {"type": "string", "minLength": 2, "maxLength": 5, "pattern": "^[a-z]+$"},
                     "stock": {"type": "integer", "minimum": 0, "maximum": 10},
                     "price": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 100},
                     "color": {"type": "string", "enum": ["red", "green", "blue"]},
                     "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2},
                     "size": {"type": "integer"}},
      "required": ["name", "stock", "price"]})");
  const auto details = [&](const char* value) { return corio::http::error_details(schema, json::parse(value), "body"); };
  EXPECT_EQ(details(R"({"name": "ab", "stock": 3, "price": 1})"), json::array());
  EXPECT_EQ(details("{}"), json::parse(R"([
      {"type": "missing", "loc": ["body", "name"], "msg": "Field required", "input": {}},
      {"type": "missing", "loc": ["body", "stock"], "msg": "Field required", "input": {}},
      {"type": "missing", "loc": ["body", "price"], "msg": "Field required", "input": {}}])"));
  EXPECT_EQ(details(R"({"name": "a", "stock": -1, "price": 0, "color": "pink", "tags": [], "extra": 1})"), json::parse(R"([
      {"type": "enum", "loc": ["body", "color"], "msg": "Input should be 'red', 'green' or 'blue'", "input": "pink",
       "ctx": {"expected": "'red', 'green' or 'blue'"}},
      {"type": "extra_forbidden", "loc": ["body", "extra"], "msg": "Extra inputs are not permitted", "input": 1},
      {"type": "string_too_short", "loc": ["body", "name"], "msg": "String should have at least 2 characters",
       "input": "a", "ctx": {"min_length": 2}},
      {"type": "greater_than", "loc": ["body", "price"], "msg": "Input should be greater than 0", "input": 0,
       "ctx": {"gt": 0.0}},
      {"type": "greater_than_equal", "loc": ["body", "stock"], "msg": "Input should be greater than or equal to 0",
       "input": -1, "ctx": {"ge": 0}},
      {"type": "too_short", "loc": ["body", "tags"], "msg": "List should have at least 1 item after validation, not 0",
       "input": [], "ctx": {"field_type": "List", "min_length": 1, "actual_length": 0}}])"));
  EXPECT_EQ(details(R"({"name": "abcdefg", "stock": 11, "price": 100, "tags": ["a", "b", "c"], "size": 1.5})"),
            json::parse(R"([
      {"type": "string_too_long", "loc": ["body", "name"], "msg": "String should have at most 5 characters",
       "input": "abcdefg", "ctx": {"max_length": 5}},
      {"type": "less_than", "loc": ["body", "price"], "msg": "Input should be less than 100", "input": 100,
       "ctx": {"lt": 100.0}},
      {"type": "int_from_float", "loc": ["body", "size"],
       "msg": "Input should be a valid integer, got a number with a fractional part", "input": 1.5},
      {"type": "less_than_equal", "loc": ["body", "stock"], "msg": "Input should be less than or equal to 10",
       "input": 11, "ctx": {"le": 10}},
      {"type": "too_long", "loc": ["body", "tags"], "msg": "List should have at most 2 items after validation, not 3",
       "input": ["a", "b", "c"], "ctx": {"field_type": "List", "max_length": 2, "actual_length": 3}}])"));
  EXPECT_EQ(details(R"({"name": 5, "stock": "3", "price": true, "tags": "a"})"), json::parse(R"([
      {"type": "string_type", "loc": ["body", "name"], "msg": "Input should be a valid string", "input": 5},
      {"type": "float_type", "loc": ["body", "price"], "msg": "Input should be a valid number", "input": true},
      {"type": "int_type", "loc": ["body", "stock"], "msg": "Input should be a valid integer", "input": "3"},
      {"type": "list_type", "loc": ["body", "tags"], "msg": "Input should be a valid list", "input": "a"}])"))
      << "strict types (JSON Schema's), one problem for a value of the wrong type";
  EXPECT_EQ(details(R"({"name": "aB", "stock": 1, "price": 1, "tags": ["x", 2]})"), json::parse(R"([
      {"type": "string_pattern_mismatch", "loc": ["body", "name"], "msg": "String should match pattern '^[a-z]+$'",
       "input": "aB", "ctx": {"pattern": "^[a-z]+$"}},
      {"type": "string_type", "loc": ["body", "tags", 1], "msg": "Input should be a valid string", "input": 2}])"))
      << "an array's index is a number in loc";
  EXPECT_EQ(details("[1]")[0], json::parse(R"({"type": "dict_type", "loc": ["body"],
      "msg": "Input should be a valid dictionary", "input": [1]})"));
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
