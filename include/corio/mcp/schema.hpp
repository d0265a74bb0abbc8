// Validation of a tool's arguments against its inputSchema (JSON Schema,
// the keywords tool schemas use), before the handler runs.
//
//   auto problems = corio::mcp::validate(schema, args);
//   if (!problems.empty()) ...  // "/count: must be at most 10", ...
//
// Supported: type (a name or a list; "integer" accepts 3.0 as JSON Schema
// does), enum, const, properties, required, additionalProperties (false or
// a schema), items, minItems, maxItems, minLength, maxLength (in code
// points), minimum, maximum, exclusiveMinimum, exclusiveMaximum, allOf,
// anyOf, oneOf, not. Other keywords (pattern, format, $ref, ...) are not
// checked: an unsupported keyword never rejects a value. Boolean schemas
// (true / false) work as the spec says.
#pragma once

#include <string>
#include <vector>

#include <corio/mcp/jsonrpc.hpp>

namespace corio::mcp {

// The problems with value, each "<JSON pointer>: <what>"; empty when valid.
std::vector<std::string> validate(const json& schema, const json& value);

}  // namespace corio::mcp
