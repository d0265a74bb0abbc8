/// \file
/// Validation of a tool's arguments against its inputSchema, before the
/// handler runs: the JSON Schema validator of the http layer
/// (corio/json/schema.hpp, where the supported keywords are listed),
/// under the name the mcp layer has always given it.
///
///     auto problems = corio::mcp::validate(schema, args);
///     if (!problems.empty()) ...  // "/count: must be at most 10", ...
#pragma once

#include <corio/json/schema.hpp>
#include <corio/mcp/jsonrpc.hpp>

namespace corio::mcp {

using corio::http::validate;

}  // namespace corio::mcp
