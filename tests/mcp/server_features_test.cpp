// The MCP server's features beyond tools and reads, over real pipes with a
// scripted client: sampling, elicitation (form and URL modes, the answer
// checked against the schema), roots and their change notification,
// completion/complete, resource subscriptions, list_changed notifications
// when the lists change at run time, prompt messages of every content
// type, output schemas, icons, and methods of the application's own.
#include <optional>

#include <corio/mcp/content.hpp>

#include "mcp/mcp_support.hpp"

namespace corio_mcp_test {
namespace {

using corio::mcp::CompletionRequest;
using corio::mcp::Context;
using corio::mcp::Server;
using corio::mcp::Tool;
using corio::mcp::ToolResult;
namespace content = corio::mcp::content;

// A server on a harness, and a client that declares capabilities and
// answers what the server asks.
struct Served {
  Harness h;
  Server server{"s"};
  ScriptedClient c{h};
  std::optional<corio::Task<void>> serving;

  void serve() {
    if (!serving) serving = corio::create_task(server.run(h.transport));
  }
  // Serves, and initializes with these capabilities: the answer.
  Coro<json> start(std::string capabilities = "{}") {
    serve();
    co_return co_await c.initialize("2025-11-25", std::move(capabilities));
  }
  Coro<void> stop() {
    h.to_server.close();
    co_await *serving;
  }
};

Coro<ToolResult> ask_llm(const json& args, Context& ctx) {
  const corio::mcp::SamplingResult r = co_await ctx.sample(args.value("prompt", ""), 50);
  co_return ToolResult::text(r.model + ": " + r.text());
}

Coro<ToolResult> ask_user(const json&, Context& ctx) {
  const json schema = json::parse(R"({"type": "object", "properties": {
      "age": {"type": "integer", "default": 30}}, "required": ["age"]})");
  const corio::mcp::ElicitResult r = co_await ctx.elicit("How old?", schema);
  co_return ToolResult::text(r.action + " " + r.content.dump());
}

Coro<ToolResult> send_to_url(const json&, Context& ctx) {
  const corio::mcp::ElicitResult r = co_await ctx.elicit_url("Sign in", "https://example.com/login", "e-1");
  co_return ToolResult::text(r.action);
}

Coro<ToolResult> roots(const json&, Context& ctx) {
  const std::vector<corio::mcp::Root> rs = co_await ctx.list_roots();
  std::string text;
  for (const auto& r : rs) text += r.uri + "=" + r.name + ";";
  co_return ToolResult::text(text);
}

void add_asking_tools(Server& s) {
  s.add_tool("ask_llm", "", json{{"type", "object"}}, ask_llm);
  s.add_tool("ask_user", "", json{{"type", "object"}}, ask_user);
  s.add_tool("send_to_url", "", json{{"type", "object"}}, send_to_url);
  s.add_tool("roots", "", json{{"type", "object"}}, roots);
}

Coro<void> sampling_body() {
  Served s;
  add_asking_tools(s.server);
  co_await s.start(R"({"sampling": {}})");
  s.c.request(7, "tools/call", R"({"name": "ask_llm", "arguments": {"prompt": "hi"}})");
  const json asked = co_await s.h.next();
  EXPECT_EQ(asked["method"], "sampling/createMessage");
  EXPECT_EQ(asked["params"]["maxTokens"], 50);
  EXPECT_EQ(asked["params"]["messages"][0]["content"]["text"], "hi");
  s.c.answer(asked, R"({"role": "assistant", "content": {"type": "text", "text": "hello"},
                      "model": "m1", "stopReason": "endTurn"})");
  const json result = co_await s.h.next();
  EXPECT_EQ(result["id"], 7);
  EXPECT_EQ(result["result"]["content"][0]["text"], "m1: hello");
  // The client's error answer reaches the tool, whose failure the model sees.
  s.c.request(8, "tools/call", R"({"name": "ask_llm", "arguments": {}})");
  const json again = co_await s.h.next();
  s.h.send(json{{"jsonrpc", "2.0"}, {"id", again["id"]}, {"error", {{"code", -1}, {"message", "user said no"}}}}
             .dump());
  const json refused = co_await s.h.next();
  EXPECT_EQ(refused["error"]["code"], -1) << "an RpcError from the client is the call's protocol error";
  co_await s.stop();
}

