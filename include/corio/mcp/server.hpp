/// \file
/// corio::mcp::Server: a Model Context Protocol server, as the Python SDK's
/// (mcp.server) reads, on a corio Session.
///
/// <!-- doc: program build-only -->
///     using namespace corio::mcp;
///
///     int main() {
///       Server server("nba-daily-brief", "1.0.0");
///       server.add_tool("get_nba_news", "NBA headlines for a date",
///                       json::parse(R"({"type": "object",
///                                       "properties": {"target_date": {"type": "string"}},
///                                       "required": ["target_date"]})"),
///                       [](const json& args, Context& ctx) -> corio::Coro<ToolResult> {
///                         co_await ctx.info("fetching");
///                         co_return ToolResult::text(headlines(args["target_date"]));
///                       });
///       return corio::run_main(server.run_stdio());
///     }
///
/// Protocol revisions: 2025-11-25 (the latest, what the official SDK 1.32
/// asks for), 2025-06-18, 2025-03-26 and 2024-11-05. initialize echoes the
/// client's revision when it is one of these, else answers with the latest;
/// JSON-RPC batches are accepted only for the revisions that had them
/// (2025-03-26 and 2024-11-05) and answered with one -32600 otherwise.
/// server/discover (the stateless 2026-07-28 revision) is -32601 until
/// implemented.
///
/// Tools: arguments are checked against the tool's inputSchema (schema.hpp)
/// before the handler runs; a mismatch, and an exception from the handler,
/// is a result with isError (what the model sees and can correct), not a
/// protocol error; an unknown tool is -32602. Each call runs as its own task
/// (Session), so slow calls overlap and notifications/cancelled stops one at
/// its next co_await. A handler that throws RpcError answers with that
/// protocol error instead.
///
/// A tool with an outputSchema must return structuredContent that matches
/// it; one that does not is a tool error naming the mismatch.
///
/// Lists (tools, resources, templates, prompts) are paginated by page_size,
/// with an opaque cursor; a cursor we did not hand out is -32602. They may
/// change while clients are connected (add_*, remove_*): every initialized
/// client then gets `notifications/<list>/list_changed`. Clients subscribe to
/// resources (resources/subscribe) and notify_resource_updated(uri) tells
/// the subscribers. completion/complete is answered by on_completion's
/// handler, for prompt arguments and template variables that exist.
/// add_method() serves any other request, add_notification() any other
/// notification, with the same lifecycle rules (after initialize).
///
/// URL-mode elicitation: a tool sends the user somewhere (Context::elicit_url)
/// or answers its call with UrlElicitationRequiredError (-32042, the sites
/// the user must visit first); complete_elicitation(id) then tells the
/// client the elicitation by that id went to (and only it) that the
/// interaction is over, with notifications/elicitation/complete.
///
/// Notifications the server sends on its own (list changes, resource
/// updates, completed elicitations) belong to no request: over Streamable
/// HTTP they go to the client's GET stream, and are dropped for a client
/// without one.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <optional>
#include <string>
#include <vector>

#include <corio/coro.hpp>
#include <corio/mcp/completion.hpp>
#include <corio/mcp/context.hpp>
#include <corio/mcp/jsonrpc.hpp>
#include <corio/mcp/prompt.hpp>
#include <corio/mcp/resource.hpp>
#include <corio/mcp/session.hpp>
#include <corio/mcp/tool.hpp>
#include <corio/mcp/transport.hpp>
#include <corio/task.hpp>

