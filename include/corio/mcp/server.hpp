// corio::mcp::Server: a Model Context Protocol server, as the Python SDK's
// (mcp.server) reads, on a corio Session.
//
//   corio::mcp::Server server("nba-daily-brief", "1.0.0");
//   server.add_tool("get_nba_news", "NBA headlines for a date",
//                   json::parse(R"({"type": "object",
//                                   "properties": {"target_date": {"type": "string"}},
//                                   "required": ["target_date"]})"),
//                   [](const json& args, Context& ctx) -> Coro<ToolResult> {
//                     co_await ctx.info("fetching");
//                     co_return ToolResult::text(headlines(args["target_date"]));
//                   });
//   int main() { corio::run(server.run_stdio()); }
//
// Protocol revisions: 2025-11-25 (the latest, what the official SDK 1.32
// asks for), 2025-06-18, 2025-03-26 and 2024-11-05. initialize echoes the
// client's revision when it is one of these, else answers with the latest;
// JSON-RPC batches are accepted only for the revisions that had them
// (2025-03-26 and 2024-11-05) and answered with one -32600 otherwise.
// server/discover (the stateless 2026-07-28 revision) is -32601 until
// implemented.
//
// Tools: arguments are checked against the tool's inputSchema (schema.hpp)
// before the handler runs; a mismatch, and an exception from the handler,
// is a result with isError (what the model sees and can correct), not a
// protocol error; an unknown tool is -32602. Each call runs as its own task
// (Session), so slow calls overlap and notifications/cancelled stops one at
// its next co_await. A handler that throws RpcError answers with that
// protocol error instead.
//
// Lists (tools, resources, templates, prompts) are paginated by page_size,
// with an opaque cursor; a cursor we did not hand out is -32602.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <corio/coro.hpp>
#include <corio/mcp/jsonrpc.hpp>
#include <corio/mcp/session.hpp>
#include <corio/mcp/transport.hpp>

namespace corio::mcp {

inline constexpr const char* kLatestProtocolVersion = "2025-11-25";

// RFC 5424's severities, as MCP's logging uses them, least severe first.
enum class LogLevel { debug, info, notice, warning, error, critical, alert, emergency };
const char* to_string(LogLevel level) noexcept;
std::optional<LogLevel> log_level_from_string(std::string_view name) noexcept;

// What a tool handler can do besides returning: report progress and log to
// the client. Valid during the call it was made for.
class Context {
 public:
  // min_level: what the client set with logging/setLevel.
  Context(const RequestContext& request, LogLevel min_level) : request_(request), min_level_(min_level) {}
  const json& request_id() const noexcept { return request_.id; }
  // notifications/progress, if the client asked for progress on this call
  // (params._meta.progressToken); nothing otherwise. progress must grow.
  Coro<void> report_progress(double progress, std::optional<double> total = std::nullopt,
                             std::string message = {});
  // notifications/message, if level is at or above what the client set with
  // logging/setLevel (info until it does).
  Coro<void> log(LogLevel level, json data, std::string logger = {});
  Coro<void> debug(std::string text) { return log(LogLevel::debug, std::move(text)); }
  Coro<void> info(std::string text) { return log(LogLevel::info, std::move(text)); }
  Coro<void> warning(std::string text) { return log(LogLevel::warning, std::move(text)); }
  Coro<void> error(std::string text) { return log(LogLevel::error, std::move(text)); }

 private:
  const RequestContext& request_;
  LogLevel min_level_;
};

struct ToolResult {
  json content = json::array();  // content blocks: {"type": "text", "text": ...}, ...
  json structured_content;       // null: none
  bool is_error = false;