TEST(McpServerFeatures, SamplingAsksTheClientDuringACall) { run_test(sampling_body()); }

Coro<void> no_capability_body() {
  Served s;
  add_asking_tools(s.server);
  co_await s.start("{}");
  const std::vector<std::string> tools = {"ask_llm", "ask_user", "roots", "send_to_url"};
  for (const std::string& tool : tools) {
    const std::string params = json{{"name", tool}, {"arguments", json::object()}}.dump();
    const json r = co_await s.c.call("tools/call", params);
    EXPECT_TRUE(r["result"]["isError"].get<bool>()) << tool << ": nothing is sent to a client that cannot answer";
    EXPECT_NE(r["result"]["content"][0]["text"].get<std::string>().find("does not support"), std::string::npos);
  }
  co_await s.stop();
}

TEST(McpServerFeatures, AClientIsAskedNothingItDidNotDeclare) { run_test(no_capability_body()); }

Coro<void> elicitation_body() {
  Served s;
  add_asking_tools(s.server);
  co_await s.start(R"({"elicitation": {"form": {}, "url": {}}})");
  s.c.request(2, "tools/call", R"({"name": "ask_user"})");
  json asked = co_await s.h.next();
  EXPECT_EQ(asked["method"], "elicitation/create");
  EXPECT_EQ(asked["params"]["mode"], "form");
  EXPECT_EQ(asked["params"]["requestedSchema"]["properties"]["age"]["default"], 30) << "SEP-1034 defaults kept";
  s.c.answer(asked, R"({"action": "accept", "content": {"age": 41}})");
  EXPECT_EQ((co_await s.h.next())["result"]["content"][0]["text"], R"(accept {"age":41})");
  // An accepted answer that does not match the schema is the client's error.
  s.c.request(3, "tools/call", R"({"name": "ask_user"})");
  asked = co_await s.h.next();
  s.c.answer(asked, R"({"action": "accept", "content": {"age": "old"}})");
  EXPECT_EQ((co_await s.h.next())["error"]["code"], code::invalid_params);
  s.c.request(4, "tools/call", R"({"name": "ask_user"})");
  asked = co_await s.h.next();
  s.c.answer(asked, R"({"action": "decline"})");
  EXPECT_EQ((co_await s.h.next())["result"]["content"][0]["text"], "decline {}");
  s.c.request(5, "tools/call", R"({"name": "send_to_url"})");
  asked = co_await s.h.next();
  EXPECT_EQ(asked["params"]["mode"], "url");
  EXPECT_EQ(asked["params"]["url"], "https://example.com/login");
  EXPECT_EQ(asked["params"]["elicitationId"], "e-1");
  s.c.answer(asked, R"({"action": "accept"})");
  EXPECT_EQ((co_await s.h.next())["result"]["content"][0]["text"], "accept");
  co_await s.stop();
}

TEST(McpServerFeatures, ElicitationInFormAndUrlModes) { run_test(elicitation_body()); }

