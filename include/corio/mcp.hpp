/// \file
/// The mcp layer in one include: JSON-RPC sessions, the MCP server and
/// client, the stdio and Streamable HTTP transports (corio/corio.hpp leaves
/// them out: they bring nlohmann/json.hpp with them).
#pragma once

#include <corio/mcp/client.hpp>
#include <corio/mcp/content.hpp>
#include <corio/mcp/context.hpp>
#include <corio/mcp/jsonrpc.hpp>
#include <corio/mcp/schema.hpp>
#include <corio/mcp/server.hpp>
#include <corio/mcp/session.hpp>
#include <corio/mcp/stdio_client.hpp>
#include <corio/mcp/streamable_http.hpp>
#include <corio/mcp/streamable_http_client.hpp>
#include <corio/mcp/transport.hpp>
#include <corio/mcp/typed_tool.hpp>
#include <corio/mcp/url_elicitation.hpp>
