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
/// points), minimum, maximum, exclusiveMinimum, exclusiveMaximum, allOf,
/// anyOf, oneOf, not. Other keywords (pattern, format, $ref, ...) are not
/// checked: an unsupported keyword never rejects a value. Boolean schemas
/// (true / false) work as the spec says.
///
/// The walk's depth is the schema's (which the program wrote), not the
/// value's, so a peer's value cannot make it recurse deeper than that.
///
/// The json layer's names stay in corio::http, where they were first: users
/// specialize corio::http::Fields<T>, and a specialization cannot be declared
/// through a using-declaration, so a new namespace would break their code.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace corio::http {

/// One problem: where (a JSON pointer into the value, "/" for the value
/// itself) and what ("must be at most 10").
struct SchemaError {
  std::string path;     ///< JSON pointer into the value; "/" for the value itself
  std::string message;  ///< what is wrong ("must be at most 10")
  std::string to_string() const;  ///< "<path>: <message>"
};

/// The problems with value, in the order the walk met them; empty when valid.
std::vector<SchemaError> schema_errors(const nlohmann::json& schema, const nlohmann::json& value);

/// The same problems, each "<JSON pointer>: <what>".
std::vector<std::string> validate(const nlohmann::json& schema, const nlohmann::json& value);

}  // namespace corio::http
