// Client (see client.hpp): requests over a Session whose reader runs in a task.
#include <corio/mcp/client.hpp>

#include <corio/errors.hpp>
#include <corio/event_loop.hpp>

namespace corio::mcp {

Client::~Client() {
  if (reader_) reader_->cancel();
}

Coro<json> Client::initialize(std::string protocol_version) {
  if (!reader_) reader_.emplace(create_task(session_.run()));
  const json params = {{"protocolVersion", protocol_version},
                       {"capabilities", json::object()},
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
