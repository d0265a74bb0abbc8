// Client (see client.hpp): requests over a Session whose reader runs in a task.
#include <corio/mcp/client.hpp>

#include <corio/errors.hpp>
#include <corio/event_loop.hpp>

namespace corio::mcp {

namespace {

// SEP-1034: the fields an accepted elicitation leaves out take the
// requested schema's defaults.
void apply_defaults(json& result, const json& params) {
  if (!result.is_object() || result.value("action", "") != "accept") return;
  const json schema = params.value("requestedSchema", json::object());
  const json properties = schema.is_object() ? schema.value("properties", json::object()) : json();
  if (!properties.is_object()) return;
  json& content = result["content"];
  if (content.is_null()) content = json::object();
  if (!content.is_object()) return;
  for (const auto& [name, property] : properties.items()) {
    if (!content.contains(name) && property.is_object() && property.contains("default")) {
      content[name] = property["default"];
    }
  }
}

Coro<json> answered(json result) { co_return result; }

}  // namespace

Client::Client(Transport& transport, std::string name, std::string version)
    : session_(transport), name_(std::move(name)), version_(std::move(version)) {
  session_.on_request("ping", [](const json&, const RequestContext&) -> Coro<json> {
    co_return json::object();
  });
}

void Client::on_sampling(Session::RequestHandler handler) {
  sampling_ = true;
  session_.on_request("sampling/createMessage", std::move(handler));
}

void Client::on_elicitation(Session::RequestHandler handler, bool url_mode) {
  elicitation_ = std::move(handler);
  url_elicitation_ = url_mode;
  session_.on_request("elicitation/create", [this](const json& params, const RequestContext& ctx) {
    return elicit(params, ctx);
  });
}

Coro<json> Client::elicit(const json& params, const RequestContext& ctx) {
  json result = co_await elicitation_(params, ctx);
  apply_defaults(result, params);
  co_return result;
}

void Client::set_roots(json roots) {
  if (!roots_) {
    // Not a coroutine lambda: the roots are read when the request comes.
    session_.on_request("roots/list", [this](const json&, const RequestContext&) {
      return answered(json{{"roots", *roots_}});
    });
  }
  roots_ = std::move(roots);
}

Coro<void> Client::update_roots(json roots) {
  set_roots(std::move(roots));
  co_await session_.notify("notifications/roots/list_changed");
}

json Client::capabilities() const {
  json caps = json::object();
  if (sampling_) caps["sampling"] = json::object();
  if (elicitation_) {
    caps["elicitation"] = {{"form", json::object()}};
    if (url_elicitation_) caps["elicitation"]["url"] = json::object();
  }
  if (roots_) caps["roots"] = {{"listChanged", true}};
  return caps;
}

Client::~Client() {
  if (reader_) reader_->cancel();
}

Coro<json> Client::initialize(std::string protocol_version) {
  if (!reader_) reader_.emplace(create_task(session_.run()));
  const json params = {{"protocolVersion", protocol_version},
                       {"capabilities", capabilities()},
                       {"clientInfo", {{"name", name_}, {"version", version_}}}};
  json result = co_await session_.request("initialize", params);
  co_await session_.notify("notifications/initialized");
  co_return result;
}

Coro<json> Client::list_tools() {
  json tools = json::array();
  json params = json::object();
  for (;;) {
    json page = co_await session_.request("tools/list", params);
    for (json& t : page["tools"]) tools.push_back(std::move(t));
    if (!page.contains("nextCursor")) co_return tools;
    params["cursor"] = page["nextCursor"];
  }
}

Coro<json> Client::call_tool(std::string name, json arguments, json progress_token) {
  json params = {{"name", std::move(name)}, {"arguments", std::move(arguments)}};
  if (!progress_token.is_null()) params["_meta"] = {{"progressToken", std::move(progress_token)}};
  co_return co_await session_.request("tools/call", std::move(params));
}

Coro<void> Client::close() {
  if (!reader_) co_return;
  reader_->cancel();
  try {
    co_await *reader_;
  } catch (const CancelledError&) {
    // The reader stopped, as asked.
  }
  reader_.reset();
}

}  // namespace corio::mcp
