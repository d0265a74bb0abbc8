// Client against Server, in one process over real pipes: initialize, paged
// tool lists, calls with progress, protocol errors as RpcError, and a
// cancelled call reaching the server's tool as a cancellation.
#include "mcp/mcp_support.hpp"

namespace corio_mcp_test {
namespace {

using corio::mcp::Client;
using corio::mcp::Context;
using corio::mcp::RpcError;
using corio::mcp::Server;
using corio::mcp::ToolResult;

Coro<void> client_and_server() {
  Harness h;
  Server server("s", "3.1");
  server.page_size = 1;
  corio::Event started;
  bool slow_unwound = false;
  server.add_tool("count", "counts to n", json::parse(R"({"type": "object", "properties": {"n": {"type": "integer"}}})"),
                  [](const json& args, Context& ctx) -> Coro<ToolResult> {
                    const int n = args.value("n", 3);
                    for (int i = 1; i <= n; ++i) co_await ctx.report_progress(i, n);
                    co_return ToolResult::text(std::to_string(n));
                  });
  server.add_tool("slow", "", json{{"type", "object"}}, [&](const json&, Context&) -> Coro<ToolResult> {
    struct Flag {
      bool& b;
      ~Flag() { b = true; }
    } flag{slow_unwound};
    started.set();
    co_await corio::sleep(1h);
    co_return ToolResult::text("never");
  });
  corio::Task<void> serving = corio::create_task(server.run(h.transport));

  StdioTransport client_side(h.from_server, h.to_server);
  Client client(client_side);
  std::vector<double> progress;
  client.session().on_notification("notifications/progress", [&](const json& p) {
    progress.push_back(p["progress"].get<double>());
  });
  const json init = co_await client.initialize();
  EXPECT_EQ(init["protocolVersion"], "2025-11-25");
  EXPECT_EQ(init["serverInfo"]["version"], "3.1");
  const json tools = co_await client.list_tools();
  EXPECT_EQ(tools.size(), 2u) << "both pages";

  const json four = {{"n", 4}};
  const json counted = co_await client.call_tool("count", four, "p1");
  EXPECT_EQ(counted["content"][0]["text"], "4");
  EXPECT_EQ(progress, (std::vector<double>{1, 2, 3, 4})) << "progress came before the result";

  int code = 0;
  try {
    co_await client.call_tool("missing");
  } catch (const RpcError& e) {
    code = e.code();
  }
  EXPECT_EQ(code, corio::mcp::error_code::invalid_params);

  corio::Task<json> slow = corio::create_task(client.call_tool("slow"));
  co_await started.wait();
  slow.cancel();
  try {
    co_await slow;
  } catch (const corio::CancelledError&) {
    // As asked.
  }
  for (int i = 0; i < 100 && !slow_unwound; ++i) co_await corio::sleep(1ms);
  EXPECT_TRUE(slow_unwound) << "notifications/cancelled reached the tool";

  co_await client.close();
  h.to_server.close();
  co_await serving;
}

TEST(McpClient, TalksToTheServerWithProgressErrorsAndCancellation) { run_test(client_and_server()); }

// A Client dropped without close() (an exception between its calls): its
// reader, cancelled by the destructor, unwinds later without touching the
// freed client (ASan would see it).
Coro<void> dropped_without_close() {
  Harness h;
  Server server("s");
  corio::Task<void> serving = corio::create_task(server.run(h.transport));
  StdioTransport client_side(h.from_server, h.to_server);
  {
    Client client(client_side);
    co_await client.initialize();
  }
  co_await corio::sleep(10ms);  // the cancelled reader runs now
  h.to_server.close();
  co_await serving;
}

TEST(McpClient, DroppedWithoutCloseIsSafe) { run_test(dropped_without_close()); }

}  // namespace
}  // namespace corio_mcp_test
