// The MCP server over real pipes, spoken to as a client would: version
// negotiation and batches, tools (listing with pagination, calls, invalid
// arguments, failures, progress, cancellation, overlap), logging levels,
// resources and templates, prompts, and the methods it does not have.
#include "mcp/mcp_support.hpp"

namespace corio_mcp_test {
namespace {

using corio::mcp::Context;
using corio::mcp::Server;
using corio::mcp::Tool;
using corio::mcp::ToolResult;

using Client = ScriptedClient;

json echo_schema() {
  return json::parse(R"({"type": "object", "properties": {"text": {"type": "string", "maxLength": 10}},
                         "required": ["text"]})");
}

// The server every test talks to, with one of each kind of thing.
void add_basics(Server& s) {
  s.add_tool("echo", "Says it back", echo_schema(), [](const json& args, Context&) -> Coro<ToolResult> {
               co_return ToolResult::text(args["text"].get<std::string>());
             });
  s.add_tool("broken", "", json{{"type", "object"}}, [](const json&, Context&) -> Coro<ToolResult> {
    throw std::runtime_error("disk on fire");
    co_return ToolResult::text("unreachable");
  });
  s.add_tool("sum", "", json{{"type", "object"}}, [](const json& args, Context&) -> Coro<ToolResult> {
    co_return ToolResult::structured({{"sum", args.value("a", 0) + args.value("b", 0)}});
  });
}

Coro<void> negotiation() {
  Harness h;
  Server server("test-server", "2.0", "be nice");
  add_basics(server);
  corio::Task<void> serving = corio::create_task(server.run(h.transport));
  Client c{h};
  json r = co_await c.initialize("2025-11-25");
  EXPECT_EQ(r["result"]["protocolVersion"], "2025-11-25");
  EXPECT_EQ(r["result"]["serverInfo"]["name"], "test-server");
  EXPECT_EQ(r["result"]["serverInfo"]["version"], "2.0");
  EXPECT_EQ(r["result"]["instructions"], "be nice");
  EXPECT_TRUE(r["result"]["capabilities"].contains("tools"));
  EXPECT_FALSE(r["result"]["capabilities"].contains("prompts")) << "none registered";
  // A batch under 2025-11-25: one -32600.
  h.send(R"([{"jsonrpc": "2.0", "id": 50, "method": "ping"}])");
  EXPECT_EQ((co_await h.next())["error"]["code"], code::invalid_request);
  // The stateless 2026-07-28 revision's server/discover: -32601, as the issue
  // asks while that revision is not offered.
  EXPECT_EQ((co_await c.call("server/discover"))["error"]["code"], code::method_not_found);
  EXPECT_EQ((co_await c.call("ping"))["result"], json::object());
  h.to_server.close();
  co_await serving;
}

TEST(McpServer, InitializeNegotiatesAndRejectsBatches) { run_test(negotiation()); }

Coro<void> older_revisions(std::string asked, std::string answered, bool batches) {
  Harness h;
  Server server("s");
  corio::Task<void> serving = corio::create_task(server.run(h.transport));
  Client c{h};
  EXPECT_EQ((co_await c.initialize(asked))["result"]["protocolVersion"], answered);
  h.send(R"([{"jsonrpc": "2.0", "id": 60, "method": "ping"}])");
  const json reply = co_await h.next();
  EXPECT_EQ(reply.is_array(), batches) << asked << ": " << reply.dump();
  h.to_server.close();
  co_await serving;
}

TEST(McpServer, OlderRevisionsAreEchoedAndTheirBatchesAnswered) {
  run_test(older_revisions("2025-03-26", "2025-03-26", true));
  run_test(older_revisions("2024-11-05", "2024-11-05", true));
  run_test(older_revisions("2025-06-18", "2025-06-18", false));
  run_test(older_revisions("1999-01-01", "2025-11-25", false));
}

Coro<void> tools() {
  Harness h;
  Server server("s");
  server.page_size = 2;
  add_basics(server);
  corio::Task<void> serving = corio::create_task(server.run(h.transport));
  Client c{h};
  co_await c.initialize();
  json page1 = co_await c.call("tools/list");
  EXPECT_EQ(page1["result"]["tools"].size(), 2u);
  EXPECT_EQ(page1["result"]["tools"][0]["name"], "echo");
  EXPECT_EQ(page1["result"]["tools"][0]["inputSchema"], echo_schema());
  const json cursor = page1["result"]["nextCursor"];
  CO_ASSERT(cursor.is_string());
  const std::string next_page = json{{"cursor", cursor}}.dump();
  json page2 = co_await c.call("tools/list", next_page);
  EXPECT_EQ(page2["result"]["tools"].size(), 1u);
  EXPECT_FALSE(page2["result"].contains("nextCursor"));
  EXPECT_EQ((co_await c.call("tools/list", R"({"cursor": "bogus"})"))["error"]["code"], code::invalid_params);

  json ok = co_await c.call("tools/call", R"({"name": "echo", "arguments": {"text": "hi"}})");
  EXPECT_EQ(ok["result"]["content"][0]["text"], "hi");
  EXPECT_EQ(ok["result"]["isError"], false);
  json invalid = co_await c.call("tools/call", R"({"name": "echo", "arguments": {"text": 5}})");
  EXPECT_EQ(invalid["result"]["isError"], true) << "a tool error the model can fix";
  EXPECT_NE(invalid["result"]["content"][0]["text"].get<std::string>().find("/text"), std::string::npos);
  json missing = co_await c.call("tools/call", R"({"name": "echo"})");
  EXPECT_EQ(missing["result"]["isError"], true);
  json broken = co_await c.call("tools/call", R"({"name": "broken"})");
  EXPECT_EQ(broken["result"]["isError"], true);
  EXPECT_NE(broken["result"]["content"][0]["text"].get<std::string>().find("disk on fire"), std::string::npos);
  json unknown = co_await c.call("tools/call", R"({"name": "nope"})");
  EXPECT_EQ(unknown["error"]["code"], code::invalid_params);
  json sum = co_await c.call("tools/call", R"({"name": "sum", "arguments": {"a": 2, "b": 3}})");
  EXPECT_EQ(sum["result"]["structuredContent"]["sum"], 5);
  EXPECT_EQ(json::parse(sum["result"]["content"][0]["text"].get<std::string>())["sum"], 5);
  h.to_server.close();
  co_await serving;
}

TEST(McpServer, ToolsListPagesAndCallsReportErrorsTheRightWay) { run_test(tools()); }

// Progress and log notifications come before the call's result; logging
// below the level the client set is not sent.
Coro<void> progress_and_logging() {
  Harness h;
  Server server("s");
  server.add_tool("work", "", json{{"type", "object"}}, [](const json&, Context& ctx) -> Coro<ToolResult> {
    for (int i = 1; i <= 3; ++i) co_await ctx.report_progress(i, 3, "step " + std::to_string(i));
    co_await ctx.info("quiet");
    co_await ctx.warning("loud");
    co_return ToolResult::text("done");
  });
  corio::Task<void> serving = corio::create_task(server.run(h.transport));
  Client c{h};
  co_await c.initialize();
  EXPECT_EQ((co_await c.call("logging/setLevel", R"({"level": "warning"})"))["result"], json::object());
  EXPECT_EQ((co_await c.call("logging/setLevel", R"({"level": "loud"})"))["error"]["code"], code::invalid_params);
  h.send(json{{"jsonrpc", "2.0"}, {"id", 100}, {"method", "tools/call"},
              {"params", {{"name", "work"}, {"_meta", {{"progressToken", "tok"}}}}}}.dump());
  for (int i = 1; i <= 3; ++i) {
    json p = co_await h.next();
    EXPECT_EQ(p["method"], "notifications/progress");
    EXPECT_EQ(p["params"]["progressToken"], "tok");
    EXPECT_EQ(p["params"]["progress"], i);
    EXPECT_EQ(p["params"]["total"], 3);
  }
  json log = co_await h.next();
  EXPECT_EQ(log["method"], "notifications/message");
  EXPECT_EQ(log["params"]["level"], "warning");
  EXPECT_EQ(log["params"]["data"], "loud");
  EXPECT_EQ((co_await h.next())["id"], 100);
  h.to_server.close();
  co_await serving;
}

TEST(McpServer, ProgressAndLogNotificationsPrecedeTheResult) { run_test(progress_and_logging()); }

// Two calls overlap ("a" finishes only after "b" ran); a third, cancelled,
// stops at its await and gets no answer.
Coro<void> overlap_and_cancel() {
  Harness h;
  Server server("s");
  corio::Event b_ran;
  bool c_unwound = false;
  server.add_tool("a", "", json{{"type", "object"}}, [&](const json&, Context&) -> Coro<ToolResult> {
    co_await b_ran.wait();
    co_return ToolResult::text("a");
  });
  server.add_tool("b", "", json{{"type", "object"}}, [&](const json&, Context&) -> Coro<ToolResult> {
    b_ran.set();
    co_return ToolResult::text("b");
  });
  server.add_tool("c", "", json{{"type", "object"}}, [&](const json&, Context&) -> Coro<ToolResult> {
    struct Flag {
      bool& b;
      ~Flag() { b = true; }
    } flag{c_unwound};
    co_await corio::sleep(1h);
    co_return ToolResult::text("c");
  });
  corio::Task<void> serving = corio::create_task(server.run(h.transport));
  Client c{h};
  co_await c.initialize();
  h.send(R"({"jsonrpc": "2.0", "id": "c", "method": "tools/call", "params": {"name": "c"}})");
  h.send(R"({"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": {"name": "a"}})");
  h.send(R"({"jsonrpc": "2.0", "id": "b", "method": "tools/call", "params": {"name": "b"}})");
  EXPECT_EQ((co_await h.next())["id"], "b");
  EXPECT_EQ((co_await h.next())["id"], "a");
  h.send(R"({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "c"}})");
  EXPECT_EQ((co_await c.call("ping"))["result"], json::object()) << "and nothing for c";
  EXPECT_TRUE(c_unwound);
  h.to_server.close();
  co_await serving;
}

TEST(McpServer, CallsOverlapAndACancelledOneStops) { run_test(overlap_and_cancel()); }

Coro<void> resources_and_prompts() {
  Harness h;
  Server server("s");
  server.add_resource({"file:///motd", "motd", "the message of the day", "text/plain", "MOTD"},
                      [](const std::string& uri) -> Coro<std::vector<corio::mcp::ResourceContents>> {
                        co_return std::vector<corio::mcp::ResourceContents>{{uri, "text/plain", "hello"}};
                      });
  server.add_resource_template(
      {"news://{date}/headlines", "news", "headlines of a day", "", "News"},
      [](const std::string& uri, const std::map<std::string, std::string>& vars)
          -> Coro<std::vector<corio::mcp::ResourceContents>> {
        co_return std::vector<corio::mcp::ResourceContents>{{uri, "", "\x01\x02" + vars.at("date"), true}};
      });
  server.add_prompt({"brief", "a brief", {{"day", "which day", true}}, "Brief"},
                    [](const json& args) -> Coro<std::vector<corio::mcp::PromptMessage>> {
                      co_return std::vector<corio::mcp::PromptMessage>{
                          {"user", "Summarise " + args["day"].get<std::string>()}};
                    });
  corio::Task<void> serving = corio::create_task(server.run(h.transport));
  Client c{h};
  json caps = (co_await c.initialize())["result"]["capabilities"];
  EXPECT_TRUE(caps.contains("resources"));
  EXPECT_TRUE(caps.contains("prompts"));
  EXPECT_EQ((co_await c.call("resources/list"))["result"]["resources"][0]["uri"], "file:///motd");
  EXPECT_EQ((co_await c.call("resources/templates/list"))["result"]["resourceTemplates"][0]["uriTemplate"],
            "news://{date}/headlines");
  json motd = co_await c.call("resources/read", R"({"uri": "file:///motd"})");
  EXPECT_EQ(motd["result"]["contents"][0]["text"], "hello");
  json news = co_await c.call("resources/read", R"({"uri": "news://2026-11-29/headlines"})");
  EXPECT_EQ(news["result"]["contents"][0]["blob"], "AQIyMDI2LTExLTI5") << "base64 of \\1\\2 + the date";
  json none = co_await c.call("resources/read", R"({"uri": "news:///headlines"})");
  EXPECT_EQ(none["error"]["code"], -32002);
  json brief = co_await c.call("prompts/get", R"({"name": "brief", "arguments": {"day": "today"}})");
  EXPECT_EQ(brief["result"]["messages"][0]["content"]["text"], "Summarise today");
  EXPECT_EQ((co_await c.call("prompts/get", R"({"name": "brief"})"))["error"]["code"], code::invalid_params);
  EXPECT_EQ((co_await c.call("prompts/list"))["result"]["prompts"][0]["arguments"][0]["required"], true);
  h.to_server.close();
  co_await serving;
}

TEST(McpServer, ResourcesTemplatesAndPrompts) { run_test(resources_and_prompts()); }

}  // namespace
}  // namespace corio_mcp_test
