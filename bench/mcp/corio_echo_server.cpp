// bench/mcp's corio server: one trivial tool, "echo", over stdio, or over
// Streamable HTTP on 127.0.0.1:PORT/mcp with --http PORT; the same as
// ts_echo_server.mjs does with the official TypeScript SDK.
#include <cstdlib>
#include <string_view>

#include <corio/corio.hpp>
#include <corio/mcp/server.hpp>
#include <corio/mcp/streamable_http.hpp>

using corio::mcp::json;

int main(int argc, char** argv) {
  corio::mcp::Server server("corio-echo", "1.0.0");
  server.add_tool("echo", "Says it back",
                  json::parse(R"({"type": "object", "properties": {"text": {"type": "string"}},
                                  "required": ["text"]})"),
                  [](const json& args, corio::mcp::Context&) -> corio::Coro<corio::mcp::ToolResult> {
                    co_return corio::mcp::ToolResult::text(args["text"].get<std::string>());
                  });
  if (argc == 3 && std::string_view(argv[1]) == "--http") {
    const auto port = static_cast<std::uint16_t>(std::atoi(argv[2]));
    corio::http::ServerOptions quiet;
    quiet.access_log = {};  // as the SDK's server: no line per request
    corio::run(corio::mcp::serve_streamable_http(server, "127.0.0.1", port, {}, quiet));
  } else {
    corio::run(server.run_stdio());
  }
}