namespace corio::mcp {

/// The newest MCP revision spoken, what initialize answers a revision it
/// does not know with.
inline constexpr const char* kLatestProtocolVersion = "2025-11-25";

/// An MCP server: tools, resources, prompts and the rest, served to each
/// client over a Transport (run(), run_stdio(); Streamable HTTP:
/// streamable_http.hpp).
class Server {
 public:
  /// name and version: its serverInfo; instructions: initialize's (empty:
  /// none).
  explicit Server(std::string name, std::string version = "0.1.0", std::string instructions = {});
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// Adds a tool; clients already initialized hear of it (list_changed).
  void add_tool(Tool tool, ToolHandler handler);
  /// The common case, without spelling a Tool.
  void add_tool(std::string name, std::string description, json input_schema, ToolHandler handler);
  /// Adds a resource, read by reader.
  void add_resource(Resource resource, ResourceReader reader);
  /// Adds a resource template: a URI it matches is read by reader.
  void add_resource_template(ResourceTemplate tmpl, TemplateReader reader);
  /// Adds a prompt, made by handler.
  void add_prompt(Prompt prompt, PromptHandler handler);
  /// Each false if there was none by that name (or uri, or uriTemplate).
  bool remove_tool(std::string_view name);
  /// Removes the resource with this uri.
  bool remove_resource(std::string_view uri);
  /// Removes the template with this uriTemplate.
  bool remove_resource_template(std::string_view uri_template);
  /// Removes the prompt by this name.
  bool remove_prompt(std::string_view name);
  /// notifications/resources/updated to the clients subscribed to uri.
  void notify_resource_updated(std::string_view uri);
  /// notifications/elicitation/complete to the client a URL elicitation by
  /// this id went to (elicit_url(), or a UrlElicitationRequiredError a
  /// call answered with). False if none did (or it was completed already).
  bool complete_elicitation(std::string_view elicitation_id);
  /// Answers completion/complete with handler (and declares completions).
  void on_completion(CompletionHandler handler);
  /// Called when a client says its roots changed (then ask with list_roots).
  void on_roots_list_changed(std::function<void()> handler);
  /// Another request method (or notification) on every client's session.
  void add_method(std::string method, Session::RequestHandler handler);
  /// Handles another notification from every client.
  void add_notification(std::string method, Session::NotificationHandler handler);
  std::size_t page_size = 100;  ///< the most items a list answer holds (nextCursor for the rest)
  /// Each client's requests running at once; at the bound its session reads
  /// no more messages until one ends (Session::max_in_flight).
  std::size_t max_in_flight = 256;
  /// The nesting depth (and size) every client's messages are parsed within,
  /// over every transport (http/json.hpp).
  http::JsonLimits json_limits;

  /// Serves one client over transport until it closes its side. Clients on
  /// several transports at once are served independently (each negotiates
  /// its own revision and log level).
  Coro<void> run(Transport& transport);
  /// One client served message by message, by whoever receives them
  /// (Streamable HTTP: each POST), with no task of its own.
  class Connection;
  /// Serves over this process's stdin and stdout: the whole of an MCP
  /// server's main. Logs go to stderr; stdout carries only the protocol.
  Coro<void> run_stdio();

  /// One of the revisions this server speaks (the HTTP transport checks the
  /// MCP-Protocol-Version header with it).
  static bool supports_protocol_version(std::string_view version) noexcept;
  /// What initialize answers a client asking for version.
  static std::string negotiate_protocol_version(std::string_view version);

