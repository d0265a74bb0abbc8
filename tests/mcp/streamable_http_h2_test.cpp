// MCP's Streamable HTTP over HTTP/2: corio's MCP client (StreamableHttpClient
// with ClientOptions::http2_prior_knowledge) against corio's MCP server, h2c
// on one connection: initialize, a tool call answered over SSE with a
// progress notification first, the standalone GET stream open beside it.
// The server's middleware records the version each request came on.
#include <corio/mcp/streamable_http_client.hpp>

#include "mcp/http_support.hpp"

namespace corio_mcp_test {
namespace {

using corio::http::Next;
using corio::http::Request;
using corio::http::Response;
using corio::mcp::Client;
using corio::mcp::Context;
using corio::mcp::ToolResult;

Coro<Response> record(std::vector<int>* majors, Request& req, Next next) {
  majors->push_back(req.version().major);
  co_return co_await next(req);
}

Coro<ToolResult> slow_add(const json& args, Context& ctx) {
  co_await ctx.report_progress(1, 2);
  co_return ToolResult::text(std::to_string(args["a"].get<int>() + args["b"].get<int>()));
}

// Built outside the coroutine: g++ 12 mishandles braced lists of strings
// inside one ("array used as initializer").
json add_args() { return json{{"a", 2}, {"b", 3}}; }
json object_schema() { return json{{"type", "object"}}; }

Coro<void> over_h2c() {
  HttpFixture f;
  std::vector<int> majors;
  f.http.use([&majors](Request& req, Next next) { return record(&majors, req, std::move(next)); });
  f.mcp.add_tool("add", "a + b", object_schema(), slow_add);
  co_await f.start();
  corio::http::ClientOptions h2c;
  h2c.http2_prior_knowledge = true;
  corio::mcp::StreamableHttpClient transport(f.url(), h2c);
  Client client(transport);
  co_await client.initialize();
  const json result = co_await client.call_tool("add", add_args());
  EXPECT_EQ(result["content"][0]["text"], "5") << result.dump();
  co_await client.close();
  co_await transport.close();
  co_await f.stop();
  EXPECT_FALSE(majors.empty());
  for (int major : majors) EXPECT_EQ(major, 2);
}

TEST(StreamableHttpH2, CorioClientAndServerOverH2c) { run_test(over_h2c()); }

}  // namespace
}  // namespace corio_mcp_test
