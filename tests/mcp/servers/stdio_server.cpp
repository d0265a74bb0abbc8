// An MCP stdio server for the stdio_client tests (tests/mcp/stdio_client_test.cpp),
// with tools to echo, read its environment, wait for ever, and exit mid-call;
// --linger (keeps running once stdin ends) and --ignore-sigterm let each step
// of the client's shutdown sequence be seen.
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <corio/corio.hpp>
#include <corio/mcp.hpp>

namespace {

using corio::Coro;
using corio::mcp::Context;
using corio::mcp::json;
using corio::mcp::ToolResult;

Coro<ToolResult> echo(const json& args, Context&) {
  co_return ToolResult::text(args.value("text", ""));
}

Coro<ToolResult> env(const json& args, Context&) {
  const char* value = std::getenv(args.value("name", "").c_str());
  co_return ToolResult::text(value ? value : "(unset)");
}

Coro<ToolResult> slow(const json&, Context&) {
  std::fprintf(stderr, "slow: started\n");  // the tests wait for this line
  std::fflush(stderr);
  co_await corio::sleep(std::chrono::hours(1));
  co_return ToolResult::text("never");
}

Coro<ToolResult> exit_now(const json& args, Context&) {
  std::_Exit(args.value("status", 3));  // mid-call: the client gets no answer
  co_return ToolResult::text("never");
}

Coro<int> serve(corio::mcp::Server& server, bool linger) {
  co_await server.run_stdio();
  if (linger) co_await corio::sleep(std::chrono::hours(1));
  co_return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool linger = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--linger") linger = true;
    if (arg == "--ignore-sigterm") std::signal(SIGTERM, SIG_IGN);
  }
  std::fprintf(stderr, "stdio server %d: started\n", static_cast<int>(::getpid()));
  std::fflush(stderr);
  corio::mcp::Server server("stdio-test", "1.0");
  const json any = {{"type", "object"}};
  server.add_tool("echo", "echoes text", any, echo);
  server.add_tool("env", "one environment variable", any, env);
  server.add_tool("slow", "waits for ever", any, slow);
  server.add_tool("exit", "exits mid-call", any, exit_now);
  return corio::run_main(serve(server, linger));
}
