// Server (see server.hpp): what tools return and what a call can say on the
// way (Context), resources with their templates, prompts, log levels.
#include <corio/mcp/server.hpp>

#include <algorithm>
#include <array>

#include "mcp/server_internal.hpp"

namespace corio::mcp {

namespace {

constexpr std::array<const char*, 8> kLevelNames = {"debug",    "info",  "notice", "warning",
                                                    "error",    "critical", "alert", "emergency"};

std::string base64(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
    std::uint32_t v = 0;
    for (std::size_t k = 0; k < 3; ++k) {
      v = v << 8 | (k < n ? static_cast<unsigned char>(bytes[i + k]) : 0u);
    }
    for (std::size_t k = 0; k < 4; ++k) {
      out.push_back(k <= n ? kAlphabet[(v >> (18 - 6 * k)) & 63] : '=');
    }
  }
  return out;
}

// A resources/list or resources/templates/list entry: the two describe
// their entries alike, only the locator differs ("uri", "uriTemplate").
template <class Entry>
json describe(const char* locator_key, const std::string& locator, const Entry& e) {
  json j = {{locator_key, locator}, {"name", e.name}};
  put_if(j, "title", e.title);
  put_if(j, "description", e.description);
  put_if(j, "mimeType", e.mime_type);
  return j;
}

// uri against a level-1 template ("news://{date}/x"): the variables' values,
// or nullopt. A variable takes at least one character and never a '/'.
std::optional<std::map<std::string, std::string>> match_template(std::string_view tmpl,
                                                                 std::string_view uri) {
  std::map<std::string, std::string> vars;
  while (!tmpl.empty()) {
    const std::size_t open = tmpl.find('{');
    const std::string_view literal = tmpl.substr(0, open);
    if (!uri.starts_with(literal)) return std::nullopt;
    uri.remove_prefix(literal.size());
    if (open == std::string_view::npos) return uri.empty() ? std::optional(vars) : std::nullopt;
    const std::size_t close = tmpl.find('}', open);
    if (close == std::string_view::npos) return std::nullopt;
    const std::string name(tmpl.substr(open + 1, close - open - 1));
    tmpl.remove_prefix(close + 1);
    // The value runs to the next literal character of the template (or '/').
    const char stop = tmpl.empty() ? '/' : tmpl.front();
    std::size_t len = std::min(uri.find(stop), uri.find('/'));
    if (len == std::string_view::npos) len = uri.size();
    if (len == 0) return std::nullopt;
    vars[name] = std::string(uri.substr(0, len));
    uri.remove_prefix(len);
  }
  return uri.empty() ? std::optional(vars) : std::nullopt;
}

json contents_json(const std::vector<ResourceContents>& contents) {
  json out = json::array();
  for (const ResourceContents& c : contents) {
    json j = {{"uri", c.uri}};
    put_if(j, "mimeType", c.mime_type);
    if (c.binary) {
      j["blob"] = base64(c.data);
    } else {
      j["text"] = c.data;
    }
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace

const char* to_string(LogLevel level) noexcept { return kLevelNames[static_cast<std::size_t>(level)]; }

std::optional<LogLevel> log_level_from_string(std::string_view name) noexcept {
  for (std::size_t i = 0; i < kLevelNames.size(); ++i) {
    if (name == kLevelNames[i]) return static_cast<LogLevel>(i);
  }
  return std::nullopt;
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

ToolResult ToolResult::text(std::string text) {
  ToolResult r;
  r.content.push_back({{"type", "text"}, {"text", std::move(text)}});
  return r;
}

ToolResult ToolResult::error(std::string message) {
  ToolResult r = text(std::move(message));
  r.is_error = true;
  return r;
}

ToolResult ToolResult::structured(json value) {
  ToolResult r = text(value.dump());
  r.structured_content = std::move(value);
  return r;
}

json ToolResult::to_json() const {
  json j = {{"content", content}, {"isError", is_error}};
  put_if(j, "structuredContent", structured_content);
  return j;
}

void Server::add_resource(Resource resource, ResourceReader reader) {
  resources_.push_back({std::move(resource), std::move(reader)});
}

void Server::add_resource_template(ResourceTemplate tmpl, TemplateReader reader) {
  templates_.push_back({std::move(tmpl), std::move(reader)});
}

void Server::add_prompt(Prompt prompt, PromptHandler handler) {
  prompts_.push_back({std::move(prompt), std::move(handler)});
}

Coro<json> Server::read_resource(const json& params) {
  const std::string uri = string_param(params, "uri");
  // (g++ 12 cannot take a co_await inside a braced initializer: name it first.)
  for (const ResourceEntry& e : resources_) {
    if (e.resource.uri != uri) continue;
    const std::vector<ResourceContents> contents = co_await e.reader(uri);
    co_return json::object({{"contents", contents_json(contents)}});
  }
  for (const TemplateEntry& e : templates_) {
    if (auto vars = match_template(e.tmpl.uri_template, uri)) {
      const std::vector<ResourceContents> contents = co_await e.reader(uri, *vars);
      co_return json::object({{"contents", contents_json(contents)}});
    }
  }
  // MCP's code for an unknown resource (-32002), with the uri as data.
  throw RpcError(-32002, "Resource not found", {{"uri", uri}});
}

Coro<json> Server::get_prompt(const json& params) {
  const std::string name = string_param(params, "name");
  const auto e = std::find_if(prompts_.begin(), prompts_.end(),
                              [&](const PromptEntry& p) { return p.prompt.name == name; });
  if (e == prompts_.end()) throw RpcError(error_code::invalid_params, "Unknown prompt: " + name);
  const json args = params.value("arguments", json::object());
  for (const PromptArgument& a : e->prompt.arguments) {
    if (a.required && !(args.is_object() && args.contains(a.name))) {
      throw RpcError(error_code::invalid_params, "Missing required argument: " + a.name);
    }
  }
  json messages = json::array();
  const std::vector<PromptMessage> said = co_await e->handler(args);
  for (const PromptMessage& m : said) {
    messages.push_back({{"role", m.role}, {"content", {{"type", "text"}, {"text", m.text}}}});
  }
  json result = {{"messages", std::move(messages)}};
  put_if(result, "description", e->prompt.description);
  co_return result;
}

void Server::install_resources_and_prompts(Session& s) {
  s.on_request("resources/list", [this](const json& params, const RequestContext&) -> Coro<json> {
    co_return paginate(resources_.size(), page_size, params, "resources", [this](std::size_t i) {
      const Resource& r = resources_[i].resource;
      return describe("uri", r.uri, r);
    });
  });
  s.on_request("resources/templates/list", [this](const json& params, const RequestContext&) -> Coro<json> {
    co_return paginate(templates_.size(), page_size, params, "resourceTemplates", [this](std::size_t i) {
      const ResourceTemplate& t = templates_[i].tmpl;
      return describe("uriTemplate", t.uri_template, t);
    });
  });
  s.on_request("resources/read", [this](const json& params, const RequestContext&) -> Coro<json> {
    co_return co_await read_resource(params);
  });
  s.on_request("prompts/list", [this](const json& params, const RequestContext&) -> Coro<json> {
    co_return paginate(prompts_.size(), page_size, params, "prompts", [this](std::size_t i) {
      const Prompt& p = prompts_[i].prompt;
      json args = json::array();
      for (const PromptArgument& a : p.arguments) {
        json arg = {{"name", a.name}, {"required", a.required}};
        put_if(arg, "description", a.description);
        args.push_back(std::move(arg));
      }
      json j = {{"name", p.name}, {"arguments", std::move(args)}};
      put_if(j, "title", p.title);
      put_if(j, "description", p.description);
      return j;
    });
  });
  s.on_request("prompts/get", [this](const json& params, const RequestContext&) -> Coro<json> {
    co_return co_await get_prompt(params);
  });
}

}  // namespace corio::mcp
