// Server (see server.hpp): the lifecycle, the method table on the
// Session, paginated lists and tool calls.
#include <corio/mcp/server.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <exception>

#include <corio/errors.hpp>
#include <corio/mcp/schema.hpp>
#include <corio/task.hpp>

#include "mcp/server_internal.hpp"

namespace corio::mcp {

namespace {

// Newest first. The last two had JSON-RPC batches; 2025-06-18 removed them.
constexpr std::array<const char*, 4> kSupportedVersions = {"2025-11-25", "2025-06-18",
                                                           "2025-03-26", "2024-11-05"};

bool allows_batches(std::string_view version) {
  return version == "2025-03-26" || version == "2024-11-05";
}

json tool_json(const Tool& t) {
  json j = {{"name", t.name}, {"inputSchema", t.input_schema}};
  put_if(j, "title", t.title);
  put_if(j, "description", t.description);
  put_if(j, "outputSchema", t.output_schema);
  put_if(j, "annotations", t.annotations);
  put_if(j, "icons", t.icons);
  put_if(j, "_meta", t.meta);
  return j;
}

// A result against the tool's outputSchema: what is wrong, or "".
std::string output_problem(const Tool& tool, const ToolResult& r) {
  if (tool.output_schema.is_null() || r.is_error) return {};
  if (r.structured_content.is_null()) return "it has an outputSchema but returned no structuredContent";
  const std::vector<std::string> problems = validate(tool.output_schema, r.structured_content);
  return problems.empty() ? std::string() : "its structuredContent does not match its outputSchema: " + problems.front();
}

// initialize's required members, with their types (InitializeRequestParams).
void check_initialize_params(const json& params) {
  const auto member = [&](const char* key) -> const json& {
    static const json absent;
    const auto it = params.find(key);
    return it == params.end() ? absent : *it;
  };
  if (!member("protocolVersion").is_string()) {
    throw RpcError(error_code::invalid_params, "initialize: \"protocolVersion\" must be a string");
  }
  if (!member("capabilities").is_object()) {
    throw RpcError(error_code::invalid_params, "initialize: \"capabilities\" must be an object");
  }
  const json& info = member("clientInfo");
  if (!info.is_object() || !info.value("name", json()).is_string() ||
      !info.value("version", json()).is_string()) {
    throw RpcError(error_code::invalid_params,
                   "initialize: \"clientInfo\" must be an object with a string name and version");
  }
}

const json& object_member(const json& params, const char* key) {
  static const json empty = json::object();
  if (!params.is_object()) return empty;
  const auto it = params.find(key);
  return it == params.end() ? empty : *it;
}

}  // namespace

Server::Server(std::string name, std::string version, std::string instructions)
    : name_(std::move(name)), version_(std::move(version)), instructions_(std::move(instructions)) {}

void Server::add_tool(Tool tool, ToolHandler handler) {
  tools_.push_back(std::make_shared<const ToolEntry>(ToolEntry{std::move(tool), std::move(handler)}));
  list_changed("tools");
}

bool Server::remove_tool(std::string_view name) {
  return list_changed("tools", erase_by(tools_, [&](const ToolEntry& e) { return e.tool.name == name; }));
}

void Server::on_roots_list_changed(std::function<void()> handler) { roots_changed_ = std::move(handler); }

void Server::add_method(std::string method, Session::RequestHandler handler) {
  methods_[std::move(method)] = std::move(handler);
}

void Server::add_notification(std::string method, Session::NotificationHandler handler) {
  notifications_[std::move(method)] = std::move(handler);
}

bool Server::list_changed(const char* list, bool changed) {
  if (changed) broadcast(std::string("notifications/") + list + "/list_changed", nullptr);
  return changed;
}

// Queued, not sent here: add_tool() and the like are plain calls, and a
// send can suspend. Each client's notifier task does the sending.
void Server::broadcast(const std::string& method, const json& params,
                       const std::function<bool(const Peer&)>& filter) {
  for (Peer* p : *peers_) {
    if (!p->initialized || (filter && !filter(*p))) continue;
    post(*p, make_notification(method, params));
  }
}

bool Server::complete_elicitation(std::string_view elicitation_id) {
  for (Peer* p : *peers_) {
    // Completed once: the client ignores a second one anyway.
    if (!p->url_elicitations.take(elicitation_id)) continue;
    post(*p, make_notification("notifications/elicitation/complete", {{"elicitationId", std::string(elicitation_id)}}));
    return true;
  }
  return false;
}

void Server::post(Peer& peer, json notification) {
  peer.outbox.push_back(std::move(notification));
  if (!peer.notifier || peer.notifier->done()) peer.notifier = create_task(send_outbox(peer));
}

Coro<void> Server::send_outbox(Peer& peer) {
  while (!peer.outbox.empty()) {
    const json m = std::move(peer.outbox.front());
    peer.outbox.erase(peer.outbox.begin());
    co_await peer.session->notify(m.at("method").get<std::string>(), m.value("params", json()));
  }
}

void Server::add_tool(std::string name, std::string description, json input_schema,
                      ToolHandler handler) {
  Tool tool;
  tool.name = std::move(name);
  tool.description = std::move(description);
  tool.input_schema = std::move(input_schema);
  add_tool(std::move(tool), std::move(handler));
}

Coro<void> Server::run_stdio() {
  StdioTransport transport = StdioTransport::open();
  co_await run(transport);
}

Server::Connection::Connection(Server& server, Transport& transport)
    : peers_(server.peers_), session_(transport) {
  session_.json_limits(server.json_limits);
  session_.max_in_flight(server.max_in_flight);
  peer_.session = &session_;
  server.install(session_, peer_);
  peer_.index = peers_->size();
  peers_->push_back(&peer_);
}

Server::Connection::~Connection() {
  leave();
  if (peer_.notifier) peer_.notifier->cancel();  // it refers to the session: it ends first
}

// Called twice when close() came first: the second is nothing. The order of
// peers_ is not kept (a broadcast's order across clients means nothing).
void Server::Connection::leave() noexcept {
  if (peer_.index == Peer::kGone) return;
  Peer* last = peers_->back();
  (*peers_)[peer_.index] = last;
  last->index = peer_.index;
  peers_->pop_back();
  peer_.index = Peer::kGone;
}

bool Server::Connection::idle() const noexcept {
  return session_.in_flight() == 0 && (!peer_.notifier || peer_.notifier->done());
}

Coro<void> Server::Connection::stop_notifier() {
  if (!peer_.notifier) co_return;
  peer_.notifier->cancel();
  try {
    co_await *peer_.notifier;
  } catch (const CancelledError&) {
  }
}

Coro<void> Server::Connection::close() {
  leave();
  co_await session_.close();
  co_await stop_notifier();
}

Coro<void> Server::run(Transport& transport) {
  Connection client(*this, transport);
  std::exception_ptr stopped;  // cancelled, or the transport failed
  try {
    co_await client.session().run();
  } catch (...) {
    stopped = std::current_exception();
  }
  co_await client.close();  // however run() ends, the server forgets this client
  if (stopped) std::rethrow_exception(stopped);
}

bool Server::supports_protocol_version(std::string_view version) noexcept {
  return std::find(kSupportedVersions.begin(), kSupportedVersions.end(), version) !=
         kSupportedVersions.end();
}

std::string Server::negotiate_protocol_version(std::string_view version) {
  return supports_protocol_version(version) ? std::string(version) : kLatestProtocolVersion;
}

void Server::admit(const Message& m, Peer& peer) {
  // MCP's params are an object (JSON-RPC would allow an array).
  if (!m.params.is_null() && !m.params.is_object()) {
    throw RpcError(error_code::invalid_params, "\"params\" must be an object");
  }
  if (m.method == "initialize") {
    if (peer.initialized) throw RpcError(error_code::invalid_request, "the session is already initialized");
    check_initialize_params(m.params.is_null() ? json::object() : m.params);
    peer.initialized = true;  // now, in read order: a request read next is after it
  } else if (!peer.initialized && m.method != "ping") {
    throw RpcError(error_code::invalid_request, "the session is not initialized: initialize comes first");
  }
}

json Server::capabilities() const {
  json caps = {{"logging", json::object()}};
  if (!tools_.empty()) caps["tools"] = {{"listChanged", true}};
  if (!resources_.empty() || !templates_.empty()) caps["resources"] = {{"subscribe", true}, {"listChanged", true}};
  if (!prompts_.empty()) caps["prompts"] = {{"listChanged", true}};
  if (completion_) caps["completions"] = json::object();
  return caps;
}

std::shared_ptr<const ClientInfo> Server::intern(ClientInfo info) {
  const std::string key = json{info.protocol_version, info.capabilities, info.implementation}.dump();
  const auto it = client_infos_.try_emplace(key).first;
  if (std::shared_ptr<const ClientInfo> held = it->second.lock()) return held;
  auto shared = std::make_shared<const ClientInfo>(std::move(info));
  it->second = shared;
  if (client_infos_.size() >= 2 * client_infos_swept_) {
    std::erase_if(client_infos_, [](const auto& entry) { return entry.second.expired(); });
    client_infos_swept_ = client_infos_.size();
  }
  return shared;
}

json Server::initialize(const json& params, Session& session, Peer& peer) {
  ClientInfo info;
  info.protocol_version = negotiate_protocol_version(params.at("protocolVersion").get<std::string>());
  info.capabilities = params.at("capabilities");  // admit() checked both
  info.implementation = params.value("clientInfo", json::object());
  peer.client = intern(std::move(info));
  session.accept_batches(allows_batches(peer.client->protocol_version));
  json result = {{"protocolVersion", peer.client->protocol_version},
                 {"capabilities", capabilities()},
                 {"serverInfo", {{"name", name_}, {"version", version_}}}};
  put_if(result, "instructions", instructions_);
  return result;
}

Coro<json> Server::call_tool(const json& params, const RequestContext& rc, Peer& peer) {
  const std::string name = string_param(params, "name");
  // Held for the call: a remove_tool() meanwhile must not free its handler.
  const std::shared_ptr<const ToolEntry> entry =
      find_by(tools_, [&](const ToolEntry& e) { return e.tool.name == name; });
  if (!entry) throw RpcError(error_code::invalid_params, "Unknown tool: " + name);
  const json& args = object_member(params, "arguments");
  // Since 2025-11-25 invalid arguments are a tool error the model can fix,
  // not a protocol error.
  const std::vector<std::string> problems = validate(entry->tool.input_schema, args);
  if (!problems.empty()) {
    std::string text = "Invalid arguments for tool " + name + ":";
    for (const std::string& p : problems) text += "\n  " + p;
    co_return ToolResult::error(std::move(text)).to_json();
  }
  Context ctx(rc, peer.min_log_level, peer.client.get(), &peer.url_elicitations);
  std::string failure;
  try {
    ToolResult r = co_await entry->handler(args, ctx);
    failure = output_problem(entry->tool, r);
    if (failure.empty()) co_return r.to_json();
  } catch (const UrlElicitationRequiredError& e) {
    for (const UrlElicitation& u : e.elicitations()) peer.url_elicitations.add(u.elicitation_id);
    throw;
  } catch (const RpcError&) {
    throw;
  } catch (const json::exception&) {
    failure = "an internal error";  // the JSON library's words are about the tool's code
  } catch (const std::exception& e) {
    failure = e.what();
  }
  co_return ToolResult::error("Tool " + name + " failed: " + failure).to_json();
}

// Per session: two routers whose captures fit std::function's own buffer
// (no allocation), the gate, and what never_cancel() keeps.
void Server::install(Session& s, Peer& peer) {
  s.on_before_request([&peer](const Message& m) { admit(m, peer); });
  s.never_cancel("initialize");  // the spec: "the initialize request MUST NOT be cancelled"
  s.on_other_requests([this, &peer](const std::string& method, const json& params, const RequestContext& rc) {
    return route(method, params, rc, peer);
  });
  s.on_other_notifications([this, &s](const std::string& method, const json& params) { notified(method, params, s); });
}

Coro<json> Server::route(const std::string& method, const json& params, const RequestContext& rc, Peer& peer) {
  if (const auto it = methods_.find(method); it != methods_.end()) return it->second(params, rc);
  Builtin b = builtin(method);
  if (!b) b = content_builtin(method);
  if (!b) throw RpcError(error_code::method_not_found, "Method not found: " + method);
  return b(*this, peer, params, rc);
}

void Server::notified(const std::string& method, const json& params, Session& s) {
  if (const auto it = notifications_.find(method); it != notifications_.end()) {
    it->second(params);
  } else if (method == "notifications/cancelled") {
    if (params.is_object() && params.contains("requestId")) s.cancel_request(params["requestId"]);
  } else if (method == "notifications/roots/list_changed") {
    if (roots_changed_) roots_changed_();
  }  // notifications/initialized, and those we do not know: nothing to do
}

Server::Builtin Server::builtin(std::string_view method) {
  static constexpr std::pair<std::string_view, Builtin> kTable[] = {
      {"initialize",
       [](Server& sv, Peer& peer, const json& params, const RequestContext& rc) -> Coro<json> {
         co_return sv.initialize(params, rc.session, peer);
       }},
      {"logging/setLevel",
       [](Server&, Peer& peer, const json& params, const RequestContext&) -> Coro<json> {
         const auto level = log_level_from_string(string_param(params, "level"));
         if (!level) throw RpcError(error_code::invalid_params, "unknown log level");
         peer.min_log_level = *level;
         co_return json::object();
       }},
      {"ping", [](Server&, Peer&, const json&, const RequestContext&) -> Coro<json> { co_return json::object(); }},
      {"tools/call",
       [](Server& sv, Peer& peer, const json& params, const RequestContext& rc) -> Coro<json> {
         co_return co_await sv.call_tool(params, rc, peer);
       }},
      {"tools/list",
       [](Server& sv, Peer&, const json& params, const RequestContext&) -> Coro<json> {
         co_return paginate(sv.tools_.size(), sv.page_size, params, "tools",
                            [&sv](std::size_t i) { return tool_json(sv.tools_[i]->tool); });
       }},
  };
  static_assert(sorted_by_name(kTable));
  return find_named(kTable, method);
}

// The offset a cursor stands for: the decimal index of the next entry,
// which is all a list that never changes needs. Anything else is -32602.
json paginate(std::size_t count, std::size_t page_size, const json& params, const char* key,
              const std::function<json(std::size_t)>& item) {
  std::size_t start = 0;
  if (params.is_object() && params.contains("cursor")) {
    const json& c = params.at("cursor");
    const std::string s = c.is_string() ? c.get<std::string>() : std::string();
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), start);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size() || start > count) {
      throw RpcError(error_code::invalid_params, "Invalid cursor");
    }
  }
  const std::size_t stop = std::min(count, start + std::max<std::size_t>(page_size, 1));
  json items = json::array();
  for (std::size_t i = start; i < stop; ++i) items.push_back(item(i));
  json result = {{key, std::move(items)}};
  if (stop < count) result["nextCursor"] = std::to_string(stop);
  return result;
}

void put_if(json& j, const char* key, const std::string& value) {
  if (!value.empty()) j[key] = value;
}

void put_if(json& j, const char* key, const json& value) {
  if (!value.is_null()) j[key] = value;
}

std::string string_param(const json& params, const char* key) {
  const auto it = params.is_object() ? params.find(key) : params.end();
  if (!params.is_object() || it == params.end() || !it->is_string()) {
    throw RpcError(error_code::invalid_params, std::string("\"") + key + "\" must be a string");
  }
  return it->get<std::string>();
}

}  // namespace corio::mcp