Coro<void> roots_body() {
  Served s;
  add_asking_tools(s.server);
  int changes = 0;
  s.server.on_roots_list_changed([&changes] { ++changes; });
  co_await s.start(R"({"roots": {"listChanged": true}})");
  s.c.request(2, "tools/call", R"({"name": "roots"})");
  const json asked = co_await s.h.next();
  EXPECT_EQ(asked["method"], "roots/list");
  s.c.answer(asked, R"({"roots": [{"uri": "file:///a", "name": "A"}, {"uri": "file:///b"}, {"name": "no uri"}]})");
  EXPECT_EQ((co_await s.h.next())["result"]["content"][0]["text"], "file:///a=A;file:///b=;");
  s.h.send(R"({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})");
  EXPECT_EQ((co_await s.c.call("ping"))["result"], json::object());
  EXPECT_EQ(changes, 1);
  co_await s.stop();
}

TEST(McpServerFeatures, RootsAreAskedForAndTheirChangeHeard) { run_test(roots_body()); }

corio::mcp::ResourceContents text_contents(std::string uri, std::string text) {
  return {.uri = std::move(uri), .mime_type = "text/plain", .data = std::move(text)};
}

void add_catalogue(Server& s) {
  s.add_prompt({.name = "greet", .arguments = {{"language", "", true}}},
               [](const json&) -> Coro<std::vector<corio::mcp::PromptMessage>> {
                 co_return std::vector<corio::mcp::PromptMessage>{
                     {.role = "user", .text = "plain"},
                     corio::mcp::PromptMessage::with("user", content::image("\x89PNG", "image/png")),
                     corio::mcp::PromptMessage::with("user", content::audio("RIFF", "audio/wav")),
                     corio::mcp::PromptMessage::with("assistant", content::resource(text_contents("a://x", "x"))),
                     corio::mcp::PromptMessage::with("user", content::resource_link({.uri = "a://y", .name = "y"}))};
               });
  s.add_resource({.uri = "a://x", .name = "x", .icons = json::parse(R"([{"src": "https://i/x.png"}])")},
                 [](const std::string& uri) -> Coro<std::vector<corio::mcp::ResourceContents>> {
                   co_return std::vector<corio::mcp::ResourceContents>{text_contents(uri, "x")};
                 });
  s.add_resource_template({.uri_template = "a://{region}/{city}", .name = "city"},
                          [](const std::string& uri, const std::map<std::string, std::string>&)
                              -> Coro<std::vector<corio::mcp::ResourceContents>> {
                            co_return std::vector<corio::mcp::ResourceContents>{text_contents(uri, "c")};
                          });
}

Coro<void> prompt_content_body() {
  Served s;
  add_catalogue(s.server);
  co_await s.start();
  const json m = (co_await s.c.call("prompts/get", R"({"name": "greet", "arguments": {"language": "en"}})"))
                     ["result"]["messages"];
  CO_ASSERT(m.size() == 5u);
  EXPECT_EQ(m[0]["content"], json::parse(R"({"type": "text", "text": "plain"})"));
  EXPECT_EQ(m[1]["content"], json::parse(R"({"type": "image", "data": "iVBORw==", "mimeType": "image/png"})"));
  EXPECT_EQ(m[2]["content"]["type"], "audio");
  EXPECT_EQ(m[3]["role"], "assistant");
  EXPECT_EQ(m[3]["content"], json::parse(R"({"type": "resource",
      "resource": {"uri": "a://x", "mimeType": "text/plain", "text": "x"}})"));
  EXPECT_EQ(m[4]["content"], json::parse(R"({"type": "resource_link", "uri": "a://y", "name": "y"})"));
  const json listed = (co_await s.c.call("resources/list"))["result"]["resources"];
  EXPECT_EQ(listed[0]["icons"][0]["src"], "https://i/x.png");
  co_await s.stop();
}

TEST(McpServerFeatures, PromptMessagesCarryEveryContentType) { run_test(prompt_content_body()); }

Coro<corio::mcp::Completion> complete(const CompletionRequest& req) {
  if (req.argument == "many") {
    corio::mcp::Completion c;
    c.values.assign(150, "v");
    c.total = 150;
    co_return c;
  }
  std::string seen = req.ref_type + "|" + req.ref + "|" + req.argument;
  for (const auto& [k, v] : req.context) seen += "|" + k + "=" + v;
  co_return corio::mcp::Completion::matching(req.value, {"paris", "park", seen});
}

Coro<void> completion_body() {
  Served s;
  add_catalogue(s.server);
  s.server.add_prompt({.name = "p", .arguments = {{"many"}}}, [](const json&) -> Coro<std::vector<corio::mcp::PromptMessage>> {
    co_return std::vector<corio::mcp::PromptMessage>{};
  });
  s.server.on_completion(complete);
  const json init = co_await s.start();
  EXPECT_TRUE(init["result"]["capabilities"].contains("completions"));
  json r = co_await s.c.call("completion/complete",
                           R"({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "language", "value": "par"}})");
  EXPECT_EQ(r["result"]["completion"], json::parse(R"({"values": ["paris", "park"], "hasMore": false})"));
  r = co_await s.c.call("completion/complete", R"({"ref": {"type": "ref/resource", "uri": "a://{region}/{city}"},
      "argument": {"name": "city", "value": ""}, "context": {"arguments": {"region": "eu"}}})");
  EXPECT_EQ(r["result"]["completion"]["values"].back(), "ref/resource|a://{region}/{city}|city|region=eu");
  r = co_await s.c.call("completion/complete",
                      R"({"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "many", "value": ""}})");
  EXPECT_EQ(r["result"]["completion"]["values"].size(), 100u) << "the spec's limit";
  EXPECT_EQ(r["result"]["completion"]["hasMore"], true);
  EXPECT_EQ(r["result"]["completion"]["total"], 150);
  // (A named vector: g++ 12 cannot range over a braced list in a coroutine.)
  const std::vector<std::string> bad_requests = {
      R"({"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "x", "value": ""}})",
      R"({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "x", "value": ""}})",
      R"({"ref": {"type": "ref/resource", "uri": "a://{region}/{city}"}, "argument": {"name": "x", "value": ""}})",
      R"({"ref": {"type": "ref/other", "name": "greet"}, "argument": {"name": "language", "value": ""}})"};
  for (const std::string& bad : bad_requests) {
    EXPECT_EQ((co_await s.c.call("completion/complete", bad))["error"]["code"], code::invalid_params) << bad;
  }
  co_await s.stop();
}

