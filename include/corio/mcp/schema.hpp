/// \file
/// Validation of a tool's arguments against its inputSchema, before the
/// handler runs: the JSON Schema validator of the http layer
/// (corio/json/schema.hpp, where the supported keywords are listed),
/// under the name the mcp layer has always given it.
///
/// <!-- doc: body (const nlohmann::json& schema, const nlohmann::json& args) -->
///     auto problems = corio::mcp::validate(schema, args);
///     if (!problems.empty()) throw std::invalid_argument(problems[0]);  // "/count: must be at most 10", ...
#pragma once

#include <corio/json/schema.hpp>
#include <corio/mcp/jsonrpc.hpp>

namespace corio::mcp {

using corio::http::validate;

}  // namespace corio::mcp
