// bench/mcp's corio server: one trivial tool, "echo", over stdio; the same
// as ts_echo_server.mjs does with the official TypeScript SDK.
#include <corio/corio.hpp>
#include <corio/mcp/server.hpp>

using corio::mcp::json;

int main() {
  corio::mcp::Server server("corio-echo", "1.0.0");
  server.add_tool("echo", "Says it back",
                  json::parse(R"({"type": "object", "properties": {"text": {"type": "string"}},
                                  "required": ["text"]})"),
                  [](const json& args, corio::mcp::Context&) -> corio::Coro<corio::mcp::ToolResult> {
                    co_return corio::mcp::ToolResult::text(args["text"].get<std::string>());
                  });
  corio::run(server.run_stdio());
}
