// The example server (examples/mcp/nba_daily_brief.cpp) as a separate
// process, sent one message nested 100,000 deep over stdio and in one POST
// to /mcp: before the depth limit it died of a stack overflow (SIGSEGV) in
// a JSON copy; now it answers -32700 and goes on serving.
#include <corio/http/client.hpp>

#include "mcp/mcp_support.hpp"

namespace corio_mcp_test {
namespace {

// examples/mcp/CMakeLists.txt defines CORIO_EXAMPLE_NBA_SERVER when the
// examples are built (not in the tsan preset).
#ifdef CORIO_EXAMPLE_NBA_SERVER

std::string deep_objects(std::size_t depth) {
  std::string text;
  for (std::size_t i = 0; i < depth; ++i) text += "{\"a\":";
  return text + "1" + std::string(depth, '}');
}

// A tools/call whose arguments are nested `depth` deep.
std::string deep_call(std::size_t depth) {
  return R"({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "get_nba_news", "arguments": )" +
         deep_objects(depth) + "}}";
}

const std::string kInitialize =
    R"({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",)"
    R"( "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})";

corio::SubprocessOptions piped() {
  corio::SubprocessOptions opts;
  opts.in = corio::Redirect::pipe;
  opts.out = corio::Redirect::pipe;
  opts.err = corio::Redirect::pipe;
  return opts;
}

Coro<json> answer(corio::Process& p) {
  const std::string l = co_await corio::wait_for(p.out.readline(), 10s);
  EXPECT_TRUE(l.ends_with("\n")) << "no answer (did the server die?): " << l;
  co_return l.empty() ? json() : json::parse(l);
}

Coro<void> deep_over_stdio() {
  corio::Process p = co_await corio::create_subprocess_exec(CORIO_EXAMPLE_NBA_SERVER, {}, piped());
  p.in.write(kInitialize + "\n");
  EXPECT_TRUE((co_await answer(p)).contains("result"));
  p.in.write(std::string(100'000, '[') + std::string(100'000, ']') + "\n");
  EXPECT_EQ((co_await answer(p))["error"]["code"], code::parse_error);
  p.in.write(deep_call(100'000) + "\n");
  EXPECT_EQ((co_await answer(p))["error"]["code"], code::parse_error);
  p.in.write(R"({"jsonrpc": "2.0", "id": 3, "method": "ping"})" "\n");
  EXPECT_EQ((co_await answer(p))["id"], 3);
  p.in.close();
  co_await corio::wait_for(p.err.read(), 10s);
  EXPECT_EQ(co_await corio::wait_for(p.wait(), 10s), 0);
}

TEST(Example, ADeepMessageOverStdioIsAParseErrorAndTheServerLives) { run_test(deep_over_stdio()); }

// "nba-daily-brief: serving MCP on http://127.0.0.1:PORT/mcp" on stderr.
Coro<std::string> endpoint_of(corio::Process& p) {
  for (;;) {
    const std::string l = co_await corio::wait_for(p.err.readline(), 10s);
    if (l.empty()) throw std::runtime_error("the server ended before it said its port");
    if (const auto at = l.find("http://"); at != std::string::npos) co_return l.substr(at, l.find_last_not_of("\r\n") + 1 - at);
  }
}

Coro<corio::http::ClientResponse> post(corio::http::ClientSession& client, const std::string& url,
                                       std::string body) {
  corio::http::RequestOptions opts;
  opts.headers.add("Content-Type", "application/json");
  opts.headers.add("Accept", "application/json, text/event-stream");
  opts.data = std::move(body);
  co_return co_await client.post(url, std::move(opts));
}

Coro<void> deep_over_http() {
  std::vector<std::string> args = {"--http", "0"};  // named: g++ 12 and braced lists in co_await
  corio::Process p = co_await corio::create_subprocess_exec(CORIO_EXAMPLE_NBA_SERVER, std::move(args), piped());
  const std::string url = co_await endpoint_of(p);
  corio::http::ClientSession client;
  corio::http::ClientResponse deep = co_await post(client, url, deep_call(100'000));
  EXPECT_EQ(deep.status(), 400);
  const json refused = json::parse(co_await deep.text());
  EXPECT_EQ(refused["error"]["code"], code::parse_error) << refused.dump();
  corio::http::ClientResponse init = co_await post(client, url, kInitialize);
  EXPECT_EQ(init.status(), 200) << "the server lives on";
  co_await init.read();
  co_await client.close();
  p.terminate();
  co_await corio::wait_for(p.wait(), 10s);
}

TEST(Example, ADeepMessageInOnePostIsAParseErrorAndTheServerLives) { run_test(deep_over_http()); }

#else

TEST(Example, ADeepMessageOverStdioIsAParseErrorAndTheServerLives) {
  GTEST_SKIP() << "built without the examples";
}
TEST(Example, ADeepMessageInOnePostIsAParseErrorAndTheServerLives) {
  GTEST_SKIP() << "built without the examples";
}

#endif

}  // namespace
}  // namespace corio_mcp_test
