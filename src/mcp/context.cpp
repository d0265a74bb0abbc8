// Context (see context.hpp): what a tool call says on the way, and the
// requests it sends the client.
#include <corio/mcp/context.hpp>

#include <array>

#include <corio/mcp/schema.hpp>

#include "mcp/server_internal.hpp"

namespace corio::mcp {

namespace {

constexpr std::array<const char*, 8> kLevelNames = {"debug",    "info",  "notice", "warning",
                                                    "error",    "critical", "alert", "emergency"};

// The client's answer must be an object: anything else is its mistake.
const json& answer_object(const json& result, const char* method) {
  if (!result.is_object()) {
    throw RpcError(error_code::invalid_params, std::string(method) + ": the client's result is no object");
  }
  return result;
}

}  // namespace

const char* to_string(LogLevel level) noexcept { return kLevelNames[static_cast<std::size_t>(level)]; }

std::optional<LogLevel> log_level_from_string(std::string_view name) noexcept {
  for (std::size_t i = 0; i < kLevelNames.size(); ++i) {
    if (name == kLevelNames[i]) return static_cast<LogLevel>(i);
  }
  return std::nullopt;
}

bool ClientInfo::supports(std::string_view capability) const {
  if (!capabilities.is_object()) return false;
  const auto it = capabilities.find(capability);
  return it != capabilities.end() && it->is_object();
}

json SamplingRequest::to_json() const {
  json j = {{"messages", messages}, {"maxTokens", max_tokens}};
  put_if(j, "systemPrompt", system_prompt);
  put_if(j, "modelPreferences", model_preferences);
  if (temperature) j["temperature"] = *temperature;
  if (!stop_sequences.empty()) j["stopSequences"] = stop_sequences;
  put_if(j, "includeContext", include_context);
  return j;
}

std::string SamplingResult::text() const {
  const auto text_of = [](const json& block) {
    return block.is_object() && block.value("type", "") == "text" ? block.value("text", "") : std::string();
  };
  if (!content.is_array()) return text_of(content);
  std::string out;
  for (const json& block : content) out += text_of(block);
  return out;
}

const ClientInfo& Context::client() const noexcept {
  static const ClientInfo nobody;
  return client_ ? *client_ : nobody;
}

void Context::require(std::string_view capability, const char* what) const {
  if (!client().supports(capability)) {
    throw CapabilityError("the client does not support " + std::string(what) + " (no \"" +
                          std::string(capability) + "\" capability)");
  }
}

Coro<void> Context::report_progress(double progress, std::optional<double> total, std::string message) {
  if (request_.progress_token.is_null()) co_return;
  json params = {{"progressToken", request_.progress_token}, {"progress", progress}};
  if (total) params["total"] = *total;
  put_if(params, "message", message);
  co_await request_.session.notify("notifications/progress", std::move(params), request_.id);
}

Coro<void> Context::log(LogLevel level, json data, std::string logger) {
  if (level < min_level_) co_return;
  json params = {{"level", to_string(level)}, {"data", std::move(data)}};
  put_if(params, "logger", logger);
  co_await request_.session.notify("notifications/message", std::move(params), request_.id);
}

Coro<json> Context::request(std::string_view method, json params) {
  co_return co_await request_.session.request(method, std::move(params), request_.id);
}

Coro<SamplingResult> Context::sample(SamplingRequest req) {
  require("sampling", "sampling");
  const json result = co_await request("sampling/createMessage", req.to_json());
  const json& r = answer_object(result, "sampling/createMessage");
  co_return SamplingResult{r.value("role", "assistant"), r.value("content", json()), r.value("model", ""),
                           r.value("stopReason", "")};
}

Coro<SamplingResult> Context::sample(std::string prompt, int max_tokens) {
  SamplingRequest req;
  req.messages.push_back({{"role", "user"}, {"content", {{"type", "text"}, {"text", std::move(prompt)}}}});
  req.max_tokens = max_tokens;
  co_return co_await sample(std::move(req));
}

Coro<ElicitResult> Context::elicit(std::string message, json requested_schema) {
  require("elicitation", "elicitation");
  json params = {{"message", std::move(message)}, {"requestedSchema", requested_schema}};
  // Only 2025-11-25 knows modes; older clients take the form as it is.
  if (client().protocol_version >= "2025-11-25") params["mode"] = "form";
  const json result = co_await request("elicitation/create", std::move(params));
  const json& r = answer_object(result, "elicitation/create");
  ElicitResult answer{r.value("action", ""), r.value("content", json::object())};
  if (answer.accepted()) {
    const std::vector<std::string> problems = validate(requested_schema, answer.content);
    if (!problems.empty()) {
      throw RpcError(error_code::invalid_params, "elicitation/create: the answer does not match the schema: " +
                                                     problems.front());
    }
  }
  co_return answer;
}

Coro<ElicitResult> Context::elicit_url(std::string message, std::string url, std::string elicitation_id) {
  const json& caps = client().capabilities;
  if (!client().supports("elicitation") || !caps["elicitation"].contains("url")) {
    throw CapabilityError("the client does not support URL elicitation (no \"elicitation.url\" capability)");
  }
  if (url_sent_) url_sent_->add(elicitation_id);
  json params = {{"mode", "url"}, {"message", std::move(message)}, {"url", std::move(url)},
                 {"elicitationId", std::move(elicitation_id)}};
  const json result = co_await request("elicitation/create", std::move(params));
  const json& r = answer_object(result, "elicitation/create");
  co_return ElicitResult{r.value("action", ""), json::object()};
}

Coro<std::vector<Root>> Context::list_roots() {
  require("roots", "roots");
  const json result = co_await request("roots/list", json::object());
  const json& roots = answer_object(result, "roots/list").value("roots", json::array());
  std::vector<Root> out;
  for (const json& r : roots) {
    if (r.is_object() && r.contains("uri") && r["uri"].is_string()) {
      out.push_back({r["uri"].get<std::string>(), r.value("name", "")});
    }
  }
  co_return out;
}

void Context::close_sse_stream() noexcept { request_.session.transport().close_stream(request_.id); }

}  // namespace corio::mcp