TEST(McpServerFeatures, CompletionOfPromptArgumentsAndTemplateVariables) { run_test(completion_body()); }

Coro<void> subscriptions_body() {
  Served s;
  add_catalogue(s.server);
  const json init = co_await s.start();
  EXPECT_EQ(init["result"]["capabilities"]["resources"]["subscribe"], true);
  s.server.notify_resource_updated("a://x");  // not subscribed yet: nothing
  EXPECT_EQ((co_await s.c.call("resources/subscribe", R"({"uri": "a://x"})"))["result"], json::object());
  s.server.notify_resource_updated("a://other");
  s.server.notify_resource_updated("a://x");
  json n = co_await s.h.next();
  EXPECT_EQ(n["method"], "notifications/resources/updated");
  EXPECT_EQ(n["params"]["uri"], "a://x");
  EXPECT_EQ((co_await s.c.call("resources/unsubscribe", R"({"uri": "a://x"})"))["result"], json::object());
  s.server.notify_resource_updated("a://x");
  // Lists changing at run time: each change is said once, in order.
  s.server.add_tool("late", "", json{{"type", "object"}}, [](const json&, Context&) -> Coro<ToolResult> {
    co_return ToolResult::text("late");
  });
  EXPECT_TRUE(s.server.remove_resource("a://x"));
  EXPECT_FALSE(s.server.remove_resource("a://x"));
  EXPECT_TRUE(s.server.remove_prompt("greet"));
  EXPECT_EQ((co_await s.h.next())["method"], "notifications/tools/list_changed") << "no update after unsubscribing";
  EXPECT_EQ((co_await s.h.next())["method"], "notifications/resources/list_changed");
  EXPECT_EQ((co_await s.h.next())["method"], "notifications/prompts/list_changed");
  EXPECT_EQ((co_await s.c.call("tools/list"))["result"]["tools"][0]["name"], "late");
  EXPECT_EQ((co_await s.c.call("resources/list"))["result"]["resources"], json::array());
  EXPECT_TRUE(s.server.remove_tool("late"));
  EXPECT_EQ((co_await s.h.next())["method"], "notifications/tools/list_changed");
  co_await s.stop();
}

TEST(McpServerFeatures, SubscriptionsAndListChangesAreNotified) { run_test(subscriptions_body()); }

Coro<void> output_schema_body() {
  Served s;
  Tool t{.name = "typed",
         .title = "Typed",
         .output_schema = json::parse(R"({"type": "object", "properties": {"n": {"type": "integer"}},
                                          "required": ["n"]})"),
         .annotations = json::parse(R"({"readOnlyHint": true})"),
         .icons = json::parse(R"([{"src": "data:image/png;base64,AA==", "mimeType": "image/png"}])")};
  s.server.add_tool(t, [](const json& args, Context&) -> Coro<ToolResult> {
    if (args.contains("plain")) co_return ToolResult::text("no structure");
    co_return ToolResult::structured(args.value("value", json()));
  });
  co_await s.start();
  const json listed = (co_await s.c.call("tools/list"))["result"]["tools"][0];
  EXPECT_EQ(listed["title"], "Typed");
  EXPECT_EQ(listed["annotations"]["readOnlyHint"], true);
  EXPECT_EQ(listed["icons"][0]["mimeType"], "image/png");
  EXPECT_TRUE(listed.contains("outputSchema"));
  json r = co_await s.c.call("tools/call", R"({"name": "typed", "arguments": {"value": {"n": 3}}})");
  EXPECT_EQ(r["result"]["structuredContent"]["n"], 3);
  EXPECT_FALSE(r["result"]["isError"].get<bool>());
  r = co_await s.c.call("tools/call", R"({"name": "typed", "arguments": {"value": {"n": "three"}}})");
  EXPECT_TRUE(r["result"]["isError"].get<bool>());
  EXPECT_NE(r["result"]["content"][0]["text"].get<std::string>().find("/n"), std::string::npos)
      << r["result"].dump();
  r = co_await s.c.call("tools/call", R"({"name": "typed", "arguments": {"plain": true}})");
  EXPECT_TRUE(r["result"]["isError"].get<bool>()) << "no structuredContent for a tool with an outputSchema";
  co_await s.stop();
}

TEST(McpServerFeatures, StructuredContentIsCheckedAgainstTheOutputSchema) { run_test(output_schema_body()); }

Coro<void> custom_methods_body() {
  Served s;
  std::string heard;
  s.server.add_method("acme/echo", [](const json& params, const RequestContext&) -> Coro<json> {
    co_return json::object({{"echo", params}});
  });
  s.server.add_notification("acme/poke", [&heard](const json& params) { heard = params.dump(); });
  s.serve();
  EXPECT_EQ((co_await s.c.call("acme/echo"))["error"]["code"], code::invalid_request) << "initialize comes first";
  co_await s.start();
  EXPECT_EQ((co_await s.c.call("acme/echo", R"({"a": 1})"))["result"]["echo"]["a"], 1);
  s.h.send(R"({"jsonrpc": "2.0", "method": "acme/poke", "params": {"b": 2}})");
  EXPECT_EQ((co_await s.c.call("ping"))["result"], json::object());
  EXPECT_EQ(heard, R"({"b":2})");
  co_await s.stop();
}

TEST(McpServerFeatures, MethodsOfTheApplicationsOwn) { run_test(custom_methods_body()); }

TEST(McpContent, Base64RoundTripsAndRefusesWhatIsNotBase64) {
  const std::vector<std::string> samples = {"", "f", "fo", "foo", "foob", "fooba", "foobar", {"\0\xff\x80", 3}};
  for (const std::string& s : samples) {
    EXPECT_EQ(corio::mcp::base64_decode(corio::mcp::base64_encode(s)), s);
  }
  EXPECT_EQ(corio::mcp::base64_encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(corio::mcp::base64_encode("fo"), "Zm8=");
  EXPECT_EQ(corio::mcp::base64_decode("Zm9vYg=="), "foob");
  for (const char* bad : {"Zm9", "Zm9v!mFy", "Z===", "Zm=v"}) {
    EXPECT_EQ(corio::mcp::base64_decode(bad), std::nullopt) << bad;
  }
}

}  // namespace
}  // namespace corio_mcp_test
