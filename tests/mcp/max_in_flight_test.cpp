// A server session at max_in_flight still takes the client's answers: a
// tool call holding the session's only slot asks the client (sampling),
// and the answer must reach it, over stdio and over Streamable HTTP.
// Before, a session at the bound read nothing more (stdio: the reader
// waited before reading; HTTP: the answer's POST went to an inbox nobody
// read), so the call and the session waited for each other for ever.
// Virtual time: a deadlock fails the call's wait_for at once.
#include <corio/mcp/streamable_http_client.hpp>

#include "common/support.hpp"
#include "mcp/http_support.hpp"

namespace corio_mcp_test {
namespace {

using corio::mcp::Client;
using corio::mcp::Context;
using corio::mcp::ToolResult;

Coro<ToolResult> ask(Context& ctx) {
  const corio::mcp::SamplingResult r = co_await ctx.sample("ping?");
  co_return ToolResult::text(r.text());
}

Coro<json> answer_pong(const json&, const RequestContext&) {
  co_return json::parse(R"({"role": "assistant", "content": {"type": "text", "text": "pong"}, "model": "m"})");
}

// One slot, taken by the call that asks.
void serve_ask(corio::mcp::Server& server) {
  server.max_in_flight = 1;
  server.add_tool("ask", "", json{{"type", "object"}}, [](const json&, Context& ctx) { return ask(ctx); });
}

// Whether the call got its answer.
Coro<bool> call_ask(corio::mcp::Transport& transport) {
  Client client(transport);
  client.on_sampling(answer_pong);
  co_await client.initialize();
  json result;
  try {
    result = co_await corio::wait_for(client.call_tool("ask"), 60s);
  } catch (const corio::TimeoutError&) {
    ADD_FAILURE() << "the call and the session wait for each other";
  }
  EXPECT_EQ(result["content"][0]["text"], "pong") << result.dump();
  co_await client.close();
  co_return !result.is_null();
}

Coro<void> over_stdio() {
  Harness h;
  corio::mcp::Server server("ask", "1");
  serve_ask(server);
  corio::Task<void> serving = corio::create_task(server.run(h.transport));
  StdioTransport client_side(h.from_server, h.to_server);
  const bool answered = co_await call_ask(client_side);
  h.to_server.close();
  if (!answered) serving.cancel();  // its reading waits for ever
  try {
    co_await serving;
  } catch (const corio::CancelledError&) {
  }
}

TEST(MaxInFlight, AnAnswerReachesTheCallThatAskedOverStdio) { corio_testing::run_vt(over_stdio()); }

Coro<void> over_http() {
  HttpFixture f;
  serve_ask(f.mcp);
  co_await f.start();
  corio::mcp::StreamableHttpClient transport(f.url());
  co_await call_ask(transport);
  co_await transport.close();
  co_await f.stop();
}

TEST(MaxInFlight, AnAnswerReachesTheCallThatAskedOverStreamableHttp) { corio_testing::run_vt(over_http()); }

}  // namespace
}  // namespace corio_mcp_test
