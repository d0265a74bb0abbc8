// The MCP client the official conformance suite drives
// (@modelcontextprotocol/conformance, `conformance client --command ...`),
// written on corio's public MCP client API only.
//
// The suite starts a test server per scenario and runs this program with
// the server's URL as its last argument and the scenario's name in
// MCP_CONFORMANCE_SCENARIO. Every scenario asks the same of a client:
// initialize, list the tools, call each one, end the session; what differs
// is what the server does meanwhile (asks for an elicitation, closes a
// stream to see it resumed), and this client answers as an application
// would: it accepts elicitations with no input of its own (so the
// schema's defaults apply, SEP-1034) and declines sampling it cannot do.
//
// Usage: example_mcp_conformance_client URL
// Exit status 0 once every step succeeded; 1 with the reason on stderr.
#include <cstdio>
#include <cstdlib>
#include <string>

#include <corio/corio.hpp>
#include <corio/mcp/client.hpp>
#include <corio/mcp/streamable_http_client.hpp>

using corio::Coro;
using corio::mcp::json;
using corio::mcp::RequestContext;

namespace {

// Arguments a tool's inputSchema accepts: each required property a value
// of its type (add_numbers gets numbers, a string parameter a string).
json arguments_for(const json& tool) {
  json args = json::object();
  const json schema = tool.value("inputSchema", json::object());
  const json properties = schema.value("properties", json::object());
  for (const json& name : schema.value("required", json::array())) {
    const std::string type = properties.value(name.get<std::string>(), json::object()).value("type", "string");
    if (type == "number" || type == "integer") {
      args[name.get<std::string>()] = 1;
    } else if (type == "boolean") {
      args[name.get<std::string>()] = true;
    } else {
      args[name.get<std::string>()] = "conformance";
    }
  }
  return args;
}

Coro<json> accept_with_defaults(const json&, const RequestContext&) {
  co_return json{{"action", "accept"}, {"content", json::object()}};
}

Coro<json> no_model(const json&, const RequestContext&) {
  throw corio::mcp::RpcError(-1, "this client has no model to sample");
  co_return nullptr;
}

Coro<int> run_scenario(std::string url) {
  const char* scenario = std::getenv("MCP_CONFORMANCE_SCENARIO");
  std::fprintf(stderr, "scenario %s against %s\n", scenario ? scenario : "(none)", url.c_str());
  corio::mcp::StreamableHttpClient transport(url);
  corio::mcp::Client client(transport, "corio-conformance-client", "1.0.0");
  client.on_elicitation(accept_with_defaults);
  client.on_sampling(no_model);
  co_await client.initialize();
  const json tools = co_await client.list_tools();
  for (const json& tool : tools) {
    const json result = co_await client.call_tool(tool.value("name", ""), arguments_for(tool));
    std::fprintf(stderr, "%s: %s\n", tool.value("name", "").c_str(), result.dump().c_str());
  }
  co_await client.close();
  co_await transport.close();
  co_return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s URL\n", argv[0]);
    return 2;
  }
  return corio::run_main(run_scenario(argv[argc - 1]));
}
