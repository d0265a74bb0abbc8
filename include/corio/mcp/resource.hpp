/// \file
/// MCP resources as a server declares them: one resource (Resource and its
/// ResourceReader) or a family by URI template (ResourceTemplate and its
/// TemplateReader), and what reading one returns (ResourceContents).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <corio/coro.hpp>
#include <corio/mcp/jsonrpc.hpp>

namespace corio::mcp {

/// A resource, as resources/list shows it.
struct Resource {
  std::string uri;  ///< what resources/read asks for
  std::string name;  ///< its name
  std::string description = {};  ///< what it holds
  std::string mime_type = {};  ///< its MIME type, if known
  std::string title = {};  ///< optional, for display
  json annotations = nullptr;  ///< optional (null: none): audience, priority, lastModified
  json icons = nullptr;        ///< optional (null: none)
};
/// A resource's contents, as resources/read returns them.
struct ResourceContents {
  std::string uri;  ///< the resource they are of
  std::string mime_type = {};  ///< their MIME type, if known
  std::string data = {};     ///< text, or raw bytes when binary
  bool binary = false;  ///< sent base64-encoded as "blob"
};
/// Reads a resource: the contents at uri.
using ResourceReader = std::function<Coro<std::vector<ResourceContents>>(const std::string& uri)>;

/// A family of resources, "news://{date}" (RFC 6570 level 1: {name} matches
/// one path segment's worth of characters, no "/").
struct ResourceTemplate {
  std::string uri_template;  ///< "news://{date}"
  std::string name;  ///< its name
  std::string description = {};  ///< what its resources hold
  std::string mime_type = {};  ///< its resources' MIME type, if known
  std::string title = {};  ///< optional, for display
  json annotations = nullptr;  ///< optional (null: none)
  json icons = nullptr;        ///< optional (null: none)
};
/// Reads a template's resource: the uri asked for, and the template's
/// variables as they matched it.
using TemplateReader = std::function<Coro<std::vector<ResourceContents>>(
    const std::string& uri, const std::map<std::string, std::string>& vars)>;

}  // namespace corio::mcp
