/// \file
/// corio::http::validate: a JSON value checked against a JSON Schema (the
/// keywords request bodies and MCP tool schemas use), shared by the http
/// layer (Request::json(schema), json_as<T>) and the mcp layer
/// (corio::mcp::validate is this function).
///
/// <!-- doc: body (const nlohmann::json& schema, const nlohmann::json& body) -->
///     auto problems = corio::http::validate(schema, body);
///     if (!problems.empty()) throw std::invalid_argument(problems[0]);  // "/count: must be at most 10", ...
///
/// Supported: type (a name or a list; "integer" accepts 3.0 as JSON Schema
/// does), enum, const, properties, required, additionalProperties (false or
/// a schema), items, minItems, maxItems, minLength, maxLength (in code
/// points), pattern (ECMAScript, searched as JSON Schema says: anchor it for
/// a whole match; without back-references, so that matching stays linear),
/// minimum, maximum, exclusiveMinimum, exclusiveMaximum, allOf, anyOf,
/// oneOf, not. Other keywords (format, $ref, ...) are not checked: an
/// unsupported keyword (or a pattern that does not compile) never rejects
/// a value. Boolean schemas (true / false) work as the spec says. A value
/// of the wrong type gets that one problem, not one per keyword.
///
/// error_details() gives the same problems in FastAPI's 422 shape, which is
/// pydantic v2's error list: {"type": "string_too_short", "loc": ["body",
/// "name"], "msg": "String should have at least 3 characters", "input":
/// "ab", "ctx": {"min_length": 3}}, with pydantic's type names and words
/// (missing, int_type, int_from_float, float_type, string_type, bool_type,
/// dict_type, list_type, enum, literal_error, greater_than(_equal),
/// less_than(_equal), string_too_short, string_too_long,
/// string_pattern_mismatch, too_short, too_long, extra_forbidden; the
/// combinators and false schemas are a value_error).
///
/// Problems come in the order of the object's properties: a property's
/// problems (or its "missing") where the property stands in the order of
/// corio's own annotation keyword "x-corio-field-order" (a list of names:
/// the declared order, which json_as<T> and query_as<T> give, json_fields.hpp,
/// as pydantic reports a model's fields), the other properties after it;
/// without the keyword, the required ones missing first, then the others by
/// name (a nlohmann::json object keeps no other order).
///
/// The walk's depth is the schema's (which the program wrote), not the
/// value's, so a peer's value cannot make it recurse deeper than that.
///
/// The json layer's names stay in corio::http, where they were first: users
/// specialize corio::http::Fields<T>, and a specialization cannot be declared
/// through a using-declaration, so a new namespace would break their code.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace corio::http {

/// One problem: where (a JSON pointer into the value, "/" for the value
/// itself) and what ("must be at most 10").
struct SchemaError {
  std::string path;     ///< JSON pointer into the value; "/" for the value itself
  std::string message;  ///< what is wrong ("must be at most 10")
  std::string type;     ///< pydantic's name for it ("less_than_equal"; see error_details)
  std::string to_string() const;  ///< "<path>: <message>"
};

/// The problems with value, in the order the walk met them; empty when valid.
std::vector<SchemaError> schema_errors(const nlohmann::json& schema, const nlohmann::json& value);

/// The same problems, each "<JSON pointer>: <what>".
std::vector<std::string> validate(const nlohmann::json& schema, const nlohmann::json& value);

/// The same problems in FastAPI's 422 shape (the list under "detail"), each
/// "loc" starting with where ("body", "query", "path"); empty when valid.
nlohmann::json error_details(const nlohmann::json& schema, const nlohmann::json& value, std::string_view where);

namespace detail {
/// The keyword that gives an object's properties their order (above).
inline constexpr const char* kFieldOrder = "x-corio-field-order";
}  // namespace detail

}  // namespace corio::http
