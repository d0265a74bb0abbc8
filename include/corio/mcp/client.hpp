/// \file
/// corio::mcp::Client: the client side of an MCP session, for programs that
/// drive an MCP server (the demo, the daily-brief scheduler, tests).
/// stdio_client() (stdio_client.hpp) does the same and owns the process.
///
/// <!-- doc: body (corio::SubprocessOptions pipes) -->
///     std::vector<std::string> no_args;
///     corio::Process proc = co_await corio::create_subprocess_exec("./server", no_args, pipes);
///     corio::mcp::StdioTransport t(proc.out, proc.in);
///     corio::mcp::Client client(t);
///     co_await client.initialize();
///     nlohmann::json tools = co_await client.list_tools();
///     // Named, not braced inside the co_await: g++ 12 rejects that.
///     nlohmann::json args = {{"target_date", "today"}};
///     nlohmann::json r = co_await client.call_tool("get_nba_news", args);
///     co_await client.close();
///
/// The session's reader runs as a task from initialize() on; notifications
/// from the server (progress, log messages) go to the handlers registered on
/// session() before initialize().
///
/// The server's requests to the client: ping is answered always; sampling,
/// elicitation and roots are served by what the application registers
/// before initialize(), and initialize declares exactly those capabilities.
///
/// <!-- doc: body (corio::mcp::Client& client) -->
///     using corio::mcp::json;
///     client.on_elicitation([](const json&, const corio::mcp::RequestContext&) -> corio::Coro<json> {
///       co_return json{{"action", "accept"}, {"content", json::object()}};
///     });
///
/// An accepted elicitation's content gets the requested schema's defaults
/// for the fields it leaves out (SEP-1034), so a handler may return only
/// what the user changed.
///
/// URL-mode elicitations (on_elicitation(..., true)) end out of band: the
/// server says so with notifications/elicitation/complete, which
/// on_elicitation_complete() and wait_elicitation_complete() surface for
/// the ids the client was given (in an elicitation/create, or in the
/// UrlElicitationRequiredError a call_tool() threw), once each; other ids
/// are ignored, as the spec asks.
///
/// Suspends: initialize/list_tools/call_tool until the server answers;
/// close() until the reader has stopped. Resumed by: the loop (the pipes).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <corio/coro.hpp>
#include <corio/mcp/jsonrpc.hpp>
#include <corio/mcp/session.hpp>
#include <corio/mcp/transport.hpp>
#include <corio/mcp/url_elicitation.hpp>
#include <corio/task.hpp>

namespace corio::mcp {

/// An MCP client over any Transport: initialize, tools, and the
/// server's requests served by the handlers registered.
class Client {
 public:
  /// name and version: its clientInfo; transport must outlive it.
  explicit Client(Transport& transport, std::string name = "corio", std::string version = "0.1.0");
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;
  ~Client();

  /// The session underneath: other requests (session().request()), and
  /// handlers for the server's notifications.
  Session& session() noexcept { return session_; }

  /// The server's sampling/createMessage requests: the handler's result is
  /// the CreateMessageResult. Declares the "sampling" capability.
  void on_sampling(Session::RequestHandler handler);
  /// The server's elicitation/create requests: the handler's result is the
  /// ElicitResult ({"action": "accept"|"decline"|"cancel", "content"?}).
  /// Declares "elicitation" with form mode, and URL mode if url_mode.
  void on_elicitation(Session::RequestHandler handler, bool url_mode = false);
  /// Called with the id of each URL elicitation the server says is
  /// complete (notifications/elicitation/complete), once per id.
  void on_elicitation_complete(std::function<void(const std::string& elicitation_id)> handler);
  /// Until the server says the URL elicitation by this id is complete (at
  /// once if it did since the id was given). It waits however long that
  /// takes, a session that ends included: bound it with wait_for().
  Coro<void> wait_elicitation_complete(std::string elicitation_id);
  /// The roots the server's roots/list gets; declares "roots" with
  /// listChanged. update_roots() changes them after initialize and tells
  /// the server (notifications/roots/list_changed).
  void set_roots(json roots);
  /// After initialize: the new roots, and notifications/roots/list_changed.
  Coro<void> update_roots(json roots);
  /// What initialize declares, from the handlers registered so far.
  json capabilities() const;
  /// initialize, then notifications/initialized; the server's initialize
  /// result (protocolVersion, capabilities, serverInfo, ...).
  Coro<json> initialize(std::string protocol_version = "2025-11-25");
  /// Every tool, following nextCursor through all pages.
  Coro<json> list_tools();
  /// The CallToolResult (content, isError, structuredContent?); a protocol
  /// error is an RpcError (-32042 with URL elicitations listed: a
  /// UrlElicitationRequiredError). progress_token, if given, asks for progress.
  Coro<json> call_tool(std::string name, json arguments = json::object(),
                       json progress_token = nullptr);
  /// Stops reading and waits for the reader; the caller then closes the
  /// transport's streams (or the server process exits).
  Coro<void> close();

 private:
  struct UrlElicitations;  // the ids given, those completed, who waits (client.cpp)

  Coro<json> elicit(const json& params, const RequestContext& ctx);

  Session session_;
  std::unique_ptr<UrlElicitations> url_elicitations_;
  Session::RequestHandler elicitation_;
  bool sampling_ = false, url_elicitation_ = false;
  std::optional<json> roots_;
  std::string name_, version_;
  std::optional<Task<void>> reader_;
};

}  // namespace corio::mcp
