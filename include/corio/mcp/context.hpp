/// \file
/// corio::mcp::Context: what a tool handler can do besides returning, during
/// the call it was made for: report progress, log, and ask the client
/// (sampling, elicitation, roots), each request routed with the call (over
/// Streamable HTTP on the call's own SSE stream).
///
/// <!-- doc: fragment in corio::mcp -->
///     Coro<ToolResult> summarize(const json& args, Context& ctx) {
///       SamplingResult r = co_await ctx.sample("Summarize: " + args["text"].get<std::string>());
///       co_return ToolResult::text(r.text());
///     }
///
/// Asking a client for what it did not declare (capabilities.sampling,
/// .elicitation, .roots) throws CapabilityError before anything is sent; a
/// tool that lets it escape returns it as a tool error (isError), which is
/// what the model should see. The client's refusal is an RpcError.
///
/// Suspends: each co_await until its message is written (and, for a
/// request, until the client answers). Resumed by: the session's reader.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <corio/coro.hpp>
#include <corio/mcp/jsonrpc.hpp>
#include <corio/mcp/session.hpp>
#include <corio/mcp/url_elicitation.hpp>

namespace corio::mcp {

/// RFC 5424's severities, as MCP's logging uses them, least severe first.
enum class LogLevel { debug, info, notice, warning, error, critical, alert, emergency };
/// The level's name as MCP spells it ("warning").
const char* to_string(LogLevel level) noexcept;
/// The level of that name; nullopt when there is none.
std::optional<LogLevel> log_level_from_string(std::string_view name) noexcept;

/// What the client said of itself in initialize.
struct ClientInfo {
  std::string protocol_version;  ///< the revision negotiated in initialize
  json capabilities = json::object();  ///< its capabilities object
  json implementation;  ///< clientInfo: name, version, ...
  /// capabilities[name] is present (an object): "sampling", "roots", ...
  bool supports(std::string_view capability) const;
};

/// The client did not declare the capability a request needs.
class CapabilityError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// sampling/createMessage's params. messages: [{"role", "content": block}]
/// (content.hpp builds the blocks).
struct SamplingRequest {
  json messages = json::array();  ///< the conversation so far
  int max_tokens = 1000;  ///< maxTokens: the most the model may write
  std::string system_prompt;  ///< systemPrompt; empty: none
  json model_preferences;             ///< null: none
  std::optional<double> temperature;  ///< nullopt: the client chooses
  std::vector<std::string> stop_sequences;  ///< stopSequences; empty: none
  std::string include_context;        ///< "none", "thisServer", "allServers"; empty: omitted
  /// The params, as sent.
  json to_json() const;
};
/// The client's answer to sampling/createMessage.
struct SamplingResult {
  std::string role;  ///< "assistant", as a model answers
  json content;  ///< a content block (or, with tools, an array of them)
  std::string model;  ///< the model that answered
  std::string stop_reason;  ///< stopReason ("endTurn", "maxTokens", ...); empty if none
  /// The text of the content's text blocks, concatenated.
  std::string text() const;
};

/// elicitation/create's answer: action "accept" (content holds the values),
/// "decline" or "cancel".
struct ElicitResult {
  std::string action;  ///< "accept", "decline" or "cancel"
  json content = json::object();  ///< the values, when accepted
  /// Whether the user accepted.
  bool accepted() const noexcept { return action == "accept"; }
};

/// One of the client's roots (roots/list).
struct Root {
  std::string uri;   ///< file://...
  std::string name;  ///< optional
};

/// What a tool handler can do during its call besides returning: report
/// progress, log, and ask the client (sampling, elicitation, roots).
class Context {
 public:
  /// min_level: what the client set with logging/setLevel; client: what it
  /// declared (nullptr: nothing, so it can be asked nothing); url_sent:
  /// where elicit_url() notes the ids it sends to this client, which
  /// Server::complete_elicitation() finds the client by (nullptr: nowhere).
  Context(const RequestContext& request, LogLevel min_level, const ClientInfo* client = nullptr,
          ElicitationIds* url_sent = nullptr)
      : request_(request), min_level_(min_level), client_(client), url_sent_(url_sent) {}
  /// The id of the tools/call request being served.
  const json& request_id() const noexcept { return request_.id; }
  /// What the client declared in initialize (nothing, if unknown).
  const ClientInfo& client() const noexcept;

  /// notifications/progress, if the client asked for progress on this call
  /// (params._meta.progressToken); nothing otherwise. progress must grow.
  Coro<void> report_progress(double progress, std::optional<double> total = std::nullopt,
                             std::string message = {});
  /// notifications/message, if level is at or above what the client set with
  /// logging/setLevel (info until it does).
  Coro<void> log(LogLevel level, json data, std::string logger = {});
  /// log() at debug level, with text as the data.
  Coro<void> debug(std::string text) { return log(LogLevel::debug, std::move(text)); }
  /// log() at info level, with text as the data.
  Coro<void> info(std::string text) { return log(LogLevel::info, std::move(text)); }
  /// log() at warning level, with text as the data.
  Coro<void> warning(std::string text) { return log(LogLevel::warning, std::move(text)); }
  /// log() at error level, with text as the data.
  Coro<void> error(std::string text) { return log(LogLevel::error, std::move(text)); }

  /// sampling/createMessage: the client's LLM answers (capability sampling).
  Coro<SamplingResult> sample(SamplingRequest request);
  /// One user text message.
  Coro<SamplingResult> sample(std::string prompt, int max_tokens = 1000);
  /// elicitation/create in form mode: requested_schema is a flat object of
  /// primitive properties (string, number, integer, boolean, enums; with
  /// defaults, SEP-1034). An accepted answer is checked against it
  /// (schema.hpp): content that does not match throws RpcError(-32602).
  Coro<ElicitResult> elicit(std::string message, json requested_schema);
  /// URL mode (capability elicitation.url): the user goes to url; the
  /// answer says whether they agreed to, not what they did there. When the
  /// interaction there is over, Server::complete_elicitation(elicitation_id)
  /// tells the client (notifications/elicitation/complete).
  Coro<ElicitResult> elicit_url(std::string message, std::string url, std::string elicitation_id);
  /// roots/list (capability roots).
  Coro<std::vector<Root>> list_roots();
  /// Any other request to the client, routed with this call.
  Coro<json> request(std::string_view method, json params);

  /// Streamable HTTP: ends this call's SSE stream now, without its answer;
  /// the client reconnects (GET with Last-Event-ID, after the retry the
  /// stream announced) and gets what it missed, the answer included. Lets
  /// a long call not hold a connection. Nothing on stdio.
  void close_sse_stream() noexcept;

 private:
  void require(std::string_view capability, const char* what) const;

  const RequestContext& request_;
  LogLevel min_level_;
  const ClientInfo* client_;
  ElicitationIds* url_sent_;
};

}  // namespace corio::mcp
