// Server (see server.hpp): what tools return, resources with their
// templates and subscriptions, prompts, completions.
#include <corio/mcp/server.hpp>

#include <algorithm>

#include <corio/mcp/content.hpp>

#include "mcp/server_internal.hpp"

namespace corio::mcp {

namespace {

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
  for (const ResourceContents& c : contents) out.push_back(contents_json(c));
  return out;
}

}  // namespace

json contents_json(const ResourceContents& c) {
  json j = {{"uri", c.uri}};
  put_if(j, "mimeType", c.mime_type);
  if (c.binary) {
    j["blob"] = base64_encode(c.data);
  } else {
    j["text"] = c.data;
  }
  return j;
}

json resource_json(const Resource& r) {
  json j = describe("uri", r.uri, r);
  put_if(j, "annotations", r.annotations);
  put_if(j, "icons", r.icons);
  return j;
}

Completion Completion::matching(std::string_view prefix, const std::vector<std::string>& candidates) {
  Completion c;
  for (const std::string& v : candidates) {
    if (v.starts_with(prefix)) c.values.push_back(v);
  }
  return c;
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
  resources_.push_back(std::make_shared<const ResourceEntry>(ResourceEntry{std::move(resource), std::move(reader)}));
  list_changed("resources");
}

void Server::add_resource_template(ResourceTemplate tmpl, TemplateReader reader) {
  templates_.push_back(std::make_shared<const TemplateEntry>(TemplateEntry{std::move(tmpl), std::move(reader)}));
  list_changed("resources");
}

void Server::add_prompt(Prompt prompt, PromptHandler handler) {
  prompts_.push_back(std::make_shared<const PromptEntry>(PromptEntry{std::move(prompt), std::move(handler)}));
  list_changed("prompts");
}

bool Server::remove_resource(std::string_view uri) {
  return list_changed("resources", erase_by(resources_, [&](const ResourceEntry& e) { return e.resource.uri == uri; }));
}

bool Server::remove_resource_template(std::string_view uri_template) {
  return list_changed("resources", erase_by(templates_, [&](const TemplateEntry& e) { return e.tmpl.uri_template == uri_template; }));
}

bool Server::remove_prompt(std::string_view name) {
  return list_changed("prompts", erase_by(prompts_, [&](const PromptEntry& e) { return e.prompt.name == name; }));
}

void Server::notify_resource_updated(std::string_view uri) {
  broadcast("notifications/resources/updated", {{"uri", uri}},
            [uri](const Peer& p) { return p.subscriptions.contains(uri); });
}

void Server::on_completion(CompletionHandler handler) { completion_ = std::move(handler); }

Coro<json> Server::read_resource(const json& params) {
  const std::string uri = string_param(params, "uri");
  // Held for the read: a remove_resource() meanwhile must not free the reader.
  // (g++ 12 cannot take a co_await inside a braced initializer: name it first.)
  if (const auto e = find_by(resources_, [&](const ResourceEntry& r) { return r.resource.uri == uri; })) {
    const std::vector<ResourceContents> contents = co_await e->reader(uri);
    co_return json::object({{"contents", contents_json(contents)}});
  }
  std::optional<std::map<std::string, std::string>> vars;
  const auto t = find_by(templates_, [&](const TemplateEntry& e) {
    vars = match_template(e.tmpl.uri_template, uri);
    return vars.has_value();
  });
  if (t) {
    const std::vector<ResourceContents> contents = co_await t->reader(uri, *vars);
    co_return json::object({{"contents", contents_json(contents)}});
  }
  // MCP's code for an unknown resource (-32002), with the uri as data.
  throw RpcError(-32002, "Resource not found", {{"uri", uri}});
}

Coro<json> Server::get_prompt(const json& params) {
  const std::string name = string_param(params, "name");
  const std::shared_ptr<const PromptEntry> e = find_by(prompts_, [&](const PromptEntry& p) { return p.prompt.name == name; });
  if (!e) throw RpcError(error_code::invalid_params, "Unknown prompt: " + name);
  const json args = params.value("arguments", json::object());
  for (const PromptArgument& a : e->prompt.arguments) {
    if (a.required && !(args.is_object() && args.contains(a.name))) {
      throw RpcError(error_code::invalid_params, "Missing required argument: " + a.name);
    }
  }
  json messages = json::array();
  const std::vector<PromptMessage> said = co_await e->handler(args);
  for (const PromptMessage& m : said) {
    json block = m.content.is_null() ? content::text(m.text) : m.content;
    messages.push_back({{"role", m.role}, {"content", std::move(block)}});
  }
  json result = {{"messages", std::move(messages)}};
  put_if(result, "description", e->prompt.description);
  co_return result;
}

