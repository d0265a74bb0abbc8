// The cancellation sweep over the MCP requests that go the other way: a
// tool that, while it runs, logs to the client and asks it back
// (Context::info, list_roots, sample), over Streamable HTTP, with the
// client's list_tools before the call. The client's call is cancelled at
// every point, while the server's tool waits for the client's answer too:
// the cancel reaches the tool (notifications/cancelled), which unwinds; the
// next call in the same session gets its own answer, and no tool is left
// running on the server.
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include <corio/mcp.hpp>
#include <corio/sleep.hpp>

#include "testing/sim_mcp_support.hpp"
#include "testing/sim_support.hpp"

using namespace std::chrono_literals;
using corio::Coro;
using corio::mcp::json;
using corio::testing::Simulation;
using corio::testing::SweepRun;
using sim_support::expect_clean;
using sim_support::require;

namespace {

// Counts a tool in for as long as it runs, unwinding included.
struct Running {
  explicit Running(int& n) : n_(n) { ++n_; }
  ~Running() { --n_; }
  int& n_;
};

Coro<corio::mcp::ToolResult> ask_back(std::shared_ptr<int> running, corio::mcp::Context& ctx) {
  Running counted(*running);
  co_await ctx.info("asking the client");
  const std::vector<corio::mcp::Root> roots = co_await ctx.list_roots();
  const corio::mcp::SamplingResult answer = co_await ctx.sample("ping?");
  co_return corio::mcp::ToolResult::text(answer.text() + " " + std::to_string(roots.size()));
}

Coro<void> asking_server(std::shared_ptr<int> running) {
  corio::mcp::Server server("asking", "1.0.0");
  server.add_tool(
      "ask", "Asks the client back", json{{"type", "object"}},
      [running](const json&, corio::mcp::Context& ctx) { return ask_back(running, ctx); });
  co_await sim_support::serve_mcp(server, 9000);
}

// The client's model answers after a while, so that the tool waits for it.
Coro<json> slow_pong(const json&, const corio::mcp::RequestContext&) {
  co_await corio::sleep(5ms);
  co_return json::parse(
      R"({"role": "assistant", "content": {"type": "text", "text": "pong"}, "model": "m"})");
}

struct Asker {
  corio::mcp::StreamableHttpClient transport{"http://10.0.0.1:9000/mcp"};
  corio::mcp::Client client{transport};
  Asker() {
    client.on_sampling(slow_pong);
    client.set_roots(json::parse(R"([{"uri": "file:///a", "name": "a"}])"));
  }
};

Coro<void> open_session(std::shared_ptr<Asker> a) { (void)co_await a->client.initialize(); }

Coro<void> list_and_ask(std::shared_ptr<Asker> a) {
  const json tools = co_await a->client.list_tools();
  require(tools.size() == 1, "list_tools: " + tools.dump());
  const json result = co_await a->client.call_tool("ask");
  const std::string text = result["content"][0]["text"].get<std::string>();
  require(text == "pong 1", "the tool answered " + text);
}

TEST(SweepMcpRequests, ToolAsksTheClientBack) {
  expect_clean(corio::testing::cancellation_sweep([](Simulation& sim) {
                 auto running = std::make_shared<int>(0);
                 sim.host("tools").spawn(asking_server(running));
                 auto asker = std::make_shared<Asker>();
                 auto& host = sim.host("client");
                 host.spawn(open_session(asker));
                 auto after = [asker, running]() -> Coro<void> {
                   co_await list_and_ask(asker);
                   co_await corio::sleep(100ms);  // a tool the cancel cut off unwinds
                   require(*running == 0, std::to_string(*running) + " tools still running");
                   co_await asker->client.close();
                   co_await asker->transport.close();
                 };
                 return SweepRun{&host, [asker] { return list_and_ask(asker); }, after};
               }),
               4);
}

}  // namespace
