/// \file
/// MCP content blocks: what a tool result, a prompt message or a sampling
/// message carries (text, image, audio, an embedded resource, a link to a
/// resource), built as the 2025-11-25 schema spells them.
///
/// <!-- doc: body (std::string png_bytes) -->
///     namespace content = corio::mcp::content;
///     corio::mcp::ToolResult r;
///     r.content.push_back(content::text("the chart:"));
///     r.content.push_back(content::image(png_bytes, "image/png"));
///
/// Binary data is given raw and sent base64-encoded, as the schema asks.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <corio/mcp/jsonrpc.hpp>

namespace corio::mcp {

struct Resource;
struct ResourceContents;

namespace content {

/// A text block.
json text(std::string text);
/// An image block: the raw bytes (sent base64-encoded) and their MIME type.
json image(std::string_view bytes, std::string mime_type);
/// An audio block: the raw bytes (sent base64-encoded) and their MIME type.
json audio(std::string_view bytes, std::string mime_type);
/// An embedded resource ({"type": "resource", "resource": {...}}).
json resource(const ResourceContents& contents);
/// A link to a resource the client may read ({"type": "resource_link"}).
json resource_link(const Resource& resource);

}  // namespace content

/// RFC 4648 base64 (with padding): MCP's encoding of every binary field.
std::string base64_encode(std::string_view bytes);
/// nullopt when text is not base64 (a bad character, a bad length or padding).
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace corio::mcp