 private:
  // What one client negotiated, and what the server has to tell it.
  struct Peer {
    // Shared by the clients that said the same of themselves (interned:
    // thousands of sessions of one client program hold one copy).
    std::shared_ptr<const ClientInfo> client;
    LogLevel min_log_level = LogLevel::info;
    bool initialized = false;  // an initialize was accepted (its answer may still be going out)
    std::set<std::string, std::less<>> subscriptions;  // resource uris
    ElicitationIds url_elicitations;                    // sent to it, not yet completed
    std::vector<json> outbox;  // notifications of the server's own, to send
    Session* session = nullptr;  // the session it speaks on
    // Where it is in the server's peers_ (a leave is a swap with the last,
    // not a search); kGone once it left.
    static constexpr std::size_t kGone = static_cast<std::size_t>(-1);
    std::size_t index = kGone;
    // Sends the outbox; started when it fills, ends when it is sent (an
    // idle client has no task waiting for notifications).
    std::optional<Task<void>> notifier;
  };
  // Entries are shared: a call holds its own while a remove_*() may drop
  // the list's (and an add_*() may move the vector).
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
  // A method every client's session serves: one table for all sessions
  // (a handler per method and session cost an idle session 1.5 KB).
  using Builtin = Coro<json> (*)(Server& server, Peer& peer, const json& params, const RequestContext& rc);
  void install(Session& session, Peer& peer);
  // The handler of a method: the application's (add_method), else MCP's.
  Coro<json> route(const std::string& method, const json& params, const RequestContext& rc, Peer& peer);
  void notified(const std::string& method, const json& params, Session& session);
  // MCP's methods: the lifecycle and tools; resources, prompts and
  // completion (nullptr: not a method of this server).
  static Builtin builtin(std::string_view method);
  Builtin content_builtin(std::string_view method) const;
  // The lifecycle (MCP 2025-11-25), as each request is read: -32600 for a
  // request other than ping before initialize or a second initialize,
  // -32602 for params that are no object or an initialize without its fields.
  static void admit(const Message& m, Peer& peer);
  json initialize(const json& params, Session& session, Peer& peer);
  Coro<json> call_tool(const json& params, const RequestContext& rc, Peer& peer);
  Coro<json> read_resource(const json& params);
  Coro<json> get_prompt(const json& params);
  Coro<json> complete(const json& params);
  void install_extensions(Session& session);
  json capabilities() const;
  // The one ClientInfo equal to info that clients hold, or info made shared.
  std::shared_ptr<const ClientInfo> intern(ClientInfo info);
  // Queues a notification for every initialized client (filter: only those).
  void broadcast(const std::string& method, const json& params,
                 const std::function<bool(const Peer&)>& filter = {});
  static Coro<void> send_outbox(Peer& peer);
  // Queues a notification for peer, and starts its notifier if none is running.
  static void post(Peer& peer, json notification);
  // notifications/<list>/list_changed to every client, if changed; changed.
  bool list_changed(const char* list, bool changed = true);

  std::string name_, version_, instructions_;
  std::vector<std::shared_ptr<const ToolEntry>> tools_;
  std::vector<std::shared_ptr<const ResourceEntry>> resources_;
  std::vector<std::shared_ptr<const TemplateEntry>> templates_;
  std::vector<std::shared_ptr<const PromptEntry>> prompts_;
  CompletionHandler completion_;
  std::function<void()> roots_changed_;
  std::map<std::string, Session::RequestHandler, std::less<>> methods_;
  std::map<std::string, Session::NotificationHandler, std::less<>> notifications_;
  // The clients being served (run()); shared with each run(), whose task
  // may end after the Server is gone (a transport closed under it).
  std::shared_ptr<std::vector<Peer*>> peers_ = std::make_shared<std::vector<Peer*>>();
  // What intern() handed out, by its JSON; expired entries go when the
  // table has doubled since they were last swept.
  std::map<std::string, std::weak_ptr<const ClientInfo>, std::less<>> client_infos_;
  std::size_t client_infos_swept_ = 0;
};

/// One client of a Server, served message by message: its owner hands in
/// what the client sends (handle()) and the answers go out through the
/// transport, whose receive() is never called. What run() does, less the
/// reading: a client served this way holds no task and no coroutine frame
/// while idle (Streamable HTTP keeps one per session).
///
/// Suspends: handle() while a request waits for one of max_in_flight
/// slots; close() until the client's requests have ended.
class Server::Connection {
 public:
  /// server and transport must outlive it.
  Connection(Server& server, Transport& transport);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  /// Must not run while requests do (close() first, unless idle()).
  ~Connection();

  /// One message from the client (Session::handle()).
  Coro<void> handle(Received message) { return session_.handle(std::move(message)); }
  /// The client is gone: the server forgets it, its requests are
  /// cancelled, and this returns once they and the notifications being
  /// sent to it have ended.
  Coro<void> close();
  /// Nothing of the client's runs: no request, no notification being sent.
  bool idle() const noexcept;
  /// The session it is served on.
  Session& session() noexcept { return session_; }

 private:
  void leave() noexcept;  // the server forgets the client
  Coro<void> stop_notifier();

  std::shared_ptr<std::vector<Peer*>> peers_;
  Peer peer_;
  Session session_;
};

}  // namespace corio::mcp
