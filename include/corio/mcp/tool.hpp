/// \file
/// An MCP tool as a server declares it (Tool), the handler that runs a call
/// (ToolHandler) and what it returns (ToolResult). Server::add_tool takes them
/// (server.hpp); typed tools derive the schema from a struct (typed_tool.hpp).
#pragma once

#include <functional>
#include <string>

#include <corio/coro.hpp>
#include <corio/mcp/context.hpp>
#include <corio/mcp/jsonrpc.hpp>

namespace corio::mcp {

/// What a tool returns: content blocks, structuredContent, isError.
struct ToolResult {
  json content = json::array();  ///< content blocks: {"type": "text", "text": ...}, ...
  json structured_content;       ///< null: none
  bool is_error = false;  ///< isError: a tool failure the model sees

  /// One text block.
  static ToolResult text(std::string text);
  /// A tool failure the model should see (isError), not a protocol error.
  static ToolResult error(std::string message);
  /// structuredContent, with its JSON text as content too (the spec's advice
  /// for clients that only read content).
  static ToolResult structured(json value);
  /// The CallToolResult, as sent.
  json to_json() const;
};

/// A tool, as tools/list shows it.
struct Tool {
  std::string name;  ///< unique among the server's tools
  std::string description = {};  ///< what the model reads to choose it
  /// The arguments' JSON Schema, checked before the handler runs.
  json input_schema = {{"type", "object"}};
  std::string title = {};        ///< optional, for display
  json output_schema = nullptr;       ///< optional (null: none)
  json annotations = nullptr;         ///< optional (null: none), e.g. {"readOnlyHint": true}
  json icons = nullptr;               ///< optional (null: none): [{"src": url, "mimeType", "sizes"}]
  json meta = nullptr;                ///< optional (null: none): _meta
};
/// Runs a tool call: its arguments (valid) and the call's Context.
using ToolHandler = std::function<Coro<ToolResult>(const json& args, Context& ctx)>;

}  // namespace corio::mcp