  static ToolResult text(std::string text);
  // A tool failure the model should see (isError), not a protocol error.
  static ToolResult error(std::string message);
  // structuredContent, with its JSON text as content too (the spec's advice
  // for clients that only read content).
  static ToolResult structured(json value);
  json to_json() const;
};

struct Tool {
  std::string name;
  std::string description;
  json input_schema = {{"type", "object"}};
  std::string title;        // optional, for display
  json output_schema;       // optional (null: none)
  json annotations;         // optional (null: none), e.g. {"readOnlyHint": true}
};
using ToolHandler = std::function<Coro<ToolResult>(const json& args, Context& ctx)>;

struct Resource {
  std::string uri;
  std::string name;
  std::string description;
  std::string mime_type;
  std::string title;
};
struct ResourceContents {
  std::string uri;
  std::string mime_type;
  std::string data;     // text, or raw bytes when binary
  bool binary = false;  // sent base64-encoded as "blob"
};
using ResourceReader = std::function<Coro<std::vector<ResourceContents>>(const std::string& uri)>;

// A family of resources, "news://{date}" (RFC 6570 level 1: {name} matches
// one path segment's worth of characters, no "/").
struct ResourceTemplate {
  std::string uri_template;
  std::string name;
  std::string description;
  std::string mime_type;
  std::string title;
};
using TemplateReader = std::function<Coro<std::vector<ResourceContents>>(
    const std::string& uri, const std::map<std::string, std::string>& vars)>;

struct PromptArgument {
  std::string name;
  std::string description;
  bool required = false;
};
struct Prompt {
  std::string name;
  std::string description;
  std::vector<PromptArgument> arguments;
  std::string title;
};
struct PromptMessage {
  std::string role;  // "user" or "assistant"
  std::string text;
};
using PromptHandler = std::function<Coro<std::vector<PromptMessage>>(const json& args)>;

class Server {
 public:
  explicit Server(std::string name, std::string version = "0.1.0", std::string instructions = {});
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  void add_tool(Tool tool, ToolHandler handler);
  // The common case, without spelling a Tool.
  void add_tool(std::string name, std::string description, json input_schema, ToolHandler handler);
  void add_resource(Resource resource, ResourceReader reader);
  void add_resource_template(ResourceTemplate tmpl, TemplateReader reader);
  void add_prompt(Prompt prompt, PromptHandler handler);
  std::size_t page_size = 100;
  // The nesting depth (and size) every client's messages are parsed within,
  // over every transport (http/json.hpp).
  http::JsonLimits json_limits;

  // Serves one client over transport until it closes its side. Clients on
  // several transports at once are served independently (each negotiates
  // its own revision and log level).
  Coro<void> run(Transport& transport);
  // Serves over this process's stdin and stdout: the whole of an MCP
  // server's main. Logs go to stderr; stdout carries only the protocol.
  Coro<void> run_stdio();

  // One of the revisions this server speaks (the HTTP transport checks the
  // MCP-Protocol-Version header with it).
  static bool supports_protocol_version(std::string_view version) noexcept;

 private:
  // What one client negotiated.
  struct Peer {
    std::string protocol_version;
    LogLevel min_log_level = LogLevel::info;
    bool initialized = false;  // an initialize was accepted (its answer may still be going out)
  };
  struct ToolEntry {
    Tool tool;
    ToolHandler handler;
  };
  struct ResourceEntry {
    Resource resource;
    ResourceReader reader;
  };
  struct TemplateEntry {
    ResourceTemplate tmpl;
    TemplateReader reader;
  };
  struct PromptEntry {
    Prompt prompt;
    PromptHandler handler;
  };
  void install(Session& session, Peer& peer);
  // The lifecycle (MCP 2025-11-25), as each request is read: -32600 for a
  // request other than ping before initialize or a second initialize,
  // -32602 for params that are no object or an initialize without its fields.
  static void admit(const Message& m, Peer& peer);
  json initialize(const json& params, Session& session, Peer& peer);
  Coro<json> call_tool(const json& params, const RequestContext& rc, LogLevel min_level);
  Coro<json> read_resource(const json& params);
  Coro<json> get_prompt(const json& params);
  void install_resources_and_prompts(Session& session);

  std::string name_, version_, instructions_;
  std::vector<ToolEntry> tools_;
  std::vector<ResourceEntry> resources_;
  std::vector<TemplateEntry> templates_;
  std::vector<PromptEntry> prompts_;
};

}  // namespace corio::mcp
