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
// The auth scenarios put the server behind OAuth: corio::mcp::OAuth runs
// the flow, and this program plays the user's browser in the interactive
// step (it follows the authorization URL to the redirect the test server
// answers with at once). Credentials registered beforehand, for the
// scenarios that have them, come in MCP_CONFORMANCE_CONTEXT.
//
// Usage: example_mcp_conformance_client URL
// Exit status 0 once every step succeeded; 1 with the reason on stderr.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

#include <corio/corio.hpp>
#include <corio/http/client.hpp>
#include <corio/mcp/auth.hpp>
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

// The user's browser: the authorization server redirects back at once.
Coro<std::string> open_in_browser(std::string authorization_url) {
  corio::http::ClientSession http;
  corio::http::RequestOptions opts;
  opts.allow_redirects = false;
  corio::http::ClientResponse r = co_await http.get(authorization_url, opts);
  const std::string location(r.headers().get_or("Location", ""));
  r.release();
  co_await http.close();
  if (location.empty()) throw std::runtime_error("the authorization server did not redirect");
  co_return location;
}

corio::mcp::OAuthOptions oauth_options(std::string_view scenario) {
  corio::mcp::OAuthOptions o;
  o.client_name = "corio-conformance-client";
  o.client_metadata_url = "https://conformance-test.local/client-metadata.json";
  o.authorize = open_in_browser;
  const char* raw = std::getenv("MCP_CONFORMANCE_CONTEXT");
  const json context = raw ? json::parse(raw, nullptr, false) : json();
  if (context.is_object() && context.contains("client_id")) {
    corio::mcp::OAuthClientInfo c;
    c.client_id = context.value("client_id", "");
    c.client_secret = context.value("client_secret", "");
    c.private_key_pem = context.value("private_key_pem", "");
    c.signing_algorithm = context.value("signing_algorithm", "ES256");
    o.client = c;
  }
  o.client_credentials = scenario.starts_with("auth/client-credentials");
  if (context.is_object() && context.contains("idp_id_token")) {
    o.enterprise = corio::mcp::EnterpriseIdentity{context.value("idp_token_endpoint", ""),
                                                  context.value("idp_client_id", ""),
                                                  context.value("idp_id_token", "")};
  }
  return o;
}

Coro<int> run_scenario(std::string url) {
  const char* env = std::getenv("MCP_CONFORMANCE_SCENARIO");
  const std::string scenario = env ? env : "";
  std::fprintf(stderr, "scenario %s against %s\n", scenario.c_str(), url.c_str());
  corio::mcp::OAuth oauth(oauth_options(scenario));
  corio::mcp::StreamableHttpClient transport(url);
  transport.set_authorization(&oauth);
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
