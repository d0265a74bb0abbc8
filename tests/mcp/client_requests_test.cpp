// The server's requests to an mcp::Client over stdio (a Session plays the
// server on the other end of the pipes): initialize declares exactly the
// capabilities whose handlers are registered, and ping, sampling,
// elicitation (with SEP-1034 defaults) and roots/list are served.
#include "mcp/mcp_support.hpp"

namespace corio_mcp_test {
namespace {

using corio::mcp::Client;
using corio::mcp::RpcError;

// A server that answers initialize and keeps the client's declaration.
struct FakeServer {
  Harness h;
  Session session{h.transport};
  json declared;
  corio::Event roots_changed;

  FakeServer() {
    session.on_request("initialize", [this](const json& params, const RequestContext&) {
      declared = params["capabilities"];
      return done(json{{"protocolVersion", "2025-11-25"},
                       {"capabilities", json::object()},
                       {"serverInfo", {{"name", "fake"}, {"version", "1"}}}});
    });
    session.on_notification("notifications/roots/list_changed", [this](const json&) { roots_changed.set(); });
  }
  static Coro<json> done(json result) { co_return result; }
};

Coro<void> no_handlers_declare_nothing() {
  FakeServer server;
  corio::Task<void> serving = corio::create_task(server.session.run());
  StdioTransport client_side(server.h.from_server, server.h.to_server);
  Client client(client_side);
  co_await client.initialize();
  EXPECT_EQ(server.declared, json::object());
  EXPECT_EQ(co_await server.session.request("ping"), json::object()) << "ping is always answered";
  int code = 0;
  try {
    co_await server.session.request("sampling/createMessage", json::object());
  } catch (const RpcError& e) {
    code = e.code();
  }
  EXPECT_EQ(code, code::method_not_found);
  co_await client.close();
  server.h.to_server.close();
  co_await serving;
}

TEST(ClientRequests, WithoutHandlersNothingIsDeclared) { run_test(no_handlers_declare_nothing()); }

Coro<json> sample(const json& params, const RequestContext&) {
  json result = json::parse(R"({"role": "assistant", "content": {"type": "text"}, "model": "fake"})");
  result["content"]["text"] = "echo: " + params["messages"][0]["content"]["text"].get<std::string>();
  co_return result;
}

Coro<json> decline_or_accept(const json& params, const RequestContext&) {
  if (params.value("message", "") == "no") co_return json{{"action", "decline"}};
  co_return json{{"action", "accept"}, {"content", {{"b", false}}}};
}

Coro<void> handlers_serve_the_servers_requests() {
  FakeServer server;
  corio::Task<void> serving = corio::create_task(server.session.run());
  StdioTransport client_side(server.h.from_server, server.h.to_server);
  Client client(client_side);
  client.on_sampling(sample);
  client.on_elicitation(decline_or_accept, true);
  client.set_roots(json::parse(R"([{"uri": "file:///a", "name": "a"}])"));
  co_await client.initialize();
  EXPECT_EQ(server.declared, json::parse(R"({"sampling": {}, "elicitation": {"form": {}, "url": {}},
                                              "roots": {"listChanged": true}})"));
  Session& s = server.session;
  const json sampling = json::parse(R"({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                                         "maxTokens": 5})");
  const json sampled = co_await s.request("sampling/createMessage", sampling);
  EXPECT_EQ(sampled["content"]["text"], "echo: hi");

  const json schema = json::parse(R"({"type": "object", "properties": {
      "b": {"type": "boolean", "default": true},
      "s": {"type": "string", "enum": ["x", "y"], "default": "y"},
      "n": {"type": "number"}}})");
  const json yes = {{"message", "yes"}, {"requestedSchema", schema}};
  const json accepted = co_await s.request("elicitation/create", yes);
  EXPECT_EQ(accepted, json::parse(R"({"action": "accept", "content": {"b": false, "s": "y"}})"))
      << "the handler's value stays; a missing field with a default gets it; one without stays out";
  const json no = {{"message", "no"}, {"requestedSchema", schema}};
  const json declined = co_await s.request("elicitation/create", no);
  EXPECT_EQ(declined, json({{"action", "decline"}})) << "no content made up for a decline";

  const json roots = co_await s.request("roots/list");
  EXPECT_EQ(roots["roots"][0]["uri"], "file:///a");
  const json b = json::parse(R"([{"uri": "file:///b"}])");
  co_await client.update_roots(b);
  co_await corio::wait_for(server.roots_changed.wait(), 10s);
  const json changed = co_await s.request("roots/list");
  EXPECT_EQ(changed["roots"], b);
  co_await client.close();
  server.h.to_server.close();
  co_await serving;
}

TEST(ClientRequests, HandlersServeSamplingElicitationAndRoots) { run_test(handlers_serve_the_servers_requests()); }

Coro<json> accept(const json&, const RequestContext&) { co_return json{{"action", "accept"}}; }

Coro<json> refuse_without_a_list(const json&, const RequestContext&) {
  throw RpcError(-32042, "URL elicitation required", json{{"elicitations", json::array()}});
  co_return json();
}

Coro<void> complete(Session& s, json id) {
  const json params = {{"elicitationId", std::move(id)}};
  co_await s.notify("notifications/elicitation/complete", params);
}

// The spec: a client ignores a completion of an id it was not given, or
// of one completed already; and a -32042 that lists nothing usable is the
// plain RpcError it came as.
Coro<void> completions_only_for_ids_given() {
  FakeServer server;
  server.session.on_request("tools/call", refuse_without_a_list);
  corio::Task<void> serving = corio::create_task(server.session.run());
  StdioTransport client_side(server.h.from_server, server.h.to_server);
  Client client(client_side);
  std::vector<std::string> heard;
  client.on_elicitation(accept, true);
  client.on_elicitation_complete([&heard](const std::string& id) { heard.push_back(id); });
  co_await client.initialize();
  Session& s = server.session;
  co_await complete(s, "never-given");
  const json url = {{"mode", "url"}, {"message", "Go"}, {"url", "https://example.com"}, {"elicitationId", "e-1"}};
  co_await s.request("elicitation/create", url);
  co_await complete(s, 7);  // no string id: ignored
  co_await complete(s, "e-1");
  co_await complete(s, "e-1");
  co_await s.request("ping");  // the client has read everything before it
  EXPECT_EQ(heard, std::vector<std::string>{"e-1"});

  bool typed = false;
  int code = 0;
  try {
    co_await client.call_tool("anything");
  } catch (const corio::mcp::UrlElicitationRequiredError&) {
    typed = true;
  } catch (const RpcError& e) {
    code = e.code();
  }
  EXPECT_FALSE(typed);
  EXPECT_EQ(code, -32042);
  co_await client.close();
  server.h.to_server.close();
  co_await serving;
}

TEST(ClientRequests, ElicitationCompletionsOnlyForIdsGiven) { run_test(completions_only_for_ids_given()); }

}  // namespace
}  // namespace corio_mcp_test