// completion/complete for an argument that exists (-32602 otherwise), by
// the handler; at most 100 values, as the spec allows.
Coro<json> Server::complete(const json& params) {
  const json& ref = params.value("ref", json::object());
  const json& argument = params.value("argument", json::object());
  CompletionRequest req{string_param(ref, "type"), "", string_param(argument, "name"),
                        string_param(argument, "value"), {}};
  bool known = false;
  if (req.ref_type == "ref/prompt") {
    req.ref = string_param(ref, "name");
    const auto p = find_by(prompts_, [&](const PromptEntry& e) { return e.prompt.name == req.ref; });
    known = p && std::any_of(p->prompt.arguments.begin(), p->prompt.arguments.end(),
                             [&](const PromptArgument& a) { return a.name == req.argument; });
  } else if (req.ref_type == "ref/resource") {
    req.ref = string_param(ref, "uri");
    const auto t = find_by(templates_, [&](const TemplateEntry& e) { return e.tmpl.uri_template == req.ref; });
    known = t && t->tmpl.uri_template.find("{" + req.argument + "}") != std::string::npos;
  } else {
    throw RpcError(error_code::invalid_params, "ref.type must be \"ref/prompt\" or \"ref/resource\"");
  }
  if (!known) throw RpcError(error_code::invalid_params, "No such argument to complete: " + req.argument);
  const json context_args = params.value("context", json::object()).value("arguments", json::object());
  for (const auto& [k, v] : context_args.items()) {
    if (v.is_string()) req.context[k] = v.get<std::string>();
  }
  Completion c = co_await completion_(req);
  constexpr std::size_t kMaxValues = 100;
  const bool cut = c.values.size() > kMaxValues;
  if (cut) c.values.resize(kMaxValues);
  json completion = {{"values", c.values}, {"hasMore", c.has_more || cut}};
  if (c.total) completion["total"] = *c.total;
  co_return json::object({{"completion", std::move(completion)}});
}

namespace {

json prompt_json(const Prompt& p) {
  json args = json::array();
  for (const PromptArgument& a : p.arguments) {
    json arg = {{"name", a.name}, {"required", a.required}};
    put_if(arg, "description", a.description);
    args.push_back(std::move(arg));
  }
  json j = {{"name", p.name}, {"arguments", std::move(args)}};
  put_if(j, "title", p.title);
  put_if(j, "description", p.description);
  put_if(j, "icons", p.icons);
  return j;
}

}  // namespace

Server::Builtin Server::content_builtin(std::string_view method) const {
  static constexpr std::pair<std::string_view, Builtin> kTable[] = {
      {"prompts/get",
       [](Server& sv, Peer&, const json& params, const RequestContext&) -> Coro<json> {
         co_return co_await sv.get_prompt(params);
       }},
      {"prompts/list",
       [](Server& sv, Peer&, const json& params, const RequestContext&) -> Coro<json> {
         co_return paginate(sv.prompts_.size(), sv.page_size, params, "prompts",
                            [&sv](std::size_t i) { return prompt_json(sv.prompts_[i]->prompt); });
       }},
      {"resources/list",
       [](Server& sv, Peer&, const json& params, const RequestContext&) -> Coro<json> {
         co_return paginate(sv.resources_.size(), sv.page_size, params, "resources",
                            [&sv](std::size_t i) { return resource_json(sv.resources_[i]->resource); });
       }},
      {"resources/read",
       [](Server& sv, Peer&, const json& params, const RequestContext&) -> Coro<json> {
         co_return co_await sv.read_resource(params);
       }},
      // A subscription to a uri we do not serve is still kept: the resource
      // may appear later, and the spec leaves that to the server.
      {"resources/subscribe",
       [](Server&, Peer& peer, const json& params, const RequestContext&) -> Coro<json> {
         peer.subscriptions.insert(string_param(params, "uri"));
         co_return json::object();
       }},
      {"resources/templates/list",
       [](Server& sv, Peer&, const json& params, const RequestContext&) -> Coro<json> {
         co_return paginate(sv.templates_.size(), sv.page_size, params, "resourceTemplates", [&sv](std::size_t i) {
           const ResourceTemplate& t = sv.templates_[i]->tmpl;
           json j = describe("uriTemplate", t.uri_template, t);
           put_if(j, "annotations", t.annotations);
           put_if(j, "icons", t.icons);
           return j;
         });
       }},
      {"resources/unsubscribe",
       [](Server&, Peer& peer, const json& params, const RequestContext&) -> Coro<json> {
         const auto it = peer.subscriptions.find(string_param(params, "uri"));
         if (it != peer.subscriptions.end()) peer.subscriptions.erase(it);
         co_return json::object();
       }},
  };
  if (method == "completion/complete" && completion_) {
    return [](Server& sv, Peer&, const json& params, const RequestContext&) -> Coro<json> {
      co_return co_await sv.complete(params);
    };
  }
  static_assert(sorted_by_name(kTable));
  return find_named(kTable, method);
}

}  // namespace corio::mcp
