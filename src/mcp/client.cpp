// Client (see client.hpp): requests over a Session whose reader runs in a task.
#include <corio/mcp/client.hpp>

#include <map>
#include <vector>

#include <corio/errors.hpp>
#include <corio/event.hpp>
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

std::string elicitation_id(const json& params) {
  const auto it = params.is_object() ? params.find("elicitationId") : params.end();
  return params.is_object() && it != params.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

// The URL elicitations given (the spec: a completion of any other id, or
// of one completed already, is ignored), the completions a waiter may yet
// ask about, and the waiters, each on its id's Event (shared: a waiter
// cancelled leaves it to the others).
struct Client::UrlElicitations {
  ElicitationIds given, completed;
  std::map<std::string, std::shared_ptr<Event>, std::less<>> waiting;
  std::function<void(const std::string&)> handler;

  void complete(const json& params) {
    const std::string id = elicitation_id(params);
    if (!given.take(id)) return;
    completed.add(id);
    if (const auto it = waiting.find(id); it != waiting.end()) {
      it->second->set();
      waiting.erase(it);
    }
    if (handler) handler(id);
  }
};

Client::Client(Transport& transport, std::string name, std::string version)
    : session_(transport),
      url_elicitations_(std::make_unique<UrlElicitations>()),
      name_(std::move(name)),
      version_(std::move(version)) {
  session_.on_request("ping", [](const json&, const RequestContext&) -> Coro<json> {
    co_return json::object();
  });
  session_.on_notification("notifications/elicitation/complete",
                           [this](const json& params) { url_elicitations_->complete(params); });
}

void Client::on_elicitation_complete(std::function<void(const std::string&)> handler) {
  url_elicitations_->handler = std::move(handler);
}

Coro<void> Client::wait_elicitation_complete(std::string elicitation_id) {
  if (url_elicitations_->completed.contains(elicitation_id)) co_return;
  std::shared_ptr<Event>& slot = url_elicitations_->waiting[elicitation_id];
  if (!slot) slot = std::make_shared<Event>();
  const std::shared_ptr<Event> done = slot;  // the map's entry goes when it is set
  co_await done->wait();
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
  if (params.is_object() && params.value("mode", "") == "url") {
    if (std::string id = elicitation_id(params); !id.empty()) url_elicitations_->given.add(std::move(id));
  }
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
  try {
    co_return co_await session_.request("tools/call", std::move(params));
  } catch (const RpcError& e) {
    if (e.code() != error_code::url_elicitation_required) throw;
    // -32042: the ids it lists are ones the server may complete.
    std::vector<UrlElicitation> elicitations = UrlElicitationRequiredError::from_data(e.data());
    if (elicitations.empty()) throw;  // no usable list: the error as it came
    for (const UrlElicitation& u : elicitations) url_elicitations_->given.add(u.elicitation_id);
    throw UrlElicitationRequiredError(std::move(elicitations), e.what());
  }
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
