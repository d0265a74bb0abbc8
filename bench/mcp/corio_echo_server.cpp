// bench/mcp's corio server: one trivial tool, "echo", over stdio, or over
// Streamable HTTP on 127.0.0.1:PORT/mcp with --http PORT; the same as
// ts_echo_server.mjs does with the official TypeScript SDK.
//
//   corio_mcp_echo_server [--http PORT [--max-sessions N] [--idle-timeout S]]
//
// --max-sessions (default the library's, 1000) and --idle-timeout (the HTTP
// keep-alive, seconds; default the library's) are for bench/idle, which holds
// thousands of sessions, each on its own kept-alive connection.
#include <chrono>
#include <cstdio>
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
  if (argc == 1) {
    corio::run(server.run_stdio());
    return 0;
  }
  int port = -1;
  corio::mcp::StreamableHttpOptions mcp_opts;
  corio::http::ServerOptions http_opts;
  http_opts.access_log = {};  // as the SDK's server: no line per request
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--http") {
      port = std::atoi(value);
    } else if (flag == "--max-sessions") {
      mcp_opts.max_sessions = std::strtoul(value, nullptr, 10);
    } else if (flag == "--idle-timeout") {
      http_opts.idle_timeout = std::chrono::seconds(std::atoi(value));
    } else {
      port = -1;
      break;
    }
  }
  if (port < 0 || argc % 2 == 0) {
    std::fprintf(stderr, "usage: %s [--http PORT [--max-sessions N] [--idle-timeout S]]\n", argv[0]);
    return 2;
  }
  corio::run(corio::mcp::serve_streamable_http(server, "127.0.0.1", static_cast<std::uint16_t>(port),
                                               mcp_opts, http_opts));
}
