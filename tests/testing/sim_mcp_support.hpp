// What the simulation's MCP tests share: an MCP server served over
// Streamable HTTP on a simulated host.
#pragma once

#include <cstdint>
#include <string>

#include <corio/http.hpp>
#include <corio/mcp.hpp>

namespace sim_support {

// Serves `server` at http://10.0.0.1:port/mcp (the first host's address:
// not loopback, so the Host header names it), quietly, until cancelled.
inline corio::Coro<void> serve_mcp(corio::mcp::Server& server, std::uint16_t port) {
  corio::http::ServerOptions quiet;
  quiet.access_log = nullptr;
  corio::http::Server http(quiet);
  corio::mcp::StreamableHttpOptions options;
  options.allowed_hosts = {"10.0.0.1:" + std::to_string(port)};
  corio::mcp::StreamableHttp endpoint(server, options);
  endpoint.mount(http);
  co_await http.start("0.0.0.0", port);
  co_await http.serve_forever();
}

}  // namespace sim_support
